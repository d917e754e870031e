#pragma once
// A ComparisonReport as text: a terminal table, Markdown for a pull-request comment (the overall verdict
// and the geometric means first, then the table, then what was not compared), and JSON with everything
// (format described in docs/compare.md).
#include <optional>
#include <string>
#include <string_view>

#include "reports/compare/comparison.h"

namespace infertune {

enum class CompareFormat { table, markdown, json };

std::optional<CompareFormat> parse_compare_format(std::string_view name);  // "table", "md", "json"

std::string format_compare_table(const ComparisonReport& report);
std::string format_compare_markdown(const ComparisonReport& report);
std::string format_compare_json(const ComparisonReport& report);
std::string format_compare(const ComparisonReport& report, CompareFormat format);

// Shared by the renderers.
std::string change_text(double ratio);                       // "+2.1%", "-17.4%"
std::string interval_text(const std::optional<Interval>& ratio_interval);  // "[-18.0%, -16.8%]" or "-"
std::string p_value_text(const std::optional<double>& p);  // "0.0078", "<0.0001", "-"
std::string value_text(double value);                      // 1234.5, 12.34, 0.1234
std::string threshold_text(double fraction);               // "5%", "2.5%"

}  // namespace infertune
