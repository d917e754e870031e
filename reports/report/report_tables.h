#pragma once
// The tables of a report, built once and written three ways: HTML (sortable), CSV (a file per table, for
// spreadsheets) and Markdown (for a pull request). Cells are typed (sweeps/export/trial_table.h), so CSV keeps
// full precision and sorting is numeric where the values are numbers.
#include <string>
#include <vector>

#include "reports/report/report_data.h"
#include "sweeps/export/trial_table.h"

namespace infertune {

struct NamedTable {
  std::string id;     // "trials", "recommendations", ...: the CSV file suffix and the HTML anchor
  std::string title;  // "All trials"
  Table table;
};

// The configuration setting that varies across the reported trials, as (setting, flag) pairs read from a
// trial's config; also the dimensions the per-dimension charts are drawn over.
struct Dimension {
  std::string name;  // "threads", "-b", "model", "depth"
  std::string (*value)(const ReportTrial&);  // the trial's value as text ("" when it has none)
  bool numeric = true;
};
const std::vector<Dimension>& report_dimensions();

// A recommendation candidate's configuration, labelled as its trials are (configuration_key.h).
std::string candidate_label(const Candidate& candidate);

// The metric that says how fast a workload is: aggregate_tps for batched, tg_tps when it generates, else pp_tps.
std::string main_metric(const ReportTrial& trial);

// Host and build of each sweep.
NamedTable sweeps_table(const std::vector<ReportSweep>& sweeps);
// Per sweep and scenario: the winner, its score and interval, margin and noise, command lines.
NamedTable recommendations_table(const std::vector<ReportSweep>& sweeps);
// The non-dominated configurations of each sweep (throughput, latency, memory).
NamedTable pareto_table(const std::vector<ReportSweep>& sweeps);
// Every trial with its settings, metrics, memory and utilization.
NamedTable trials_table(const std::vector<ReportSweep>& sweeps);
// Trials that did not finish ok, with their reasons.
NamedTable failed_table(const std::vector<ReportSweep>& sweeps);
// Several sweeps only: each configuration's main metric in every sweep and its ratio to the first sweep;
// a configuration missing from a sweep has an empty cell there.
NamedTable comparison_table(const std::vector<ReportSweep>& sweeps);

// All of the above that have rows (the comparison only for several sweeps), in reading order.
std::vector<NamedTable> report_tables(const std::vector<ReportSweep>& sweeps);

}  // namespace infertune
