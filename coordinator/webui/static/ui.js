// sluice web UI: the round selector, rule highlighting and live refresh.
// Pages are rendered on the server; while a job runs this script fetches
// the same page again every two seconds and swaps its content in.
(function () {
  "use strict";
  var selected = null;

  function showRound(root, r) {
    var rounds = root.querySelector("#rounds");
    if (!rounds) return;
    var panels = rounds.querySelectorAll(".round-panel");
    if (!rounds.querySelector('.round-panel[data-panel="' + r + '"]') && panels.length) {
      r = panels[panels.length - 1].getAttribute("data-panel");
    }
    selected = r;
    panels.forEach(function (p) { p.classList.toggle("on", p.getAttribute("data-panel") === String(r)); });
    rounds.querySelectorAll(".tab").forEach(function (t) { t.classList.toggle("on", t.getAttribute("data-round") === String(r)); });
  }

  function highlight(panel, stages, on) {
    stages.split(" ").forEach(function (id) {
      if (id === "") return;
      panel.querySelectorAll('.node[data-stage="' + id + '"]').forEach(function (n) { n.classList.toggle("hl", on); });
    });
  }

  // Sortable tables: a click on a heading with data-sort sorts the rows
  // by that column (numbers by each cell's data-v), again to reverse.
  var sorts = {};
  function sortTable(table, col, dir) {
    var th = table.tHead.rows[0].cells[col];
    var num = th.getAttribute("data-sort") === "num";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col];
      var c;
      if (num) {
        c = parseFloat(x.getAttribute("data-v") || "0") - parseFloat(y.getAttribute("data-v") || "0");
      } else {
        c = x.textContent.localeCompare(y.textContent);
      }
      return dir * c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    table.tHead.querySelectorAll("th").forEach(function (h, i) {
      h.classList.toggle("asc", i === col && dir > 0);
      h.classList.toggle("desc", i === col && dir < 0);
    });
  }

  function wireSort(root) {
    root.querySelectorAll("table.sortable").forEach(function (table) {
      var id = table.id;
      table.tHead.rows[0].querySelectorAll("th[data-sort]").forEach(function (th) {
        th.addEventListener("click", function () {
          var col = th.cellIndex;
          var prev = sorts[id];
          // Numbers start largest first (the slowest, the biggest).
          var dir = prev && prev.col === col ? -prev.dir : (th.getAttribute("data-sort") === "num" ? -1 : 1);
          sorts[id] = { col: col, dir: dir };
          sortTable(table, col, dir);
        });
      });
      if (sorts[id]) sortTable(table, sorts[id].col, sorts[id].dir); // kept across live refreshes
    });
  }

  function wire(root) {
    wireSort(root);
    var rounds = root.querySelector("#rounds");
    if (rounds) {
      rounds.querySelectorAll(".tab").forEach(function (t) {
        t.addEventListener("click", function () {
          showRound(root, t.getAttribute("data-round"));
          var u = new URL(location.href);
          u.searchParams.set("round", selected);
          history.replaceState(null, "", u);
        });
      });
      rounds.querySelectorAll("[data-stages]").forEach(function (li) {
        var panel = li.closest(".round-panel");
        li.addEventListener("mouseenter", function () { highlight(panel, li.getAttribute("data-stages"), true); });
        li.addEventListener("mouseleave", function () { highlight(panel, li.getAttribute("data-stages"), false); });
      });
      showRound(root, selected !== null ? selected : rounds.getAttribute("data-selected"));
    }
  }

  function refresh() {
    if (document.body.getAttribute("data-live") !== "1") return;
    fetch(location.href, { headers: { "Accept": "text/html" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.getElementById("content");
        if (!next) return;
        var open = {};
        var key = function (d) { return d.id || d.className + ":" + d.getAttribute("data-stage"); };
        document.querySelectorAll("details").forEach(function (d) { open[key(d)] = d.open; });
        var scroll = {};
        document.querySelectorAll(".tasks-scroll").forEach(function (e, i) { scroll[i] = e.scrollTop; });
        var content = document.getElementById("content");
        content.innerHTML = next.innerHTML;
        content.querySelectorAll("details").forEach(function (d) { if (key(d) in open) d.open = open[key(d)]; });
        content.querySelectorAll(".tasks-scroll").forEach(function (e, i) { if (scroll[i]) e.scrollTop = scroll[i]; });
        document.body.setAttribute("data-live", doc.body.getAttribute("data-live"));
        wire(content);
        schedule();
      })
      .catch(function () { schedule(); });
  }

  function schedule() {
    var live = document.body.getAttribute("data-live") === "1";
    var badge = document.getElementById("live");
    if (badge) badge.hidden = !live;
    if (live) setTimeout(refresh, 2000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    wire(document);
    schedule();
  });
})();
