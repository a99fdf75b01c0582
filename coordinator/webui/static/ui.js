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

  function wire(root) {
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
        document.querySelectorAll("details[data-stage]").forEach(function (d) { open[d.getAttribute("data-stage")] = d.open; });
        var content = document.getElementById("content");
        content.innerHTML = next.innerHTML;
        content.querySelectorAll("details[data-stage]").forEach(function (d) { if (open[d.getAttribute("data-stage")]) d.open = true; });
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
