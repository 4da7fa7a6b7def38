// bedside web: keyboard-first labelling (progressive enhancement: every form works without this file).
(function () {
  "use strict";
  function typing(ev) {
    var t = ev.target;
    return t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox") || t.tagName === "SELECT");
  }
  function submit(form) {
    if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
  }
  function setRadio(form, name, value) {
    var el = form.querySelector('input[type=radio][name="' + name + '"][value="' + value + '"]');
    if (el) { el.checked = true; el.dispatchEvent(new Event("change", { bubbles: true })); }
    return el;
  }
  function toggle(form, name) {
    var el = form.querySelector('input[type=checkbox][name="' + name + '"]');
    if (el) { el.checked = !el.checked; el.dispatchEvent(new Event("change", { bubbles: true })); }
  }
  function focusRow(rows, i) {
    rows.forEach(function (r, j) { r.classList.toggle("focus", j === i); });
    if (rows[i] && rows[i].scrollIntoView) { rows[i].scrollIntoView({ block: "nearest" }); }
    return i;
  }

  function setup() {
    var form = document.querySelector("form.label-form");
    if (!form) { return livePage(); }
    var kind = form.getAttribute("data-kind");
    var rows = Array.prototype.slice.call(form.querySelectorAll("[data-row]"));
    var at = rows.length ? focusRow(rows, 0) : -1;
    form.querySelectorAll("[data-row]").forEach(function (row, i) {
      row.addEventListener("click", function () { at = focusRow(rows, i); });
    });
    function row() { return rows[at]; }

    document.addEventListener("keydown", function (ev) {
      if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") { ev.preventDefault(); submit(form); return; }
      if (ev.key === "Escape" && typing(ev)) { ev.target.blur(); return; }
      if (typing(ev) || ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
      var key = ev.key;
      var nav = document.querySelector("[data-nav-" + (key === "[" ? "prev" : key === "]" ? "next" : "none") + "]");
      if (nav) { ev.preventDefault(); window.location.href = nav.getAttribute("href"); return; }
      if (key === "Enter") { ev.preventDefault(); submit(form); return; }
      if ((key === "ArrowDown" || key === "j") && rows.length) { ev.preventDefault(); at = focusRow(rows, Math.min(rows.length - 1, at + 1)); return; }
      if ((key === "ArrowUp" || key === "k") && rows.length) { ev.preventDefault(); at = focusRow(rows, Math.max(0, at - 1)); return; }
      var r = row(), name = r ? r.getAttribute("data-row") : null;
      if (kind === "rank" && r) {
        if (/^[1-9]$/.test(key)) { setRadio(form, "rank_" + name, key); ev.preventDefault(); return; }
        var which = "qwe".indexOf(key), flags = r.querySelectorAll("input[data-criterion]");
        if (key && which >= 0 && flags[which]) { toggle(form, flags[which].name); return; }
      }
      if (key === "c") { ev.preventDefault(); var c = form.querySelector("textarea[name=comment]"); if (c) { c.focus(); } return; }
      if (key === "f") {
        ev.preventDefault();
        var flag = form.querySelector("input[name=safety]"), note = form.querySelector("textarea[name=safety_note]");
        if (flag) { flag.checked = true; }
        if (note) { note.focus(); }
        return;
      }
      if (kind === "pairwise") {
        if (key === "a" || key === "1") { setRadio(form, "preference", "A"); return; }
        if (key === "b" || key === "2") { setRadio(form, "preference", "B"); return; }
        if (key === "t" || key === "0") { setRadio(form, "preference", "tie"); return; }
        if (key === "h") { addEvidence(form); return; }
      }
      if (kind === "agree") {
        if (key === "y") { setRadio(form, "agree", "yes"); return; }
        if (key === "n") { setRadio(form, "agree", "no"); return; }
      }
      if (kind === "gold") {
        if (/^[1-9]$/.test(key)) { var boxes = form.querySelectorAll("textarea"); var b = boxes[parseInt(key, 10) - 1]; if (b) { ev.preventDefault(); b.focus(); } return; }
      }
      if (kind === "match") {
        if (key === "0" || key === "n") { setRadio(form, "span", "NO MATCH"); mark(rows, -1); return; }
        if (key === " " || key === "x") { ev.preventDefault(); if (r) { setRadio(form, "span", r.getAttribute("data-value")); mark(rows, at); } return; }
        if (key === "s") { useSelection(form); return; }
      }
      if (kind === "evidence" && r) {
        if (key === "e") { setRadio(form, "rel_" + name, "essential"); return; }
        if (key === "s") { setRadio(form, "rel_" + name, "supplementary"); return; }
        if (key === "n") { setRadio(form, "rel_" + name, "not-relevant"); return; }
      }
    });
  }

  function mark(rows, i) { rows.forEach(function (r, j) { r.classList.toggle("chosen", j === i); }); }

  function useSelection(form) {
    var sel = window.getSelection ? String(window.getSelection()) : "";
    var custom = form.querySelector("input[name=custom_span]");
    if (sel && custom) { custom.value = sel; setRadio(form, "span", "__custom__"); }
  }

  function addEvidence(form) {
    var sel = window.getSelection ? String(window.getSelection()).trim() : "";
    var box = form.querySelector("textarea[name=evidence]");
    if (sel && box) { box.value = (box.value ? box.value + "\n" : "") + sel; }
  }

  // The meta-evaluation page refreshes its numbers while labels arrive (the page itself works without this).
  function livePage() {
    var live = document.querySelector("[data-live]");
    if (!live) { return; }
    var url = live.getAttribute("data-live");
    setInterval(function () {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) { return; }
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.querySelector("[data-live]");
          if (fresh) { live.innerHTML = fresh.innerHTML; }
        })
        .catch(function () {});
    }, 3000);
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", setup); } else { setup(); }
})();
