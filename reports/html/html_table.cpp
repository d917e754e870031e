#include "reports/html/html_table.h"

#include <fmt/format.h>

#include <cmath>

#include "reports/html/html_text.h"

namespace infertune {
namespace {

std::string cell_html(const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "<td></td>";
  if (const auto* i = std::get_if<int64_t>(&cell)) return fmt::format(R"(<td class="n" data-v="{0}">{0}</td>)", *i);
  if (const auto* d = std::get_if<double>(&cell)) {
    return fmt::format(R"(<td class="n" data-v="{}">{}</td>)", *d, display_number(*d));
  }
  return "<td>" + html_escape(std::get<std::string>(cell)) + "</td>";
}

}  // namespace

std::string display_number(double value) {
  const double a = std::abs(value);
  if (a == 0) return "0";
  if (a >= 1000) return fmt::format("{:.0f}", value);
  if (a >= 100) return fmt::format("{:.1f}", value);
  if (a >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3g}", value);
}

std::string html_table(const Table& table, const HtmlTableOptions& options) {
  std::string out;
  if (options.filter) {
    out += fmt::format(
        R"~(<p class="filter"><input type="search" data-filter-for="{0}" placeholder="filter rows (any text, e.g. q4_k or failed)" aria-label="filter the rows of {0}"> <span class="count" data-count-for="{0}">{1} rows</span></p>)~",
        html_escape(options.id), table.rows.size());
  }
  out += fmt::format(R"(<div class="table-wrap"><table id="{}" class="{}{}">)", html_escape(options.id),
                     options.sortable ? "sortable" : "", options.wrap_text ? " wrap" : "");
  out += "<thead><tr>";
  for (const std::string& column : table.columns) out += "<th>" + html_escape(column) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const Cell& cell : row) out += cell_html(cell);
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

}  // namespace infertune
