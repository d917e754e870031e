#include "reports/html/html_page.h"

#include "reports/html/html_text.h"

namespace infertune {
namespace {

constexpr std::string_view kStyle = R"css(
:root { --ink: #1d2430; --muted: #5b6475; --line: #d9dee7; --bg: #f6f7f9; --card: #fff; --ok: #1a7f37;
        --warn: #9a6700; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       background: var(--bg); }
header.page { background: #1d2430; color: #fff; padding: 18px 28px; }
header.page h1 { margin: 0 0 4px; font-size: 22px; }
header.page p { margin: 0; color: #c9d1dd; }
nav { padding: 8px 28px; background: #fff; border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
nav a { margin-right: 14px; color: #0b5cad; text-decoration: none; white-space: nowrap; }
main { padding: 10px 28px 40px; }
section { margin: 22px 0; }
h2 { font-size: 18px; margin: 0 0 8px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
p.note { color: var(--muted); margin: 4px 0 10px; max-width: 100ch; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card h3 { margin-top: 0; }
.card dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
.card dt { color: var(--muted); }
.card dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
.badge.ok { background: #dafbe1; color: var(--ok); }
.badge.warn { background: #fff8c5; color: var(--warn); }
.badge.bad { background: #ffebe9; color: var(--bad); }
.score { font-size: 20px; font-weight: 600; }
pre.cmd { background: #0f1720; color: #e6edf3; padding: 8px 10px; border-radius: 6px; overflow-x: auto;
          white-space: pre-wrap; word-break: break-all; margin: 6px 0; font-size: 12.5px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.charts figure { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 6px; }
.charts figcaption { color: var(--muted); font-size: 12px; max-width: 450px; padding: 0 6px 4px; }
svg.chart { display: block; font: 11px system-ui, "DejaVu Sans", sans-serif; }
svg.chart .grid { stroke: #eceff4; }
svg.chart .axis { stroke: #8a93a3; }
svg.chart .tick { fill: var(--muted); }
svg.chart .axis-title { fill: var(--ink); font-size: 12px; }
svg.chart .chart-title { fill: var(--ink); font-weight: 600; font-size: 13px; }
svg.chart .legend { fill: var(--ink); }
svg.chart .series-line { fill: none; stroke-width: 1.5; opacity: .55; }
svg.chart .emph { stroke: #111; stroke-width: 1.5; }
svg.chart .diagonal { stroke: #8a93a3; stroke-dasharray: 5 4; }
svg.chart .marker { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 4 3; }
svg.chart circle { opacity: .9; }
.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #eef1f5; text-align: left; white-space: nowrap; }
table.wrap td { white-space: normal; max-width: 60ch; overflow-wrap: anywhere; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
thead th { background: #f0f3f7; position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort="ascending"]::after { content: " ▲"; }
table.sortable th[aria-sort="descending"]::after { content: " ▼"; }
tbody tr:hover { background: #f5f9ff; }
p.filter input { padding: 4px 8px; width: 340px; border: 1px solid var(--line); border-radius: 6px; }
p.filter .count { color: var(--muted); margin-left: 8px; }
.bars { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.bar-row { display: grid; grid-template-columns: minmax(200px, 38%) 1fr 70px; gap: 8px; align-items: center;
           font-size: 12px; padding: 1px 0; }
.bar-row .label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar-row .track { background: #eef1f5; height: 12px; border-radius: 3px; position: relative; }
.bar-row .fill { background: #0072B2; height: 12px; border-radius: 3px; }
.bar-row .fill.over { background: #D55E00; }
.bar-row .value { text-align: right; font-variant-numeric: tabular-nums; }
)css";

// Sorting keeps the rows' DOM nodes and reorders them; 1,000 rows sort in a few milliseconds.
constexpr std::string_view kScript = R"js(
"use strict";
(function () {
  function cellKey(row, column) {
    var cell = row.cells[column];
    if (!cell) return { empty: true };
    var v = cell.getAttribute("data-v");
    if (v !== null) return { number: parseFloat(v) };
    var text = cell.textContent;
    return text === "" ? { empty: true } : { text: text.toLowerCase() };
  }
  function compare(a, b) {
    if (a.empty || b.empty) return (a.empty ? 1 : 0) - (b.empty ? 1 : 0);  // empty cells last either way
    if (a.number !== undefined && b.number !== undefined) return a.number - b.number;
    var x = a.text !== undefined ? a.text : String(a.number), y = b.text !== undefined ? b.text : String(b.number);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  function sortTable(table, column, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, index) { return { row: row, key: cellKey(row, column), index: index }; });
    keyed.sort(function (p, q) {
      if (p.key.empty || q.key.empty) return compare(p.key, q.key) || p.index - q.index;
      var c = compare(p.key, q.key);
      return (descending ? -c : c) || p.index - q.index;
    });
    var fragment = document.createDocumentFragment();
    keyed.forEach(function (k) { fragment.appendChild(k.row); });
    body.appendChild(fragment);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === column) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
  }
  function makeSortable(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.title = "sort by " + th.textContent;
      th.addEventListener("click", function () {
        sortTable(table, column, th.getAttribute("aria-sort") === "ascending");
      });
    });
  }
  function applyFilter(input) {
    var table = document.getElementById(input.getAttribute("data-filter-for"));
    var needle = input.value.toLowerCase(), shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var match = needle === "" || row.textContent.toLowerCase().indexOf(needle) >= 0;
      row.style.display = match ? "" : "none";
      if (match) shown++;
    });
    var count = document.querySelector('[data-count-for="' + table.id + '"]');
    if (count) count.textContent = shown + " of " + table.tBodies[0].rows.length + " rows";
  }
  // Opened as page.html#selftest: sort a numeric column both ways, filter, and report on <body>.
  function selfTest() {
    var problems = [];
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      var heads = table.tHead.rows[0].cells, body = table.tBodies[0];
      for (var column = 0; column < heads.length; column++) {
        var numbers = Array.prototype.filter.call(body.rows, function (r) {
          return r.cells[column] && r.cells[column].hasAttribute("data-v");
        });
        if (numbers.length < 2) continue;
        [false, true].forEach(function (descending) {
          sortTable(table, column, descending);
          var values = [];
          Array.prototype.forEach.call(body.rows, function (r) {
            var v = r.cells[column] && r.cells[column].getAttribute("data-v");
            if (v !== null) values.push(parseFloat(v));
          });
          for (var i = 1; i < values.length; i++) {
            if (descending ? values[i] > values[i - 1] : values[i] < values[i - 1]) {
              problems.push(table.id + " column " + column + " not sorted");
              break;
            }
          }
        });
        break;
      }
    });
    var input = document.querySelector("input[data-filter-for]");
    if (input) {
      input.value = "\u0000no row has this\u0000";
      applyFilter(input);
      var table = document.getElementById(input.getAttribute("data-filter-for"));
      var visible = Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return r.style.display !== "none"; });
      if (visible.length !== 0) problems.push("filter left " + visible.length + " rows");
      input.value = "";
      applyFilter(input);
    }
    document.body.setAttribute("data-selftest", problems.length ? "failed: " + problems.join("; ") : "ok");
    document.body.setAttribute("data-tables", String(tables.length));
  }
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter-for]"), function (input) {
      input.addEventListener("input", function () { applyFilter(input); });
    });
    if (location.hash === "#selftest") selfTest();
  });
})();
)js";

}  // namespace

std::string html_page(std::string_view title, std::string_view body) {
  std::string out;
  out.reserve(body.size() + kStyle.size() + kScript.size() + 512);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may be fetched: no scripts, styles, images or fonts from anywhere, not even this page's folder.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'; img-src data:\">\n";
  out += "<title>" + html_escape(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += body;
  out += "\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace infertune
