// `infertune sweep --shard I/N` and `infertune merge` end to end: the slices of a sweep, run into three stores and
// merged, are the sweep run whole (the same trials with the same configurations, and the same candidates for the
// recommendation); merging again adds nothing; a partial merge says which slices it holds; each slice resumes on
// its own; and inputs merge cannot take are refused with OUT left as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sweeps/recommend/recommend.h"
#include "sweeps/store/results_store.h"
#include "sweeps/store/store_merge.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

// 6 trials (threads x ubatch x prompt; a 16-token prompt runs the same at either ubatch), one reload group, one
// repetition each.
std::string sweep_line(const fs::path& db, const std::string& more = "") {
  return test::infertune_binary() + " sweep -m " + test::fixture_path("models/fixture-llama-Q4_0.gguf").string() +
         " -t 1,2 -ub 16,32 -p 16,32 --min-reps 1 --max-reps 1 --no-warmup --db " + db.string() + more + " 2>&1";
}

std::string merge_line(const fs::path& out, const std::vector<fs::path>& inputs) {
  std::string line = test::infertune_binary() + " merge " + out.string();
  for (const fs::path& in : inputs) line += " " + in.string();
  return line + " 2>&1";
}

// config hash -> config, of the store's only sweep.
std::map<std::string, std::string> trial_configs(const fs::path& db) {
  auto store = ResultsStore::open_read_only(db);
  EXPECT_TRUE(store) << store.error().message;
  auto trials = store->trials(1);
  EXPECT_TRUE(trials) << trials.error().message;
  std::map<std::string, std::string> out;
  for (const StoredTrial& t : *trials) out[t.trial.config_hash] = t.trial.config_json;
  return out;
}

std::set<std::string> candidate_configs(const fs::path& db) {
  auto store = ResultsStore::open_read_only(db);
  EXPECT_TRUE(store) << store.error().message;
  RecommendOptions options;
  options.store_recommendations = false;
  auto report = recommend_sweep(*store, 1, options);
  EXPECT_TRUE(report) << report.error().message;
  std::set<std::string> out;
  for (const Candidate& c : report->candidates) out.insert(c.config.dump());
  return out;
}

class ShardedSweep : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Not test::temp_dir(): no test is running yet, and ctest runs this suite's tests as parallel processes, each
    // setting the suite up for itself.
    dir_ = new fs::path(fs::temp_directory_path() / ("infertune-sharded-sweep-" + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    for (int i = 1; i <= 3; ++i) {
      const auto r = test::run_command(sweep_line(shard_db(i), " --shard " + std::to_string(i) + "/3"));
      ASSERT_EQ(r.exit_code, 0) << r.output;
      ASSERT_NE(r.output.find("covers this slice only"), std::string::npos) << r.output;
    }
    const auto whole = test::run_command(sweep_line(whole_db()));
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static fs::path shard_db(int i) { return *dir_ / ("shard-" + std::to_string(i) + ".db"); }
  static fs::path whole_db() { return *dir_ / "whole.db"; }
  static fs::path* dir_;
};
fs::path* ShardedSweep::dir_ = nullptr;

TEST_F(ShardedSweep, MergedSlicesAreTheWholeSweep) {
  size_t sliced = 0;
  for (int i = 1; i <= 3; ++i) sliced += trial_configs(shard_db(i)).size();
  EXPECT_EQ(sliced, trial_configs(whole_db()).size());
  EXPECT_GE(sliced, 6u);
  const fs::path out = test::temp_dir() / "all.db";
  const auto r = test::run_command(merge_line(out, {shard_db(1), shard_db(2), shard_db(3)}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("it now holds the whole plan"), std::string::npos) << r.output;
  EXPECT_EQ(trial_configs(out), trial_configs(whole_db()));
  EXPECT_EQ(candidate_configs(out), candidate_configs(whole_db()));
  auto store = ResultsStore::open_read_only(out);
  ASSERT_TRUE(store);
  auto sweep = store->find_sweep(1);
  ASSERT_TRUE(sweep && *sweep);
  EXPECT_EQ((*sweep)->shard, "1,2,3/3");
  EXPECT_EQ((*sweep)->status, SweepStatus::done);
  EXPECT_FALSE(store->find_sweep(2).value());  // one sweep: same spec, host and build
  // The merged sweep's recommendations were recomputed over all of its trials and stored.
  auto recommended = store->database().prepare("SELECT count(*) FROM recommendations WHERE sweep_id = 1");
  ASSERT_TRUE(recommended && recommended->step().value());
  EXPECT_GT(recommended->column_int(0), 0);

  // Merging again changes nothing.
  const auto again = test::run_command(merge_line(out, {shard_db(1), shard_db(2), shard_db(3)}));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0 trials added"), std::string::npos) << again.output;
  EXPECT_EQ(trial_configs(out), trial_configs(whole_db()));
}

TEST_F(ShardedSweep, APartialMergeSaysWhichSlicesItHolds) {
  const fs::path out = test::temp_dir() / "part.db";
  auto r = test::run_command(merge_line(out, {shard_db(3), shard_db(1)}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("it now holds shards 1,3/3"), std::string::npos) << r.output;
  r = test::run_command(merge_line(out, {shard_db(2)}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("it now holds the whole plan"), std::string::npos) << r.output;
  EXPECT_EQ(trial_configs(out), trial_configs(whole_db()));
}

TEST_F(ShardedSweep, EachSliceResumesOnItsOwn) {
  const fs::path db = test::temp_dir() / "resume.db";
  fs::copy_file(shard_db(2), db);
  auto r = test::run_command(sweep_line(db, " --shard 2/3 --resume"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("complete: nothing to resume"), std::string::npos) << r.output;
  r = test::run_command(sweep_line(db, " --shard 3/3 --resume"));  // another slice: a sweep of its own
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("shard 3/3) in"), std::string::npos) << r.output;
  r = test::run_command(sweep_line(db, " --shard 1/3 --resume 1"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("sweep 1 ran shard 2/3, not shard 1/3"), std::string::npos) << r.output;
}

TEST_F(ShardedSweep, RefusedInputsLeaveTheOutputAsItWas) {
  const fs::path dir = test::temp_dir();
  const fs::path out = dir / "out.db";
  ASSERT_EQ(test::run_command(merge_line(out, {shard_db(1)})).exit_code, 0);
  const auto before = trial_configs(out);

  // A store of another schema version.
  const fs::path old = dir / "old.db";
  fs::copy_file(shard_db(2), old);
  {
    auto store = ResultsStore::open(old);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->database().exec("DELETE FROM schema_version WHERE version = 5"));
  }
  auto r = test::run_command(merge_line(out, {old}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("schema version 4, but this infertune's is 5"), std::string::npos) << r.output;

  // Not a store; the output itself; a missing file. The good input beside them is still merged.
  const fs::path text = dir / "notes.db";
  std::ofstream(text) << "not a database";
  r = test::run_command(merge_line(out, {text, out, dir / "missing.db"}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("is the output store itself"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("missing.db: no such results store"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 of 3 inputs not merged"), std::string::npos) << r.output;
  EXPECT_EQ(trial_configs(out), before);
}

TEST_F(ShardedSweep, TwoRunsOfOneSpecStayTwoSweeps) {
  // An A/A pair (compare --noise-from needs both): the second whole run is not "already there".
  const fs::path out = test::temp_dir() / "aa.db";
  const fs::path again = test::temp_dir() / "again.db";
  ASSERT_EQ(test::run_command(sweep_line(again)).exit_code, 0);
  auto r = test::run_command(merge_line(out, {whole_db(), again, whole_db()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto store = ResultsStore::open_read_only(out);
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->find_sweep(2).value());
  EXPECT_FALSE(store->find_sweep(3).value()) << r.output;  // the first store merged again joined its own sweep
  EXPECT_EQ(store->trials(1)->size(), store->trials(2)->size());
}

TEST(ShardUnion, SlicesAddUpToTheWholePlan) {
  EXPECT_EQ(union_of_shards("1/3", "3/3").value(), "1,3/3");
  EXPECT_EQ(union_of_shards("1,3/3", "2/3").value(), "1,2,3/3");
  EXPECT_TRUE(holds_every_slice("1,2,3/3"));
  EXPECT_TRUE(holds_every_slice(""));
  EXPECT_FALSE(holds_every_slice("1,3/3"));
  EXPECT_EQ(union_of_shards("", "2/3").value(), "");
  EXPECT_EQ(union_of_shards("2/4", "2/4").value(), "2/4");
  EXPECT_FALSE(union_of_shards("1/3", "1/4"));
}

}  // namespace
}  // namespace infertune
