#pragma once
// The charts of the HTML report, built from the reported sweeps (each a Chart for html/svg_chart.h):
//  - per metric and swept dimension: every ok trial's mean with its 95% interval as an error bar, one series
//    per sweep and workload, a line through the best value at each setting;
//  - the Pareto front: throughput against latency and against peak memory, front configurations emphasized;
//  - predicted against measured peak memory, with the y = x line;
//  - speed against quality: each quantization variant's throughput against its perplexity increase over the
//    sweep's base model (the variants measured against a real base; sweeps/quality).
#include <string>
#include <vector>

#include "reports/html/svg_chart.h"
#include "reports/report/report_data.h"

namespace infertune {

struct FigureChart {
  Chart chart;
  std::string caption;
};

std::vector<FigureChart> dimension_charts(const std::vector<ReportSweep>& sweeps);
std::vector<FigureChart> pareto_charts(const std::vector<ReportSweep>& sweeps);
std::vector<FigureChart> memory_charts(const std::vector<ReportSweep>& sweeps);
std::vector<FigureChart> quality_charts(const std::vector<ReportSweep>& sweeps);

// Why the reported sweeps' variants have no quality figures (synthetic base, failed measurement), one line per
// reason; empty when every variant has them or a sweep has no variants.
std::vector<std::string> quality_notes(const std::vector<ReportSweep>& sweeps);

}  // namespace infertune
