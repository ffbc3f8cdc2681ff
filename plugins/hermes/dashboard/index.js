// commonkeep's Memory tab for Hermes' dashboard: the governed inbox and its decisions.
// Plain JavaScript on the host's plugin SDK (window.__HERMES_PLUGIN_SDK__: React, fetchJSON);
// no build step. React escapes every text it renders, so stored text never becomes markup.
// Errors are shown where the action was taken (the row, the patch, the forget box), in words.
(function () {
  "use strict";
  var SDK = window.__HERMES_PLUGIN_SDK__;
  if (!SDK || !window.__HERMES_PLUGINS__) return;
  var React = SDK.React, h = React.createElement, hooks = SDK.hooks, C = SDK.components || {};
  // the host's own Button and Input when it has them (they forward props), plain elements otherwise
  var Btn = C.Button || "button", Inp = C.Input || "input";
  var API = "/api/plugins/commonkeep-governance";
  var wrap = { display: "flex", gap: ".35rem", alignItems: "center", flexWrap: "wrap" };
  var small = { fontSize: "11px", opacity: 0.75 };
  var bad = { color: "#e55", fontSize: ".85rem", whiteSpace: "pre-wrap" };
  var DUP = ["duplicate", "strengthens_existing"], CONFLICT = ["potential_conflict", "ambiguous", "supersedes_existing"];

  // "3 h ago" (the ISO time goes in the title attribute), as the review app and `commonkeep.store.backlog` say it
  function ago(iso) {
    var then = Date.parse(iso || "");
    if (isNaN(then)) return "";
    var secs = Math.max(0, Math.floor((Date.now() - then) / 1000)), hours = Math.floor(secs / 3600), days = Math.floor(secs / 86400);
    if (secs < 60) return "just now";
    var n = hours < 1 ? Math.floor(secs / 60) + " min" : hours < 48 ? hours + " h" : days < 14 ? days + " days"
      : days < 63 ? Math.floor(days / 7) + " weeks" : days < 365 ? Math.floor(days / 30) + " months"
      : Math.floor(days / 365) + (days < 730 ? " year" : " years");
    return n + " ago";
  }
  function Risk(props) {  // only medium and high stand out
    var r = props.risk || "…";
    return r === "medium" || r === "high" ? h("b", { className: "ck-risk-" + r, style: { color: r === "high" ? "#e55" : "#c90" } }, r)
      : h("span", { className: "ck-risk-" + r, style: { opacity: 0.75 } }, r);
  }

  function post(path, body) {
    return SDK.fetchJSON(API + path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body)
    });
  }

  // fetchJSON throws "400: {json}" or "403: text": say only what the server said, in its words
  function plain(e) {
    var text = String(e && e.message || e);
    var m = /^\s*(\d{3})\s*:\s*([\s\S]*)$/.exec(text);
    if (!m) return text;
    var body = m[2];
    try { var d = JSON.parse(body); body = d.detail || d.message || body; } catch (ignore) { /* plain text */ }
    if (typeof body !== "string") body = JSON.stringify(body);
    if (m[1] === "401") return "Hermes' session ended: reload the dashboard.";
    return body.split("\n  hint:")[0];
  }

  function Diff(props) {
    return h("div", { className: "ck-diff", style: { fontSize: "11px", fontFamily: "monospace", whiteSpace: "pre-wrap", wordBreak: "break-word", margin: ".3rem 0" } },
      props.lines.map(function (l, i) {
        var color = l[0] === "add" ? "#4a4" : l[0] === "del" ? "#e55" : "inherit";
        var mark = l[0] === "add" ? "+ " : l[0] === "del" ? "- " : l[0] === "note" ? "" : "  ";
        return h("div", { key: i, style: { color: color, fontStyle: l[0] === "note" ? "italic" : "normal" } }, mark + l[1]);
      }));
  }

  function WhatApproving(props) {
    var d = hooks.useState(null), err = hooks.useState("");
    hooks.useEffect(function () {
      SDK.fetchJSON(API + "/candidate?id=" + encodeURIComponent(props.id)).then(function (x) { d[1](x); })
        .catch(function (e) { err[1](plain(e)); });
    }, [props.id]);
    if (err[0]) return h("div", { className: "ck-row-error", style: bad }, err[0]);
    if (!d[0]) return h("div", { style: small }, "Loading…");
    return h("div", { className: "ck-what" },
      d[0].below_gate ? h("div", { style: small }, "Below the curator's gate: approving adds it as a plain record.") : null,
      d[0].ops.map(function (o, i) {
        return h("div", { key: i }, h("b", null, o.op), " " + (o.target_id || "") + " · risk " + o.risk + (o.reason ? " · " + o.reason : ""),
          h(Diff, { lines: o.diff }));
      }));
  }

  function Row(props) {
    var c = props.c, st = props.state;
    var editing = hooks.useState(false), text = hooks.useState(c.text), reason = hooks.useState("");
    var err = hooks.useState(""), asking = hooks.useState(false), what = hooks.useState(false);
    var dup = DUP.indexOf(c.kind) >= 0 && c.matches.length, conflict = CONFLICT.indexOf(c.kind) >= 0;
    function approve(choice) {
      if (c.asks_twice && !asking[0]) { asking[1](true); err[1](""); return; }
      asking[1](false);
      var extra = editing[0] && text[0] !== c.text ? { edit: text[0] } : {};
      st.decide("approve" + (choice ? ":" + choice : ""), [c.id], extra, err[1], true);
    }
    function reject() {
      if (!reason[0].trim()) { err[1]("To reject, say why in the reason box (for example: not durable). Nothing was rejected."); return; }
      st.decide("reject", [c.id], { reason: reason[0] }, err[1], true);
    }
    var label = asking[0] ? "Yes, approve" : editing[0] ? "Approve edit" : "Approve";
    var buttons = dup ? [
      h(Btn, { key: "a", className: "ck-approve", size: "sm", disabled: !st.canWrite, onClick: function () { approve("reinforce"); } },
        asking[0] ? "Yes, keep and reinforce" : "Keep " + c.matches[0].id + ", reinforce it"),
      h(Btn, { key: "r", className: "ck-replace", size: "sm", disabled: !st.canWrite, onClick: function () { approve("replace"); } }, "Replace it")
    ] : conflict ? [
      h(Btn, { key: "a", className: "ck-approve", size: "sm", disabled: !st.canWrite, onClick: function () { approve("contest"); } },
        asking[0] ? "Yes, keep both" : "Keep both, contested"),
      h(Btn, { key: "r", className: "ck-replace", size: "sm", disabled: !st.canWrite, onClick: function () { approve("replace"); } }, "Replace the existing record")
    ] : [h(Btn, { key: "a", className: "ck-approve", size: "sm", disabled: !st.canWrite, onClick: function () { approve(""); } }, label)];
    return h("div", { className: "ck-row", "data-id": c.id, role: "row",
        style: { display: "flex", flexWrap: "wrap", gap: ".4rem 1rem", padding: ".5rem 0", borderBottom: "1px solid rgba(128,128,128,.3)",
                 borderLeft: c.risk === "high" ? "3px solid #e55" : "3px solid transparent", paddingLeft: ".4rem" } },
      h("div", { style: { flex: "0 0 auto" } }, h("input", { type: "checkbox", className: "ck-sel", checked: !!st.selected[c.id],
        onChange: function () { st.toggle(c.id); }, "aria-label": "select " + c.id })),
      h("div", { style: { flex: "1 1 18rem", minWidth: 0 } },
        h("div", { className: "ck-id", style: small }, c.id + (c.agent ? " · " + c.agent : "") + (c.session ? " · " + c.session : "") +
          (c.created_at ? " · " : ""), c.created_at ? h("time", { dateTime: c.created_at, title: c.created_at }, ago(c.created_at)) : null),
        c.secrets_removed.length ? h("span", { className: "ck-secret", title: c.secrets_removed.join(", "),
          style: { fontSize: "11px", border: "1px solid #c90", color: "#c90", borderRadius: "9px", padding: "0 .4em" } }, "secret removed") : null,
        editing[0]
          ? h("textarea", { className: "ck-edit", rows: 3, style: { width: "100%", color: "inherit", background: "transparent" },
              value: text[0], onChange: function (e) { text[1](e.target.value); } })
          : h("div", { className: "ck-text", style: { whiteSpace: "pre-wrap", wordBreak: "break-word" } }, c.text),
        c.match ? h("div", { style: small }, c.match) : null,
        c.matches.map(function (m) { return h("div", { key: m.id, style: small }, m.id + ": " + m.statement); }),
        h("a", { href: "#", className: "ck-what-toggle", style: { fontSize: "11px" },
          onClick: function (e) { e.preventDefault(); what[1](!what[0]); } }, what[0] ? "hide what approving does" : "what approving does"),
        what[0] ? h(WhatApproving, { id: c.id }) : null),
      h("div", { style: { flex: "0 1 12rem", minWidth: 0, fontSize: ".85rem" } },
        h("div", null, (c.trust || "—")),
        h("div", null, h(Risk, { risk: c.risk })),
        c.why.map(function (w, i) { return h("div", { key: i, style: small }, w); }),
        c.evidence.map(function (e, i) { return h("div", { key: "e" + i, style: small }, e); })),
      h("div", { style: { flex: "1 1 16rem", minWidth: 0 } },
        asking[0] ? h("div", { className: "ck-ask", style: { color: "#c90", fontSize: ".85rem" } }, "Approving asks once more: " + c.asks_twice + ".") : null,
        h("div", { style: wrap }, buttons,
          h(Btn, { className: "ck-edit-toggle", size: "sm", disabled: !st.canWrite, onClick: function () { editing[1](!editing[0]); } }, editing[0] ? "Cancel edit" : "Edit")),
        h("div", { style: Object.assign({ marginTop: ".3rem" }, wrap) },
          h(Inp, { className: "ck-reason", placeholder: "reason to reject", value: reason[0], style: { width: "10rem", maxWidth: "100%" },
            onChange: function (e) { reason[1](e.target.value); },
            // Enter rejects with the reason typed; with none it says why nothing happened (never approves)
            onKeyDown: function (e) { if (e.key === "Enter") { e.preventDefault(); reject(); } } }),
          h(Btn, { className: "ck-reject", size: "sm", disabled: !st.canWrite, onClick: reject }, "Reject")),
        err[0] ? h("div", { className: "ck-row-error", role: "alert", style: bad }, err[0]) : null));
  }

  function Patches(props) {
    var st = props.st, list = hooks.useState(null), chosen = hooks.useState({}), errs = hooks.useState({}), loadErr = hooks.useState("");
    var load = hooks.useCallback(function () {
      return SDK.fetchJSON(API + "/patches").then(function (d) {
        var sel = {};
        d.patches.forEach(function (p) { p.ops.forEach(function (o) { if (o.selected && !o.applied) sel[p.patch_id + "/" + o.op_id] = true; }); });
        chosen[1](sel); list[1](d.patches);
      }).catch(function (e) { loadErr[1](plain(e)); });
    }, []);
    hooks.useEffect(function () { load(); }, [load, props.version]);
    if (loadErr[0]) return h("div", { className: "ck-row-error", style: bad }, loadErr[0]);
    if (!list[0]) return h("div", null, "Loading…");
    if (!list[0].length) return h("div", { className: "ck-empty" }, "No patch is waiting.");
    return h("div", null, list[0].map(function (p) {
      var mine = p.ops.filter(function (o) { return chosen[0][p.patch_id + "/" + o.op_id]; }).map(function (o) { return o.op_id; });
      function setErr(text) { var x = Object.assign({}, errs[0]); x[p.patch_id] = text; errs[1](x); }
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
          st.run(post("/apply", { patch_id: p.patch_id, op_ids: mine }), setErr);
        } }, "Apply selected ops (" + mine.length + ")"),
        errs[0][p.patch_id] ? h("div", { className: "ck-row-error", role: "alert", style: bad }, errs[0][p.patch_id]) : null);
    }));
  }

  function Records(props) {
    var st = props.st, data = hooks.useState(null), q = hooks.useState(""), ask = hooks.useState(null), err = hooks.useState("");
    var load = hooks.useCallback(function () {
      return SDK.fetchJSON(API + "/records?q=" + encodeURIComponent(q[0])).then(function (d) { data[1](d); }).catch(function (e) { err[1](plain(e)); });
    }, [q[0]]);
    hooks.useEffect(function () { load(); }, [load, props.version]);
    function preview(id, purge) {
      err[1]("");
      SDK.fetchJSON(API + "/forget-preview?id=" + encodeURIComponent(id) + "&purge=" + (purge ? "true" : "false"))
        .then(function (d) { ask[1]({ id: id, purge: purge, lines: d.lines, reasons: d.reasons, reason: "", err: "" }); })
        .catch(function (e) { err[1](plain(e)); });
    }
    var a = ask[0];
    function setAsk(change) { ask[1](Object.assign({}, a, change)); }
    return h("div", null,
      h(Inp, { className: "ck-search", placeholder: "search records", value: q[0], style: { width: "20rem", maxWidth: "100%" }, onChange: function (e) { q[1](e.target.value); } }),
      err[0] ? h("div", { className: "ck-row-error", role: "alert", style: bad }, err[0]) : null,
      a ? h("div", { className: "ck-confirm", role: "alertdialog", style: { border: "1px solid #e55", padding: ".5rem", margin: ".5rem 0" } },
        h("b", null, "This cannot be undone. Forgetting " + a.id + (a.purge ? " with a privacy purge" : "") + " will:"),
        h("pre", { style: { whiteSpace: "pre-wrap", fontSize: "11px" } }, a.lines.join("\n")),
        h("label", { style: wrap }, "Why is it forgotten? ",
          h("select", { className: "ck-forget-reason", value: a.reason, style: { color: "inherit", background: "transparent" },
            onChange: function (e) { setAsk({ reason: e.target.value, err: "" }); } },
            h("option", { value: "" }, "choose a reason"),
            a.reasons.map(function (r) { return h("option", { key: r, value: r }, r.replace(/_/g, " ")); }))),
        h("div", { style: wrap }, h(Btn, { className: "ck-forget-confirm", disabled: !st.canWrite, onClick: function () {
          if (!a.reason) { setAsk({ err: "Choose why it is forgotten first; nothing was forgotten." }); return; }
          st.run(post("/forget", { id: a.id, reason: a.reason, purge: a.purge }), function (text) { setAsk({ err: text }); })
            .then(function (ok) { if (ok) ask[1](null); });
        } }, a.purge ? "Yes, forget and purge" : "Yes, forget"),
        h(Btn, { className: "ck-forget-cancel", onClick: function () { ask[1](null); } }, "Cancel")),
        a.err ? h("div", { className: "ck-row-error", role: "alert", style: bad }, a.err) : null) : null,
      !data[0] ? h("div", null, "Loading…") : h("div", { className: "ck-records" }, data[0].records.map(function (r) {
        return h("div", { key: r.id, className: "ck-record", "data-id": r.id,
            style: { display: "flex", flexWrap: "wrap", gap: ".3rem 1rem", padding: ".4rem 0", borderBottom: "1px solid rgba(128,128,128,.3)" } },
          h("div", { style: Object.assign({ flex: "0 1 14rem", minWidth: 0 }, small) }, r.id + " · " + r.layer + (r.project ? " · " + r.project : "") + " · " + r.status),
          h("div", { style: { flex: "1 1 18rem", minWidth: 0, whiteSpace: "pre-wrap", wordBreak: "break-word" } }, r.statement),
          h("div", { style: wrap },
            h(Btn, { className: "ck-forget", size: "sm", disabled: !st.canWrite, onClick: function () { preview(r.id, false); } }, "Forget…"),
            h(Btn, { className: "ck-purge", size: "sm", disabled: !st.canWrite, onClick: function () { preview(r.id, true); } }, "Forget and purge…")));
      })),
      data[0] ? h("div", { className: "ck-tombstones", style: small }, "Tombstones: " +
        data[0].tombstones.map(function (t) { return t.deleted_record_id + " (" + t.deletion_mode + ", " + (t.reason || "no reason") + ", " + t.deleted_at + ")"; }).join("; ")) : null);
  }

  function Select(props) {
    return h("select", { className: props.className, value: props.value, "aria-label": props.label,
        style: { color: "inherit", background: "transparent", maxWidth: "100%" }, onChange: function (e) { props.onChange(e.target.value); } },
      h("option", { value: "" }, props.label),
      props.values.map(function (v) { return h("option", { key: v[0], value: v[0] }, v[0] + (v[1] !== undefined ? " (" + v[1] + ")" : "")); }));
  }

  function MemoryTab() {
    var data = hooks.useState(null), msg = hooks.useState(""), err = hooks.useState(""), page = hooks.useState(1);
    var selected = hooks.useState({}), batchReason = hooks.useState(""), batchErr = hooks.useState(""), stampRef = hooks.useRef(null);
    var note = hooks.useState(null);  // a row's decision said where the row stood: {after: the id above it ("" at the top), text}
    var view = hooks.useState("inbox"), version = hooks.useState(0);
    var filt = hooks.useState({ q: "", risk: "", agent: "", session: "", sort: "oldest" }), typed = hooks.useState("");
    var f = filt[0];
    function setF(change) { filt[1](Object.assign({}, f, change)); page[1](1); }

    var load = hooks.useCallback(function () {
      var qs = "page=" + page[0] + Object.keys(f).map(function (k) { return "&" + k + "=" + encodeURIComponent(f[k]); }).join("");
      return SDK.fetchJSON(API + "/inbox?" + qs).then(function (d) { data[1](d); stampRef.current = d.stamp; err[1](""); })
        .catch(function (e) { err[1](plain(e)); });
    }, [page[0], f.q, f.risk, f.agent, f.session, f.sort]);
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
      // run an action; its error goes to `where` (the row, the patch, the box acted in); resolves true when done
      run: function (promise, where, at) {
        var say = where || err[1];
        say(""); msg[1](""); note[1](null);
        return promise.then(function (r) {
          if (at) note[1]({ after: at.after, text: r.message }); else msg[1](r.message);
          selected[1]({}); version[1](function (v) { return v + 1; }); load(); return true;
        }).catch(function (e) { say(plain(e)); return false; });
      },
      toggle: function (id) { var s = Object.assign({}, selected[0]); if (s[id]) delete s[id]; else s[id] = true; selected[1](s); },
      // atRow: the outcome is said in the list where the decided row stood, not at the top of the tab
      decide: function (action, ids, extra, where, atRow) {
        var at = null;
        if (atRow && d) {
          var i = d.items.map(function (c) { return c.id; }).indexOf(ids[0]);
          at = { after: i > 0 ? d.items[i - 1].id : "" };
        }
        return st.run(post("/decide", Object.assign({ action: action, ids: ids }, extra || {})), where, at);
      }
    };
    var chosen = Object.keys(selected[0]);
    function batchReject() {
      if (!chosen.length) { batchErr[1]("Nothing is selected: tick the candidates to reject first. Nothing was rejected."); return; }
      if (!batchReason[0].trim()) { batchErr[1]("To reject, say why in the reason box (for example: not durable). Nothing was rejected."); return; }
      st.decide("reject", chosen, { reason: batchReason[0] }, batchErr[1]);
    }
    function rowsWithNote(items) {
      var n = note[0], out = [], placed = false;
      var said = n ? h("div", { key: "ck-note", className: "ck-msg ck-row-done", role: "status",
        style: { color: "#4a4", padding: ".4rem", borderBottom: "1px solid rgba(128,128,128,.3)" } }, n.text) : null;
      if (n && n.after === "") { out.push(said); placed = true; }
      items.forEach(function (c) {
        out.push(h(Row, { key: c.id, c: c, state: st }));
        if (n && !placed && n.after === c.id) { out.push(said); placed = true; }
      });
      if (n && !placed) out.unshift(said);
      return out;
    }
    function tabButton(name, label) {
      return h(Btn, { className: "ck-view-" + name, onClick: function () { view[1](name); },
        style: { fontWeight: view[0] === name ? "bold" : "normal", textDecoration: view[0] === name ? "underline" : "none" } }, label);
    }
    var facets = d ? d.facets : { agents: [], risks: [], sessions: [] };
    var inbox = h("div", null,
      h("div", { className: "ck-filters", style: Object.assign({ margin: ".5rem 0" }, wrap) },
        h(Inp, { className: "ck-search", placeholder: "search text, id, tag (Enter)", value: typed[0], style: { width: "16rem", maxWidth: "100%" },
          onChange: function (e) { typed[1](e.target.value); },
          onKeyDown: function (e) { if (e.key === "Enter") { e.preventDefault(); setF({ q: typed[0] }); } } }),
        h(Select, { className: "ck-risk", label: "any risk", value: f.risk, values: facets.risks, onChange: function (v) { setF({ risk: v }); } }),
        h(Select, { className: "ck-agent", label: "any agent", value: f.agent, values: facets.agents, onChange: function (v) { setF({ agent: v }); } }),
        h(Select, { className: "ck-session", label: "any session", value: f.session, values: facets.sessions, onChange: function (v) { setF({ session: v }); } }),
        h("select", { className: "ck-sort", value: f.sort, "aria-label": "sort", style: { color: "inherit", background: "transparent" },
          onChange: function (e) { setF({ sort: e.target.value }); } },
          Object.keys(d ? d.sorts : { oldest: "oldest first" }).map(function (k) { return h("option", { key: k, value: k }, (d ? d.sorts : {})[k] || k); }))),
      h("div", { style: Object.assign({ margin: ".5rem 0" }, wrap) },
        h("label", { style: { fontSize: ".85rem" } }, h("input", { type: "checkbox", className: "ck-select-page",
          checked: !!(d && d.items.length && d.items.every(function (c) { return selected[0][c.id]; })),
          onChange: function (e) { var s = {}; if (e.target.checked && d) d.items.forEach(function (c) { s[c.id] = true; }); selected[1](s); } }), " all on this page"),
        h(Btn, { className: "ck-batch-approve", disabled: !st.canWrite || !chosen.length,
          onClick: function () { st.decide("approve", chosen, {}, batchErr[1]); } }, "Approve selected (" + chosen.length + ")"),
        h(Inp, { className: "ck-batch-reason", placeholder: "reason to reject", value: batchReason[0], style: { width: "14rem", maxWidth: "100%" },
          onChange: function (e) { batchReason[1](e.target.value); },
          onKeyDown: function (e) { if (e.key === "Enter") { e.preventDefault(); batchReject(); } } }),
        h(Btn, { className: "ck-batch-reject", disabled: !st.canWrite || !chosen.length, onClick: batchReject }, "Reject selected")),
      batchErr[0] ? h("div", { className: "ck-batch-error", role: "alert", style: bad }, batchErr[0]) : null,
      h("div", { style: small }, "Approving writes the statement into memory as a record (or reinforces, replaces or contests the one it repeats or contradicts, as its buttons say); open “what approving does” on a row to see the change."),
      !d ? h("div", null, "Loading…") : h("div", { className: "ck-inbox", role: "table", style: { fontSize: ".9rem" } },
        d.items.length || note[0] ? rowsWithNote(d.items)
          : h("div", { className: "ck-empty", style: small }, "Nothing here.")),
      d && d.pages > 1 ? h("div", { style: { marginTop: ".5rem" } },
        h(Btn, { disabled: page[0] <= 1, onClick: function () { page[1](page[0] - 1); } }, "←"),
        " page " + d.page + " of " + d.pages + " ",
        h(Btn, { disabled: page[0] >= d.pages, onClick: function () { page[1](page[0] + 1); } }, "→")) : null);
    return h("div", { className: "ck-memory", style: { padding: "1rem", maxWidth: "100%", overflowWrap: "anywhere" } },
      h("h2", { style: { fontSize: "1.2rem", marginBottom: ".5rem" } }, "Memory",
        d ? h("span", { className: "ck-total", style: { opacity: 0.7, fontSize: ".9rem" } }, " " + d.total + " pending · " + d.root) : null),
      h("div", { style: Object.assign({ marginBottom: ".5rem" }, wrap) }, tabButton("inbox", "Inbox"), tabButton("patches", "Patches"), tabButton("records", "Records")),
      d && !d.can_write ? h("div", { className: "ck-readonly", role: "alert", style: { color: "#c90" } }, "Read-only: " + d.read_only_reason) : null,
      msg[0] ? h("div", { className: "ck-msg", role: "status", style: { color: "#4a4" } }, msg[0]) : null,
      err[0] ? h("div", { className: "ck-error", role: "alert", style: bad }, err[0]) : null,
      view[0] === "inbox" ? inbox : view[0] === "patches" ? h(Patches, { st: st, version: version[0] }) : h(Records, { st: st, version: version[0] }));
  }

  window.__HERMES_PLUGINS__.register("commonkeep-governance", MemoryTab);
})();
