// The terminal table and the Markdown of a comparison (compare_output.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "reports/compare/compare_output.h"

namespace infertune {
namespace {

std::string metric_heading(const CompareMetric& m) { return fmt::format("{} {}", m.name, m.unit); }

std::string method_text(const ComparisonReport& r) {
  const int confidence = static_cast<int>(r.settings.confidence * 100 + 0.5);
  if (r.settings.design == CompareDesign::paired_blocks) {
    return fmt::format("{}% Hodges-Lehmann / signed-rank interval over adjacent ABBA block pairs, Wilcoxon signed-rank test", confidence);
  }
  return fmt::format("{}% bootstrap interval of the ratio of medians ({} resamples of the repetitions, seed {}), "
                     "Mann-Whitney U test",
                     confidence, r.settings.resamples, r.settings.seed);
}

std::string thresholds_line(const ComparisonReport& r) {
  std::string text;
  std::vector<std::string> seen;
  for (const CompareMetric& m : r.settings.metrics) {
    const bool compared = std::any_of(r.comparisons.begin(), r.comparisons.end(),
                                      [&](const MetricComparison& c) { return c.metric.name == m.name; });
    if (!compared) continue;
    text += fmt::format("{}{} {} ({} is better)", text.empty() ? "" : ", ", m.name,
                        threshold_text(threshold_for(r.settings, m)), m.higher_is_better ? "higher" : "lower");
  }
  return text;
}

std::string geomean_text(const GeometricMean& g) {
  return fmt::format("{} {} {} over {} configuration{}: {}", g.metric.name, change_text(g.ratio),
                     interval_text(g.ratio_interval), g.configurations, g.configurations == 1 ? "" : "s",
                     verdict_name(g.verdict));
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string markdown_cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

std::string_view verdict_mark(Verdict v) {
  switch (v) {
    case Verdict::pass: return "✅";
    case Verdict::warn: return "⚠️";
    case Verdict::inconclusive: return "❔";
    case Verdict::fail: return "❌";
  }
  return "";
}

}  // namespace

std::string format_compare_table(const ComparisonReport& r) {
  std::vector<std::array<std::string, 7>> rows;
  rows.push_back({"configuration", "metric", "baseline", "candidate", "change [95% CI]", "p", "verdict"});
  for (const MetricComparison& c : r.comparisons) {
    rows.push_back({c.label, metric_heading(c.metric), c.baseline.values ? value_text(c.baseline.median) : "-",
                    c.candidate.values ? value_text(c.candidate.median) : "-",
                    c.ratio ? fmt::format("{} {}", change_text(*c.ratio), interval_text(c.ratio_interval)) : "-",
                    p_value_text(c.p_value), std::string(verdict_name(c.verdict))});
  }
  std::array<size_t, 7> width{};
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  out += fmt::format("baseline:  {}\ncandidate: {}\n", r.baseline_side.description, r.candidate_side.description);
  out += fmt::format("threshold: {} [{}]\nmethod:    {}\n\n", thresholds_line(r), r.threshold_source, method_text(r));
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (size_t k = 0; k < rows[i].size(); ++k) line += (k ? "  " : "") + pad(rows[i][k], k + 1 < rows[i].size() ? width[k] : 0);
    out += line + "\n";
  }
  bool first_note = true;
  for (const MetricComparison& c : r.comparisons) {
    if (c.note.empty()) continue;
    out += fmt::format("{}  {} [{}]: {}\n", first_note ? "\nnotes:\n" : "", c.label, c.metric.name, c.note);
    first_note = false;
  }
  if (!r.geometric_means.empty()) out += "\ngeometric mean of the ratios:\n";
  for (const GeometricMean& g : r.geometric_means) out += "  " + geomean_text(g) + "\n";
  if (!r.unmatched.empty()) out += "\nnot compared:\n";
  for (const UnmatchedConfiguration& u : r.unmatched) out += fmt::format("  {}: {}\n", u.label, u.reason);
  for (const std::string& note : r.notes) out += fmt::format("note: {}\n", note);
  out += fmt::format("\noverall: {} (exit status {})\n", verdict_name(r.verdict), exit_status_of(r.verdict));
  return out;
}

std::string format_compare_markdown(const ComparisonReport& r) {
  std::string out = fmt::format("### {} infertune compare: **{}**\n\n", verdict_mark(r.verdict), verdict_name(r.verdict));
  for (const GeometricMean& g : r.geometric_means) out += fmt::format("- geometric mean {}\n", geomean_text(g));
  out += fmt::format("- baseline: `{}`\n- candidate: `{}`\n", r.baseline_side.description, r.candidate_side.description);
  out += fmt::format("- threshold: {} ({}); {}\n\n", thresholds_line(r), r.threshold_source, method_text(r));
  out += "| configuration | metric | baseline | candidate | change [95% CI] | p | verdict |\n";
  out += "|---|---|--:|--:|--:|--:|---|\n";
  for (const MetricComparison& c : r.comparisons) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} {} |\n", markdown_cell(c.label), metric_heading(c.metric),
                       c.baseline.values ? value_text(c.baseline.median) : "-",
                       c.candidate.values ? value_text(c.candidate.median) : "-",
                       c.ratio ? fmt::format("{} {}", change_text(*c.ratio), interval_text(c.ratio_interval)) : "-",
                       p_value_text(c.p_value), verdict_mark(c.verdict), verdict_name(c.verdict));
  }
  bool first_note = true;
  for (const MetricComparison& c : r.comparisons) {
    if (c.note.empty()) continue;
    out += fmt::format("{}- {} [{}]: {}\n", first_note ? "\n**Notes**\n\n" : "", markdown_cell(c.label), c.metric.name,
                       markdown_cell(c.note));
    first_note = false;
  }
  if (!r.unmatched.empty()) out += "\n**Not compared**\n\n";
  for (const UnmatchedConfiguration& u : r.unmatched) out += fmt::format("- {}: {}\n", markdown_cell(u.label), u.reason);
  for (const std::string& note : r.notes) out += fmt::format("\n> {}\n", markdown_cell(note));
  return out;
}

}  // namespace infertune
