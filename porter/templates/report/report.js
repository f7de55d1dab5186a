// porter report.html: sorting, filtering, expanding and colouring. No network, no eval,
// and source text is only ever read and written through textContent, never as HTML.
(function () {
  "use strict";
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  // Sortable tables: click a header with data-sort; numbers compare as numbers.
  $$("table.sortable").forEach(function (table) {
    $$("th[data-sort]", table).forEach(function (th) {
      th.addEventListener("click", function () {
        var col = th.cellIndex, numeric = th.dataset.sort === "num";
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        $$("th[aria-sort]", table).forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].textContent.trim(), y = b.cells[col].textContent.trim();
          return dir * (numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y));
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // File list: by default only the files a reviewer must look at.
  var files = $("#files-table"), onlyReview = $("#only-review");
  function showFiles() {
    files.classList.toggle("show-all", !onlyReview.checked);
    var shown = $$("tbody tr", files).filter(function (r) { return !onlyReview.checked || r.dataset.review === "1"; });
    $("#files-count").textContent = shown.length + " of " + files.tBodies[0].rows.length + " files shown";
  }
  onlyReview.addEventListener("change", showFiles);
  showFiles();

  // Findings: filter by severity, code and file.
  var filters = { severity: $("#f-severity"), rule: $("#f-rule"), path: $("#f-path") };
  var findingRows = $$("#findings-table tbody tr");
  function filterFindings() {
    var shown = 0;
    findingRows.forEach(function (row) {
      var ok = Object.keys(filters).every(function (k) { return !filters[k].value || row.dataset[k] === filters[k].value; });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    $("#findings-count").textContent = shown + " of " + findingRows.length + " findings shown";
  }
  Object.keys(filters).forEach(function (k) { filters[k].addEventListener("change", filterFindings); });
  filterFindings();
  $$("a.filter-file").forEach(function (a) {
    a.addEventListener("click", function () {
      filters.path.value = a.dataset.path;
      filters.severity.value = a.dataset.severity;
      filters.rule.value = "";
      filterFindings();
    });
  });

  // Python colouring, applied when a diff is first opened so large ports load fast.
  var KEYWORDS = "False|None|True|and|as|assert|async|await|break|class|continue|def|del|elif|else|except|finally|for|from|global|if|import|in|is|lambda|nonlocal|not|or|pass|raise|return|try|while|with|yield";
  var TOKEN = new RegExp("(#.*$)|((?:[rRbBuUfF]{1,2})?(?:\"(?:[^\"\\\\]|\\\\.)*\"?|'(?:[^'\\\\]|\\\\.)*'?))|\\b(" + KEYWORDS + ")\\b|\\b(\\d[\\d_]*(?:\\.\\d+)?)\\b", "g");
  var CLASSES = [null, "hl-c", "hl-s", "hl-k", "hl-n"];
  function colour(cell) {
    var text = cell.textContent, frag = document.createDocumentFragment(), last = 0, m;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(text)) !== null) {
      if (m[0] === "") { TOKEN.lastIndex += 1; continue; }
      frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      var span = document.createElement("span");
      span.className = CLASSES[m.findIndex(function (g, i) { return i > 0 && g !== undefined; })];
      span.textContent = m[0];
      frag.appendChild(span);
      last = TOKEN.lastIndex;
    }
    frag.appendChild(document.createTextNode(text.slice(last)));
    cell.textContent = "";
    cell.appendChild(frag);
  }
  document.addEventListener("toggle", function (e) {
    var d = e.target;
    if (d.open && d.dataset && d.dataset.python && !d.dataset.coloured) {
      d.dataset.coloured = "1";
      $$("td.c", d).forEach(colour);
    }
  }, true);

  $("#expand-all").addEventListener("click", function () { $$("details.diff").forEach(function (d) { d.open = true; }); });
  $("#collapse-all").addEventListener("click", function () { $$("details.diff").forEach(function (d) { d.open = false; }); });

  // A link into a collapsed diff (the file or one of its lines) opens it.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1)), el = id && document.getElementById(id);
    var d = el && el.closest("details");
    if (d && !d.open) { d.open = true; el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
