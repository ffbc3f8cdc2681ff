// commonkeep's Memory tab for Hermes' dashboard: the governed inbox and its decisions.
// Plain JavaScript on the host's plugin SDK (window.__HERMES_PLUGIN_SDK__: React, fetchJSON);
// no build step. React escapes every text it renders, so stored text never becomes markup.
(function () {
  "use strict";
  var SDK = window.__HERMES_PLUGIN_SDK__;
  if (!SDK || !window.__HERMES_PLUGINS__) return;
  var React = SDK.React, h = React.createElement, hooks = SDK.hooks, C = SDK.components || {};
  // the host's own Button and Input when it has them (they forward props), plain elements otherwise
  var Btn = C.Button || "button", Inp = C.Input || "input";
  var API = "/api/plugins/commonkeep-governance";
  var row = { display: "flex", gap: ".35rem", alignItems: "center", flexWrap: "wrap" };

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
      h("td", null, h("div", { style: row },
        h(Btn, { className: "ck-approve", size: "sm", disabled: !st.canWrite, onClick: function () {
          st.decide("approve", [c.id], editing[0] && text[0] !== c.text ? { edit: text[0] } : {});
        } }, editing[0] ? "Approve edit" : "Approve"),
        h(Btn, { className: "ck-edit-toggle", size: "sm", disabled: !st.canWrite, onClick: function () { editing[1](!editing[0]); } }, editing[0] ? "Cancel" : "Edit"),
        h(Inp, { className: "ck-reason", placeholder: "reason", value: reason[0], style: { width: "8rem" },
          onChange: function (e) { reason[1](e.target.value); } }),
        h(Btn, { className: "ck-reject", size: "sm", disabled: !st.canWrite, onClick: function () {
          st.decide("reject", [c.id], { reason: reason[0] });
        } }, "Reject"))));
  }

  var small = { fontSize: "11px", opacity: 0.7 };

  function Diff(props) {
    return h("pre", { className: "ck-diff", style: { fontSize: "11px", whiteSpace: "pre-wrap", margin: ".3rem 0" } },
      props.lines.map(function (l, i) {
        var color = l[0] === "add" ? "#4a4" : l[0] === "del" ? "#e55" : "inherit";
        return h("div", { key: i, style: { color: color } }, (l[0] === "add" ? "+ " : l[0] === "del" ? "- " : "  ") + l[1]);
      }));
  }

  function Patches(props) {
    var st = props.st, list = hooks.useState(null), chosen = hooks.useState({});
    var load = hooks.useCallback(function () {
      return SDK.fetchJSON(API + "/patches").then(function (d) {
        var sel = {};
        d.patches.forEach(function (p) { p.ops.forEach(function (o) { if (o.selected && !o.applied) sel[p.patch_id + "/" + o.op_id] = true; }); });
        chosen[1](sel); list[1](d.patches);
      }).catch(function (e) { st.fail(e); });
    }, []);
    hooks.useEffect(function () { load(); }, [load, props.version]);
    if (!list[0]) return h("div", null, "Loading…");
    if (!list[0].length) return h("div", { className: "ck-empty" }, "No patch is waiting.");
    return h("div", null, list[0].map(function (p) {
      var mine = p.ops.filter(function (o) { return chosen[0][p.patch_id + "/" + o.op_id]; }).map(function (o) { return o.op_id; });
      return h("div", { key: p.patch_id, className: "ck-patch", "data-id": p.patch_id, style: { marginBottom: "1rem" } },
        h("div", null, h("b", null, p.patch_id), " " + p.status + " · " + (p.generated_by || "") + " · " + (p.created_at || "")),
        p.ops.map(function (o) {
          var key = p.patch_id + "/" + o.op_id;
          return h("div", { key: key, className: "ck-op" },
            h("label", null, o.applied ? null : h("input", { type: "checkbox", className: "ck-op-sel", value: o.op_id, checked: !!chosen[0][key],
              onChange: function () { var c = Object.assign({}, chosen[0]); if (c[key]) delete c[key]; else c[key] = true; chosen[1](c); } }),
              " " + o.op_id + " " + o.op + " · risk " + o.risk + (o.applied ? " · applied" : "")),
            h(Diff, { lines: o.diff }));
        }),
        h(Btn, { className: "ck-apply", disabled: !st.canWrite || !mine.length, onClick: function () {
          st.run(post("/apply", { patch_id: p.patch_id, op_ids: mine }));
        } }, "Apply selected ops (" + mine.length + ")"));
    }));
  }

  function Records(props) {
    var st = props.st, data = hooks.useState(null), q = hooks.useState(""), ask = hooks.useState(null);
    var load = hooks.useCallback(function () {
      return SDK.fetchJSON(API + "/records?q=" + encodeURIComponent(q[0])).then(function (d) { data[1](d); }).catch(function (e) { st.fail(e); });
    }, [q[0]]);
    hooks.useEffect(function () { load(); }, [load, props.version]);
    function preview(id, purge) {
      SDK.fetchJSON(API + "/forget-preview?id=" + encodeURIComponent(id) + "&purge=" + (purge ? "true" : "false"))
        .then(function (d) { ask[1]({ id: id, purge: purge, lines: d.lines, reason: "user_requested" }); }).catch(function (e) { st.fail(e); });
    }
    var a = ask[0];
    return h("div", null,
      h(Inp, { className: "ck-search", placeholder: "search records", value: q[0], style: { width: "20rem" }, onChange: function (e) { q[1](e.target.value); } }),
      a ? h("div", { className: "ck-confirm", role: "alertdialog", style: { border: "1px solid #e55", padding: ".5rem", margin: ".5rem 0" } },
        h("b", null, "This cannot be undone. Forgetting " + a.id + (a.purge ? " with a privacy purge" : "") + " will:"),
        h("pre", { style: { whiteSpace: "pre-wrap", fontSize: "11px" } }, a.lines.join("\n")),
        h("div", { style: row }, h(Btn, { className: "ck-forget-confirm", disabled: !st.canWrite, onClick: function () {
          ask[1](null); st.run(post("/forget", { id: a.id, reason: a.reason, purge: a.purge }));
        } }, a.purge ? "Yes, forget and purge" : "Yes, forget"),
        h(Btn, { onClick: function () { ask[1](null); } }, "Cancel"))) : null,
      !data[0] ? h("div", null, "Loading…") : h("table", { className: "ck-records", style: { width: "100%", fontSize: ".85rem" } },
        h("tbody", null, data[0].records.map(function (r) {
          return h("tr", { key: r.id, className: "ck-record", "data-id": r.id },
            h("td", { style: small }, r.id + " · " + r.layer + (r.project ? " · " + r.project : "") + " · " + r.status),
            h("td", { style: { whiteSpace: "pre-wrap" } }, r.statement),
            h("td", null, h("div", { style: row },
              h(Btn, { className: "ck-forget", size: "sm", disabled: !st.canWrite, onClick: function () { preview(r.id, false); } }, "Forget…"),
              h(Btn, { className: "ck-purge", size: "sm", disabled: !st.canWrite, onClick: function () { preview(r.id, true); } }, "Forget and purge…"))));
        }))),
      data[0] ? h("div", { className: "ck-tombstones", style: small }, "Tombstones: " +
        data[0].tombstones.map(function (t) { return t.deleted_record_id + " (" + t.deletion_mode + ", " + t.deleted_at + ")"; }).join("; ")) : null);
  }

  function MemoryTab() {
    var data = hooks.useState(null), msg = hooks.useState(""), err = hooks.useState(""), page = hooks.useState(1);
    var selected = hooks.useState({}), batchReason = hooks.useState(""), stampRef = hooks.useRef(null);
    var view = hooks.useState("inbox"), version = hooks.useState(0);

    var load = hooks.useCallback(function () {
      return SDK.fetchJSON(API + "/inbox?page=" + page[0]).then(function (d) { data[1](d); stampRef.current = d.stamp; })
        .catch(function (e) { err[1](String(e && e.message || e)); });
    }, [page[0]]);
    hooks.useEffect(function () { load(); }, [load]);
    hooks.useEffect(function () {
      var t = setInterval(function () {
        SDK.fetchJSON(API + "/stamp").then(function (s) {
          if (stampRef.current && s.stamp !== stampRef.current) { stampRef.current = s.stamp; load(); version[1](function (v) { return v + 1; }); }
        }).catch(function () {});
      }, 2000);
      return function () { clearInterval(t); };
    }, [load]);

    var d = data[0];
    var st = {
      canWrite: !!(d && d.can_write), selected: selected[0],
      fail: function (e) { err[1](String(e && e.message || e)); },
      run: function (promise) {
        err[1](""); msg[1]("");
        return promise.then(function (r) { msg[1](r.message); selected[1]({}); version[1](function (v) { return v + 1; }); return load(); })
          .catch(function (e) { err[1](String(e && e.message || e)); });
      },
      toggle: function (id) { var s = Object.assign({}, selected[0]); if (s[id]) delete s[id]; else s[id] = true; selected[1](s); },
      decide: function (action, ids, extra) { return st.run(post("/decide", Object.assign({ action: action, ids: ids }, extra || {}))); }
    };
    var chosen = Object.keys(selected[0]);
    function tabButton(name, label) {
      return h(Btn, { className: "ck-view-" + name, onClick: function () { view[1](name); },
        style: { fontWeight: view[0] === name ? "bold" : "normal", textDecoration: view[0] === name ? "underline" : "none" } }, label);
    }
    var inbox = h("div", null,
      h("div", { style: Object.assign({ margin: ".5rem 0" }, row) },
        h(Btn, { className: "ck-batch-approve", disabled: !st.canWrite || !chosen.length,
          onClick: function () { st.decide("approve", chosen); } }, "Approve selected (" + chosen.length + ")"),
        h(Inp, { className: "ck-batch-reason", placeholder: "reason to reject", value: batchReason[0], style: { width: "16rem" },
          onChange: function (e) { batchReason[1](e.target.value); } }),
        h(Btn, { className: "ck-batch-reject", disabled: !st.canWrite || !chosen.length,
          onClick: function () { st.decide("reject", chosen, { reason: batchReason[0] }); } }, "Reject selected")),
      !d ? h("div", null, "Loading…") : h("table", { className: "ck-inbox", style: { width: "100%", fontSize: ".85rem" } },
        h("thead", null, h("tr", null, ["", "Candidate", "Trust", "Risk", "Evidence", ""].map(function (t, i) { return h("th", { key: i, style: { textAlign: "left" } }, t); }))),
        h("tbody", null, d.items.map(function (c) { return h(Row, { key: c.id, c: c, state: st }); }))),
      d && d.pages > 1 ? h("div", { style: { marginTop: ".5rem" } },
        h(Btn, { disabled: page[0] <= 1, onClick: function () { page[1](page[0] - 1); } }, "←"),
        " page " + d.page + " of " + d.pages + " ",
        h(Btn, { disabled: page[0] >= d.pages, onClick: function () { page[1](page[0] + 1); } }, "→")) : null);
    return h("div", { className: "ck-memory", style: { padding: "1rem" } },
      h("h2", { style: { fontSize: "1.2rem", marginBottom: ".5rem" } }, "Memory",
        d ? h("span", { className: "ck-total", style: { opacity: 0.7, fontSize: ".9rem" } }, " " + d.total + " pending · " + d.root) : null),
      h("div", { style: Object.assign({ marginBottom: ".5rem" }, row) }, tabButton("inbox", "Inbox"), tabButton("patches", "Patches"), tabButton("records", "Records")),
      d && !d.can_write ? h("div", { className: "ck-readonly", role: "alert", style: { color: "#c90" } }, "Read-only: " + d.read_only_reason) : null,
      msg[0] ? h("div", { className: "ck-msg", style: { color: "#4a4" } }, msg[0]) : null,
      err[0] ? h("div", { className: "ck-error", role: "alert", style: { color: "#e55", whiteSpace: "pre-wrap" } }, err[0]) : null,
      view[0] === "inbox" ? inbox : view[0] === "patches" ? h(Patches, { st: st, version: version[0] }) : h(Records, { st: st, version: version[0] }));
  }

  window.__HERMES_PLUGINS__.register("commonkeep-governance", MemoryTab);
})();
