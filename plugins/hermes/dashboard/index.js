// commonkeep's Memory tab for Hermes' dashboard: the governed inbox and its decisions.
// Plain JavaScript on the host's plugin SDK (window.__HERMES_PLUGIN_SDK__: React, fetchJSON);
// no build step. React escapes every text it renders, so stored text never becomes markup.
(function () {
  "use strict";
  var SDK = window.__HERMES_PLUGIN_SDK__;
  if (!SDK || !window.__HERMES_PLUGINS__) return;
  var React = SDK.React, h = React.createElement, hooks = SDK.hooks;
  var API = "/api/plugins/commonkeep-governance";

  function post(path, body) {
    return SDK.fetchJSON(API + path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body)
    });
  }

  function Row(props) {
    var c = props.c, st = props.state;
    var editing = hooks.useState(false), text = hooks.useState(c.text), reason = hooks.useState("");
    return h("tr", { className: "ck-row", "data-id": c.id },
      h("td", null, h("input", { type: "checkbox", className: "ck-sel", checked: !!st.selected[c.id],
        onChange: function () { st.toggle(c.id); }, "aria-label": "select " + c.id })),
      h("td", { style: { maxWidth: "34em" } },
        h("div", { className: "ck-id", style: { fontSize: "11px", opacity: 0.7 } }, c.id, c.agent ? " · " + c.agent : ""),
        editing[0]
          ? h("textarea", { className: "ck-edit", rows: 3, style: { width: "100%", color: "inherit", background: "transparent" },
              value: text[0], onChange: function (e) { text[1](e.target.value); } })
          : h("div", { className: "ck-text", style: { whiteSpace: "pre-wrap", wordBreak: "break-word" } }, c.text),
        c.matches.map(function (m) {
          return h("div", { key: m.id, style: { fontSize: "11px", opacity: 0.7 } }, (c.match || "match") + " " + m.id + ": " + m.statement);
        })),
      h("td", null, c.trust || "—"),
      h("td", null, h("b", null, c.risk || "…"), c.why.map(function (w, i) { return h("div", { key: i, style: { fontSize: "11px", opacity: 0.7 } }, w); })),
      h("td", null, c.evidence.map(function (e, i) { return h("div", { key: i, style: { fontSize: "11px" } }, e); })),
      h("td", { style: { whiteSpace: "nowrap" } },
        h("button", { className: "ck-approve", disabled: !st.canWrite, onClick: function () {
          st.decide("approve", [c.id], editing[0] && text[0] !== c.text ? { edit: text[0] } : {});
        } }, editing[0] ? "Approve edit" : "Approve"), " ",
        h("button", { className: "ck-edit-toggle", disabled: !st.canWrite, onClick: function () { editing[1](!editing[0]); } }, editing[0] ? "Cancel" : "Edit"), " ",
        h("input", { className: "ck-reason", placeholder: "reason", value: reason[0], size: 12,
          style: { color: "inherit", background: "transparent", border: "1px solid currentColor" },
          onChange: function (e) { reason[1](e.target.value); } }), " ",
        h("button", { className: "ck-reject", disabled: !st.canWrite, onClick: function () {
          st.decide("reject", [c.id], { reason: reason[0] });
        } }, "Reject")));
  }

  function MemoryTab() {
    var data = hooks.useState(null), msg = hooks.useState(""), err = hooks.useState(""), page = hooks.useState(1);
    var selected = hooks.useState({}), batchReason = hooks.useState(""), stampRef = hooks.useRef(null);

    var load = hooks.useCallback(function () {
      return SDK.fetchJSON(API + "/inbox?page=" + page[0]).then(function (d) { data[1](d); stampRef.current = d.stamp; })
        .catch(function (e) { err[1](String(e && e.message || e)); });
    }, [page[0]]);
    hooks.useEffect(function () { load(); }, [load]);
    hooks.useEffect(function () {
      var t = setInterval(function () {
        SDK.fetchJSON(API + "/stamp").then(function (s) { if (stampRef.current && s.stamp !== stampRef.current) load(); }).catch(function () {});
      }, 2000);
      return function () { clearInterval(t); };
    }, [load]);

    var d = data[0];
    var st = {
      canWrite: !!(d && d.can_write), selected: selected[0],
      toggle: function (id) { var s = Object.assign({}, selected[0]); if (s[id]) delete s[id]; else s[id] = true; selected[1](s); },
      decide: function (action, ids, extra) {
        err[1](""); msg[1]("");
        return post("/decide", Object.assign({ action: action, ids: ids }, extra || {}))
          .then(function (r) { msg[1](r.message); selected[1]({}); return load(); })
          .catch(function (e) { err[1](String(e && e.message || e)); });
      }
    };
    var chosen = Object.keys(selected[0]);
    return h("div", { className: "ck-memory", style: { padding: "1rem" } },
      h("h2", { style: { fontSize: "1.2rem", marginBottom: ".5rem" } }, "Memory inbox",
        d ? h("span", { className: "ck-total", style: { opacity: 0.7, fontSize: ".9rem" } }, " " + d.total + " pending · " + d.root) : null),
      d && !d.can_write ? h("div", { className: "ck-readonly", role: "alert", style: { color: "#c90" } }, "Read-only: " + d.read_only_reason) : null,
      msg[0] ? h("div", { className: "ck-msg", style: { color: "#4a4" } }, msg[0]) : null,
      err[0] ? h("div", { className: "ck-error", role: "alert", style: { color: "#e55", whiteSpace: "pre-wrap" } }, err[0]) : null,
      h("div", { style: { margin: ".5rem 0" } },
        h("button", { className: "ck-batch-approve", disabled: !st.canWrite || !chosen.length,
          onClick: function () { st.decide("approve", chosen); } }, "Approve selected (" + chosen.length + ")"), " ",
        h("input", { className: "ck-batch-reason", placeholder: "reason to reject", value: batchReason[0],
          style: { color: "inherit", background: "transparent", border: "1px solid currentColor" },
          onChange: function (e) { batchReason[1](e.target.value); } }), " ",
        h("button", { className: "ck-batch-reject", disabled: !st.canWrite || !chosen.length,
          onClick: function () { st.decide("reject", chosen, { reason: batchReason[0] }); } }, "Reject selected")),
      !d ? h("div", null, "Loading…") : h("table", { className: "ck-inbox", style: { width: "100%", fontSize: ".85rem" } },
        h("thead", null, h("tr", null, ["", "Candidate", "Trust", "Risk", "Evidence", ""].map(function (t, i) { return h("th", { key: i, style: { textAlign: "left" } }, t); }))),
        h("tbody", null, d.items.map(function (c) { return h(Row, { key: c.id, c: c, state: st }); }))),
      d && d.pages > 1 ? h("div", { style: { marginTop: ".5rem" } },
        h("button", { disabled: page[0] <= 1, onClick: function () { page[1](page[0] - 1); } }, "←"),
        " page " + d.page + " of " + d.pages + " ",
        h("button", { disabled: page[0] >= d.pages, onClick: function () { page[1](page[0] + 1); } }, "→")) : null);
  }

  window.__HERMES_PLUGINS__.register("commonkeep-governance", MemoryTab);
})();
