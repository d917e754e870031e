#include "sweeps/export/table_format.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace infertune {
namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::string markdown_text(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '|') {
      out += "\\|";
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// The characters that make a spreadsheet read a cell as a formula (see the header).
bool starts_like_a_formula(const std::string& text) {
  return !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
}

struct CsvText {
  std::string operator()(std::monostate) const { return ""; }
  std::string operator()(int64_t v) const { return fmt::format("{}", v); }
  std::string operator()(double v) const { return fmt::format("{}", v); }
  std::string operator()(const std::string& v) const {
    return csv_field(starts_like_a_formula(v) ? fmt::format("'{}", v) : v);
  }
};

struct MarkdownText {
  std::string operator()(std::monostate) const { return ""; }
  std::string operator()(int64_t v) const { return fmt::format("{}", v); }
  std::string operator()(double v) const { return fmt::format("{:.2f}", v); }
  std::string operator()(const std::string& v) const { return markdown_text(v); }
};

nlohmann::ordered_json json_value(const Cell& cell, bool is_json) {
  if (std::holds_alternative<int64_t>(cell)) return std::get<int64_t>(cell);
  if (std::holds_alternative<double>(cell)) return std::get<double>(cell);
  if (std::holds_alternative<std::monostate>(cell)) return nullptr;
  const std::string& text = std::get<std::string>(cell);
  if (is_json) {
    // The store checks JSON columns on insert; a document that does not parse is still exported, as text.
    auto parsed = nlohmann::ordered_json::parse(text, nullptr, false);
    if (!parsed.is_discarded()) return parsed;
  }
  return text;
}

}  // namespace

std::optional<TableFormat> parse_table_format(std::string_view name) {
  if (name == "csv") return TableFormat::csv;
  if (name == "md" || name == "markdown") return TableFormat::markdown;
  if (name == "json") return TableFormat::json;
  return std::nullopt;
}

std::string format_csv(const Table& table) {
  std::string out;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (c > 0) out += ',';
    out += csv_field(table.columns[c]);
  }
  out += '\n';
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += ',';
      out += std::visit(CsvText{}, row[c]);
    }
    out += '\n';
  }
  return out;
}

std::string format_markdown(const Table& table) {
  std::string out = "|";
  for (const auto& name : table.columns) out += fmt::format(" {} |", markdown_text(name));
  out += "\n|";
  for (size_t c = 0; c < table.columns.size(); ++c) out += "---|";
  out += '\n';
  for (const auto& row : table.rows) {
    out += "|";
    for (const Cell& cell : row) {
      const std::string text = std::visit(MarkdownText{}, cell);
      out += text.empty() ? std::string(" |") : fmt::format(" {} |", text);
    }
    out += '\n';
  }
  return out;
}

std::string format_json(const Table& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t c = 0; c < row.size(); ++c) {
      object[table.columns[c]] = json_value(row[c], c < table.json_columns.size() && table.json_columns[c]);
    }
    rows.push_back(std::move(object));
  }
  return rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string format_table(const Table& table, TableFormat format) {
  switch (format) {
    case TableFormat::csv:
      return format_csv(table);
    case TableFormat::markdown:
      return format_markdown(table);
    case TableFormat::json:
      return format_json(table);
  }
  return {};
}

}  // namespace infertune
