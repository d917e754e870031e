#pragma once
// A table written as CSV, Markdown or JSON (what `infertune export` prints). NULL is an empty CSV field, an
// empty Markdown cell and JSON null.
//
// CSV: RFC 4180 quoting (a field with a comma, a double quote, CR or LF is quoted, quotes doubled), a
//      header row, LF line ends; numbers at full precision (the shortest text that reads back the same).
//      Text cells come from users (model paths, names, failure reasons), and a spreadsheet runs a cell
//      that starts with '=', '+', '-', '@', a tab or a CR as a formula ("CSV injection", OWASP): such a
//      text cell is written with a leading single quote ("'=HYPERLINK(...)"), which spreadsheets show as
//      text. Number cells are written as they are, so -5 stays a number.
// Markdown: a GitHub table; '|' escaped, line breaks become spaces; reals with two decimals.
// JSON: an array with one object per row, keys in column order; JSON columns embedded as documents.
#include <optional>
#include <string>
#include <string_view>

#include "sweeps/export/trial_table.h"

namespace infertune {

enum class TableFormat { csv, markdown, json };

std::optional<TableFormat> parse_table_format(std::string_view name);  // "csv", "md", "json"

std::string format_csv(const Table& table);
std::string format_markdown(const Table& table);
std::string format_json(const Table& table);
std::string format_table(const Table& table, TableFormat format);

}  // namespace infertune
