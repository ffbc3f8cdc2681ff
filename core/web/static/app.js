// commonkeep serve: live refresh when the store changes, row selection and keyboard shortcuts.
// No inline scripts (the Content-Security-Policy allows scripts from this server only).
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
  var live = document.getElementById("live");
  var stamp = null;

  function busy() {
    var a = document.activeElement;
    if (a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT") && a.value) return true;
    return document.querySelectorAll("input.sel:checked").length > 0;
  }

  function swap() {
    fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.getElementById("live");
      var current = document.getElementById("live");
      if (fresh && current) { current.replaceWith(document.importNode(fresh, true)); bind(); }
      var h1 = doc.querySelector("h1"), mine = document.querySelector("h1");
      if (h1 && mine) mine.innerHTML = h1.innerHTML;
      document.body.setAttribute("data-refreshed", String(Date.now()));
    });
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
      }).catch(function () {});
  }

  function rows() { return Array.prototype.slice.call(document.querySelectorAll("tr.cand")); }
  var cursor = -1;
  function focusRow(i) {
    var r = rows();
    if (!r.length) return;
    cursor = Math.max(0, Math.min(r.length - 1, i));
    r.forEach(function (x) { x.classList.remove("cursor"); });
    r[cursor].classList.add("cursor");
    r[cursor].focus();
  }
  function count() {
    var n = document.getElementById("nsel");
    if (n) n.textContent = String(document.querySelectorAll("input.sel:checked").length);
  }
  function bind() {
    document.querySelectorAll("input.sel").forEach(function (b) { b.addEventListener("change", count); });
    count();
  }

  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var r = rows(), click = function (id) { var b = document.getElementById(id); if (b && !b.disabled) b.click(); };
    if (e.key === "/") { var s = document.getElementById("search"); if (s) { s.focus(); e.preventDefault(); } }
    else if (e.key === "j") focusRow(cursor + 1);
    else if (e.key === "k") focusRow(cursor - 1);
    else if (e.key === "x" && r[cursor]) { var c = r[cursor].querySelector("input.sel"); if (c) { c.checked = !c.checked; count(); } }
    else if (e.key === "e") {
      var ed = document.getElementById("edit");
      if (ed) { ed.focus(); e.preventDefault(); }
      else if (r[cursor]) { var a = r[cursor].querySelector("a.open"); if (a) a.click(); }
    }
    else if (e.key === "a") {
      if (document.getElementById("approve")) click("approve");
      else {
        if (r[cursor] && !document.querySelectorAll("input.sel:checked").length) { var cb = r[cursor].querySelector("input.sel"); if (cb) cb.checked = true; }
        click("batch-approve");
      }
    }
    else if (e.key === "r") {
      var f = document.getElementById("reason") || document.getElementById("batch-reason");
      if (f) { f.focus(); e.preventDefault(); }
    }
  });

  bind();
  poll();
  setInterval(poll, 1500);
})();
