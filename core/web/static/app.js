// commonkeep serve: live refresh when the store changes, row selection and keyboard keys.
// No inline scripts (the Content-Security-Policy allows scripts from this server only).
// Keys never surprise: Enter in a text box never approves (the decision forms have no default
// button, and Enter in a reason box means Reject); Escape leaves a text box; ? lists the keys.
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
  var live = document.getElementById("live");
  // the store's stamp when the page was rendered: a change written between the render and the
  // first poll is noticed too (issue 40: a candidate another agent wrote then never appeared)
  var stamp = (document.querySelector('meta[name="stamp"]') || {}).content || null;
  // a checkbox, a radio or a button takes no text: the keys still work when one has the focus
  // (a row ticked with the mouse keeps it; issue 36)
  var NOT_TEXT = { checkbox: 1, radio: 1, button: 1, submit: 1, reset: 1, image: 1, file: 1, range: 1, color: 1 };

  function typing(el) {
    if (!el) return false;
    if (el.tagName === "INPUT") return !NOT_TEXT[(el.type || "text").toLowerCase()];
    return el.tagName === "TEXTAREA" || el.tagName === "SELECT" || !!el.isContentEditable;
  }
  function selected() { return document.querySelectorAll("input.sel:checked").length; }
  function allBox() { return document.getElementById("select-all"); }

  function busy() {
    var a = document.activeElement;
    if (typing(a) && a.value) return true;
    return selected() > 0 || (allBox() && allBox().checked);
  }

  function swap() {
    fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.getElementById("live");
      var current = document.getElementById("live");
      if (fresh && current) { current.replaceWith(document.importNode(fresh, true)); bind(); }
      ["h1", "#facets"].forEach(function (sel) {
        var a = doc.querySelector(sel), b = document.querySelector(sel);
        if (a && b) b.innerHTML = a.innerHTML;
      });
      document.body.setAttribute("data-refreshed", String(Date.now()));
    });
  }

  // the tab's title starts with how many candidates wait: "(12) Inbox · commonkeep review"
  function title(n) {
    if (typeof n !== "number") return;
    var rest = document.title.replace(/^\(\d+\) /, "");
    document.title = (n > 0 ? "(" + n + ") " : "") + rest;
  }

  function poll() {
    fetch("/api/stamp", { credentials: "same-origin", headers: { "X-CSRF-Token": csrf } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d) return;
        if (stamp !== null && d.stamp !== stamp) {
          if (live && !busy()) swap();
          else document.getElementById("changed").hidden = false;
        }
        stamp = d.stamp;
        title(d.waiting);
      }).catch(function () {});
  }

  function rows() { return Array.prototype.slice.call(document.querySelectorAll("tr.cand")); }
  var cursor = -1;
  function mark(r) {
    r.forEach(function (x) { x.classList.remove("cursor"); });
    r[cursor].classList.add("cursor");
  }
  function focusRow(i) {
    var r = rows();
    if (!r.length) return;
    cursor = Math.max(0, Math.min(r.length - 1, i));
    mark(r);
    r[cursor].focus();
  }
  // a row ticked with the mouse becomes the cursor's row: j/k go on from it, x toggles it
  function follow(box) {
    var r = rows(), at = r.indexOf(box.closest("tr.cand"));
    if (at >= 0) { cursor = at; mark(r); }
  }
  function count() {
    var n = document.getElementById("nsel"), all = allBox();
    if (all && all.checked) {
      document.querySelectorAll("input.sel").forEach(function (b) { b.checked = true; });
      if (n) n.textContent = (all.parentNode.textContent.match(/\d+/) || ["all"])[0];
    } else if (n) n.textContent = String(selected());
  }
  function bind() {
    document.querySelectorAll("input.sel").forEach(function (b) {
      b.addEventListener("change", function () { var all = allBox(); if (all && !b.checked) all.checked = false; follow(b); count(); });
    });
    var all = allBox();
    if (all) all.addEventListener("change", function () {
      if (!all.checked) document.querySelectorAll("input.sel").forEach(function (b) { b.checked = false; });
      count();
    });
    count();
  }
  function say(text) {
    var m = document.getElementById("hint");
    if (!m) {
      m = document.createElement("div");
      m.id = "hint"; m.className = "banner changed"; m.setAttribute("role", "status");
      document.querySelector("main").prepend(m);
    }
    m.textContent = text;
  }
  function click(id) { var b = document.getElementById(id); if (b && !b.disabled) { b.click(); return true; } return false; }
  function toggleKeys(show) {
    var k = document.getElementById("keys");
    if (k) k.hidden = show === undefined ? !k.hidden : !show;
  }

  // Enter in a text box of a decision form: never the form's submission (no default button either);
  // in a reason box with a reason typed, it is that form's Reject.
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    // (a checkbox too: Chromium submits a form on Enter in a checkbox, with its first enabled button)
    if (e.key !== "Enter" || !(typing(t) || t.tagName === "INPUT") || t.tagName === "TEXTAREA" || t.tagName === "SELECT") return;
    var form = t.form;
    if (!form || form.method.toLowerCase() !== "post") return;
    e.preventDefault();
    if (t.name === "reason" && t.value.trim()) {
      var reject = form.querySelector('button[value="reject"]');
      if (reject && !reject.disabled) reject.click();
    }
  }, true);

  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.key === "Escape") {
      toggleKeys(false);
      if (typing(t)) { t.blur(); e.preventDefault(); }
      return;
    }
    if (typing(t)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var r = rows();
    if (e.key === "?") { toggleKeys(); e.preventDefault(); }
    else if (e.key === "/") { var s = document.getElementById("search"); if (s) { s.focus(); e.preventDefault(); } }
    else if (e.key === "j") focusRow(cursor + 1);
    else if (e.key === "k") focusRow(cursor - 1);
    else if (e.key === "x" && r[cursor]) { var c = r[cursor].querySelector("input.sel"); if (c) { c.checked = !c.checked; count(); } }
    else if (e.key === "*") { var all = allBox(); if (all) { all.checked = !all.checked; all.dispatchEvent(new Event("change")); } }
    else if ((e.key === "o" || e.key === "Enter") && r[cursor] && t === r[cursor]) {
      var open = r[cursor].querySelector("a.open"); if (open) { open.click(); e.preventDefault(); }
    }
    else if (e.key === "e") {
      var ed = document.getElementById("edit");
      if (ed) { ed.focus(); ed.setSelectionRange(ed.value.length, ed.value.length); e.preventDefault(); }
      else if (r[cursor]) { var a = r[cursor].querySelector("a.open"); if (a) a.click(); }
    }
    else if (e.key === "a") {
      if (document.getElementById("decide")) { click("approve") || click("ratify"); return; }
      if (!document.getElementById("batch-approve")) return;
      if (!selected() && !(allBox() && allBox().checked)) {
        var cb = r[cursor] ? r[cursor].querySelector("input.sel") : null;
        if (!cb) { say("Nothing is selected: move with j/k and select with x (or * for all), then press a."); return; }
        cb.checked = true; count();
      }
      click("batch-approve");
    }
    else if (e.key === "r") {
      var f = document.getElementById("reason") || document.getElementById("batch-reason");
      if (f) { f.focus(); e.preventDefault(); }
    }
    else if (e.key === "u") click("undo");
  });

  bind();
  poll();
  setInterval(poll, 1500);
})();
