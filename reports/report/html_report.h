#pragma once
// The HTML report: one self-contained page (html/html_page.h) a person tuning a machine reads top to bottom —
// the host and build, the recommendation per scenario with its command lines and noise verdict, the Pareto
// front, tokens/s against each swept setting with 95% intervals, predicted against measured memory, the
// share of the memory bandwidth each trial reached, the history of configurations across builds, failed
// trials with their reasons, and every trial in a sortable table. Several sweeps are shown side by side.
#include <string>
#include <vector>

#include "reports/report/report_data.h"

namespace infertune {

struct HtmlReportInput {
  std::vector<ReportSweep> sweeps;
  std::string history_html;  // the history section's content, "" when no configuration ran on several builds
  std::string generated_at;  // UTC time text
};

std::string html_report(const HtmlReportInput& input);

}  // namespace infertune
