#pragma once
// A typed table (sweeps/export/trial_table.h) as an HTML <table>: numbers right-aligned with a sort key
// (data-v) holding the full value, text escaped, NULL as an empty cell. Sortable tables sort on a click on
// a header (html_page.h's script), numerically where the column holds numbers.
#include <string>

#include "sweeps/export/trial_table.h"

namespace infertune {

struct HtmlTableOptions {
  std::string id;         // the element id (anchors, the filter box, tests)
  bool sortable = true;
  bool filter = false;    // a text box above the table that hides rows not containing its text
  bool wrap_text = false; // long text cells (reasons, commands) wrap instead of widening the table
};

std::string html_table(const Table& table, const HtmlTableOptions& options);

// A number for people: 1234.5 -> "1234.5", 12.345 -> "12.35", 0.012345 -> "0.0123".
std::string display_number(double value);

}  // namespace infertune
