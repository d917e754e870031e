// `infertune report` from stores built with the store API: what the page and the tables hold, that the
// store is only read, and that bad input is refused with the file named.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "../sweeps/recommend_test_data.h"
#include "reports/report/html_report.h"
#include "reports/report/report_data.h"
#include "reports/report/report_tables.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A sweep over threads 1, 2 and -np 1, 4 with batched and tg workloads, one failed and one oom trial.
std::filesystem::path sample_store(const std::filesystem::path& dir, int64_t& sweep) {
  const auto db = dir / "results.db";
  auto store = store_with_sweep(db, sweep);
  for (int threads : {1, 2}) {
    for (int np : {1, 4}) {
      record(store, sweep, {trial_config(threads, np, batched_workload(np)),
                            batched_metrics(20.0 * threads * np, 50.0 / threads, 10.0 / threads)});
    }
    SyntheticTrial tg{trial_config(threads, 1, single_workload("tg", 0, 32)),
                      {{metric::kGenTokensPerSecond, around(15.0 * threads, 0.5)},
                       {metric::kBandwidthPercent, around(40.0 * threads, 1.0)}}};
    record(store, sweep, tg);
  }
  SyntheticTrial failed{trial_config(8, 1, single_workload("tg", 0, 32)), {}};
  failed.status = TrialStatus::failed;
  record(store, sweep, failed);
  SyntheticTrial oom{trial_config(16, 4, batched_workload(4)), {}};
  oom.status = TrialStatus::oom;
  record(store, sweep, oom);
  return db;
}

TEST(ReportData, LoadsHostBuildTrialsAndRecommendation) {
  int64_t sweep = 0;
  const auto db = sample_store(temp_dir(), sweep);
  auto sweeps = load_report_sweeps(db, {});
  ASSERT_TRUE(sweeps) << sweeps.error().message;
  ASSERT_EQ(sweeps->size(), 1u);
  const ReportSweep& s = sweeps->front();
  EXPECT_EQ(s.sweep.id, sweep);
  EXPECT_EQ(s.host.cpu_model, "Test CPU 9000");
  EXPECT_EQ(s.build.git_commit, "0123456789ab");
  EXPECT_EQ(s.trials.size(), 8u);
  EXPECT_EQ(s.count("ok"), 6u);
  ASSERT_TRUE(s.recommendation) << s.recommendation_error;
  EXPECT_TRUE(s.recommendation->has_recommendation());
  EXPECT_EQ(s.trials.front().workload, "batched np1 pp128+tg64");
  EXPECT_NE(s.trials.front().key.label.find("-t 1"), std::string::npos) << s.trials.front().key.label;
}

TEST(ReportData, UnknownSweepIsNamed) {
  int64_t sweep = 0;
  const auto db = sample_store(temp_dir(), sweep);
  auto sweeps = load_report_sweeps(db, {{sweep + 41}, false});
  ASSERT_FALSE(sweeps);
  EXPECT_NE(sweeps.error().message.find("no sweep " + std::to_string(sweep + 41)), std::string::npos);
  EXPECT_NE(sweeps.error().message.find("results.db"), std::string::npos);
}

TEST(ReportTables, TrialsAndFailuresAndRecommendations) {
  int64_t sweep = 0;
  auto sweeps = load_report_sweeps(sample_store(temp_dir(), sweep), {});
  ASSERT_TRUE(sweeps);
  const NamedTable trials = trials_table(*sweeps);
  EXPECT_EQ(trials.table.rows.size(), 8u);
  const NamedTable failed = failed_table(*sweeps);
  ASSERT_EQ(failed.table.rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(failed.table.rows[1][2]), "oom");
  const NamedTable recommendations = recommendations_table(*sweeps);
  EXPECT_EQ(recommendations.table.rows.size(), 3u);  // latency, throughput, mixed
  // Only one sweep: no side-by-side table.
  for (const NamedTable& t : report_tables(*sweeps)) EXPECT_NE(t.id, "comparison");
}

TEST(ReportTables, TwoSweepsSideBySideByConfiguration) {
  const auto dir = temp_dir();
  int64_t first = 0;
  const auto db = sample_store(dir, first);
  {
    auto store = ResultsStore::open(db);
    ASSERT_TRUE(store);
    auto second = store->create_sweep({"threads: [1]\n", "other", 1, 1, ""});
    ASSERT_TRUE(second);
    // Twice as fast on -t 1 -np 4; the other configurations are missing from the second sweep.
    record(*store, *second, {trial_config(1, 4, batched_workload(4)), batched_metrics(160, 25, 5)});
  }
  auto sweeps = load_report_sweeps(db, {{}, true});
  ASSERT_TRUE(sweeps) << sweeps.error().message;
  ASSERT_EQ(sweeps->size(), 2u);
  const NamedTable t = comparison_table(*sweeps);
  ASSERT_EQ(t.table.columns.size(), 5u);  // configuration, metric, sweep 1, sweep 2, ratio
  bool found = false;
  for (const auto& row : t.table.rows) {
    if (std::holds_alternative<double>(row[4])) {
      EXPECT_NEAR(std::get<double>(row[4]), 2.0, 1e-9);
      EXPECT_EQ(std::get<std::string>(row[1]), "aggregate_tps");
      found = true;
    } else {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(row[3])) << "a configuration absent from sweep 2 is empty";
    }
  }
  EXPECT_TRUE(found);
}

TEST(HtmlReport, HoldsEveryTrialTheFailuresAndTheCharts) {
  int64_t sweep = 0;
  auto sweeps = load_report_sweeps(sample_store(temp_dir(), sweep), {});
  ASSERT_TRUE(sweeps);
  const std::string html = html_report({*sweeps, "", "2026-12-03T08:00:00Z"});
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  // Self-contained: nothing is loaded from anywhere.
  for (const char* remote : {"src=\"http", "href=\"http", "<link ", "@import", "url("})
    EXPECT_EQ(html.find(remote), std::string::npos) << remote;
  const std::regex row(R"~(<tr><td>[^<]*</td><td class="n" data-v="(\d+)">)~");
  const size_t trials_start = html.find("<table id=\"trials\"");
  ASSERT_NE(trials_start, std::string::npos);
  const std::string trials = html.substr(trials_start, html.find("</table>", trials_start) - trials_start);
  std::set<int64_t> ids;
  for (auto it = std::sregex_iterator(trials.begin(), trials.end(), row); it != std::sregex_iterator(); ++it)
    ids.insert(std::stoll((*it)[1]));
  std::set<int64_t> expected;
  for (const ReportTrial& t : sweeps->front().trials) expected.insert(t.id);
  EXPECT_EQ(ids, expected);
  EXPECT_NE(html.find("synthetic failure"), std::string::npos);  // the failed trials' reason
  EXPECT_NE(html.find("Throughput against latency"), std::string::npos);
  EXPECT_NE(html.find("by -t"), std::string::npos);   // a chart over the threads dimension
  EXPECT_NE(html.find("by -np"), std::string::npos);  // and over -np
  EXPECT_NE(html.find("Test CPU 9000"), std::string::npos);
  EXPECT_NE(html.find("infertune run -m"), std::string::npos);  // the recommendation's command line
}

TEST(ReportCli, WritesHtmlCsvAndMarkdownAndLeavesTheStoreAsItWas) {
  const auto dir = temp_dir();
  int64_t sweep = 0;
  const auto db = sample_store(dir, sweep);
  const std::string before = read_text(db);
  const auto html = run_command(infertune_binary() + " report --db " + db.string() + " -o " + (dir / "r.html").string() + " 2>&1");
  ASSERT_EQ(html.exit_code, 0) << html.output;
  EXPECT_NE(read_text(dir / "r.html").find("</html>"), std::string::npos);
  const auto csv = run_command(infertune_binary() + " report --db " + db.string() + " -o " + (dir / "r.csv").string() + " 2>&1");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  const std::string trials_csv = read_text(dir / "r.csv");
  EXPECT_EQ(std::count(trials_csv.begin(), trials_csv.end(), '\n'), 9);  // header + 8 trials
  EXPECT_TRUE(std::filesystem::exists(dir / "r.recommendations.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "r.failed.csv"));
  const auto md = run_command(infertune_binary() + " report --db " + db.string() + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.output;
  for (const char* heading : {"## Recommendations", "## All trials", "## Failed trials", "| sweep |"})
    EXPECT_NE(md.output.find(heading), std::string::npos) << heading;
  EXPECT_EQ(read_text(db), before) << "report must not change the store";
  EXPECT_FALSE(std::filesystem::exists(db.string() + "-wal") && std::filesystem::file_size(db.string() + "-wal") > 0);
}

TEST(ReportCli, RefusesWhatIsNotAStoreAndTouchesNothing) {
  const auto dir = temp_dir();
  const auto empty = dir / "empty.db";
  std::ofstream(empty).close();
  const auto r1 = run_command(infertune_binary() + " report --db " + empty.string() + " 2>&1");
  EXPECT_EQ(r1.exit_code, 1) << r1.output;
  EXPECT_NE(r1.output.find("empty.db"), std::string::npos) << r1.output;
  EXPECT_NE(r1.output.find("not an infertune results store"), std::string::npos) << r1.output;
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);

  const auto other = dir / "other.db";
  ASSERT_EQ(run_command("sqlite3 " + other.string() + " 'CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES (1);'").exit_code, 0);
  const std::string before = read_text(other);
  const auto r2 = run_command(infertune_binary() + " report --db " + other.string() + " 2>&1");
  EXPECT_EQ(r2.exit_code, 1) << r2.output;
  EXPECT_NE(r2.output.find("other.db"), std::string::npos) << r2.output;
  EXPECT_NE(r2.output.find("notes"), std::string::npos) << r2.output;
  EXPECT_EQ(read_text(other), before);

  const auto missing = run_command(infertune_binary() + " report --db " + (dir / "missing.db").string() + " 2>&1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing.db"));
  const auto format = run_command(infertune_binary() + " report --db x.db --format pdf 2>&1");
  EXPECT_EQ(format.exit_code, 1);
  EXPECT_NE(format.output.find("--format pdf"), std::string::npos) << format.output;
}

}  // namespace
}  // namespace infertune

namespace infertune {
namespace {

using namespace test;

// Six sweeps of the same configuration, the last three 30% slower: the history section draws it and names
// the change.
TEST(HtmlReport, HistoryAcrossSweepsMarksTheChange) {
  const auto dir = temp_dir();
  int64_t sweep = 0;
  const auto db = dir / "results.db";
  auto store = store_with_sweep(db, sweep);
  const nlohmann::json config = trial_config(2, 1, single_workload("tg", 0, 32));
  record(store, sweep, {config, {{metric::kGenTokensPerSecond, around(100, 1)}}});
  for (int i = 1; i < 6; ++i) {
    auto next = store.create_sweep({"threads: [2]\n", "spec" + std::to_string(i), 1, 1, ""});
    ASSERT_TRUE(next);
    const double level = i < 3 ? 100 : 70;
    record(store, *next, {config, {{metric::kGenTokensPerSecond, around(level + i % 2, 1)}}});
  }
  const auto out = dir / "r.html";
  const auto r = run_command(infertune_binary() + " report --db " + db.string() + " -o " + out.string() + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_text(out);
  ASSERT_NE(html.find("<section id=\"history\""), std::string::npos);
  EXPECT_NE(html.find("class=\"marker\""), std::string::npos);
  EXPECT_NE(html.find("regression"), std::string::npos);
  std::smatch change;
  ASSERT_TRUE(std::regex_search(html, change, std::regex(R"(regression (-\d+\.\d)%)"))) << "the change's size";
  EXPECT_NEAR(std::stod(change[1]), -29.5, 1.5);
}

TEST(HtmlReport, NoHistorySectionForASingleSweep) {
  int64_t sweep = 0;
  const auto dir = temp_dir();
  const auto db = sample_store(dir, sweep);
  const auto r = run_command(infertune_binary() + " report --db " + db.string());
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.find("<section id=\"history\""), std::string::npos);
}

}  // namespace
}  // namespace infertune
