// `infertune recommend` end to end: a missing store is named, bad flags are errors, a sweep gives the
// table and the JSON document, and the store is only read (the sweep records its recommendations).
#include <gtest/gtest.h>

#include <fstream>

#include "recommend_test_data.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

TEST(RecommendCli, MissingDatabaseIsNamed) {
  const std::string db = (temp_dir() / "missing.db").string();
  const auto r = run_command(infertune_binary() + " recommend --db " + db + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("missing.db"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(db)) << "recommend must not create a store";
}

TEST(RecommendCli, BadFlagsAreErrors) {
  const std::string db = (temp_dir() / "results.db").string();
  for (const std::string flags : {"--scenario fastest", "-o yaml", "--max-mem lots"}) {
    const auto r = run_command(infertune_binary() + " recommend --db " + db + " " + flags + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << flags << ": " << r.output;
    EXPECT_NE(r.output.find(flags.substr(0, flags.find(' '))), std::string::npos) << r.output;
  }
}

TEST(RecommendCli, StoreWithoutSweepsSaysSo) {
  const auto db = temp_dir() / "results.db";
  ASSERT_TRUE(ResultsStore::open(db));
  const auto r = run_command(infertune_binary() + " recommend --db " + db.string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no sweeps"), std::string::npos) << r.output;
}

TEST(RecommendCli, LatestSweepTableAndJsonLeaveTheStoreUnchanged) {
  const auto dir = temp_dir();
  const auto db = dir / "results.db";
  int64_t sweep = 0;
  {
    auto store = store_with_sweep(db, sweep);
    record(store, sweep, {trial_config(1, 1, batched_workload(1)), batched_metrics(20, 50, 10)});
    record(store, sweep, {trial_config(2, 4, batched_workload(4)), batched_metrics(60, 80, 13)});
  }
  const std::string json_file = (dir / "rec.json").string();
  const auto table = run_command(infertune_binary() + " recommend --db " + db.string() + " --json " + json_file);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  for (const char* part : {"latency", "throughput", "mixed", "infertune run -m", "llama-server", "Pareto front"})
    EXPECT_NE(table.output.find(part), std::string::npos) << part << "\n" << table.output;
  std::ifstream in(json_file);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["sweep_id"], sweep);
  EXPECT_EQ(doc["scenarios"]["throughput"]["winner"]["n_parallel"], 4);

  const auto json = run_command(infertune_binary() + " recommend --db " + db.string() +
                                " --scenario latency -o json --sweep " + std::to_string(sweep));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json printed = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_TRUE(printed.is_object()) << json.output;
  EXPECT_EQ(printed["scenarios"].size(), 1u);
  EXPECT_EQ(printed["scenarios"]["latency"]["winner"]["n_parallel"], 1);

  auto store = ResultsStore::open_read_only(db);
  ASSERT_TRUE(store) << store.error().message;
  auto count = store->database().prepare("SELECT count(*) FROM recommendations WHERE sweep_id = ?");
  ASSERT_TRUE(count);
  count->bind(1, sweep);
  ASSERT_TRUE(count->step().value());
  EXPECT_EQ(count->column_int(0), 0) << "recommend only reads the store";
}

}  // namespace
}  // namespace infertune

namespace infertune {
namespace {

TEST(RecommendCli, DefaultIsTheLatestSweep) {
  using namespace test;
  const auto db = temp_dir() / "results.db";
  int64_t first = 0;
  auto store = store_with_sweep(db, first);
  record(store, first, {trial_config(1, 1, batched_workload(1)), batched_metrics(20, 50, 10)});
  auto second = store.create_sweep({"threads: [3]\n", "other-spec", 1, 1, ""});
  ASSERT_TRUE(second) << second.error().message;
  record(store, *second, {trial_config(3, 1, batched_workload(1)), batched_metrics(30, 40, 9)});
  auto latest = store.latest_sweep_id();
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ(**latest, *second);
  const auto r = run_command(infertune_binary() + " recommend --db " + db.string() + " -o json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.output;
  EXPECT_EQ(doc["sweep_id"], *second);
  EXPECT_EQ(doc["scenarios"]["throughput"]["winner"]["config"]["threads"], 3);
}

}  // namespace
}  // namespace infertune
