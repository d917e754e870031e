// `infertune sweep` running for real on the f32 fixture: every planned trial recorded once with its status,
// the export, a finished sweep that --resume leaves alone, Ctrl-C (once: after the current trial; twice: at
// once) and the time budget leaving trials that --resume completes.
#include <gtest/gtest.h>

#include <map>

#include "sweep_runner_support.h"
#include "sweeps/run/fault_injection.h"

namespace infertune {
namespace {

using namespace std::chrono_literals;
using test::RunnerProcess;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::map<std::string, TrialStatus> statuses_by_hash(ResultsStore& store, int64_t sweep_id) {
  std::map<std::string, TrialStatus> out;
  auto trials = store.trials(sweep_id);
  EXPECT_TRUE(trials) << trials.error().message;
  if (!trials) return out;
  for (const auto& t : *trials) {
    EXPECT_TRUE(out.emplace(t.trial.config_hash, t.trial.status).second) << "recorded twice: " << t.trial.config_hash;
  }
  return out;
}

SweepStatus sweep_status(const std::filesystem::path& db, int64_t id) {
  auto store = test::open_store(db);
  auto sweep = store.find_sweep(id);
  if (!sweep || !*sweep) throw std::runtime_error("no sweep");
  return (*sweep)->status;
}

// Polls the store until it holds at least `n` trials of sweep 1 that ran (not skipped).
bool wait_for_run_trials(const std::filesystem::path& db, size_t n, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(db)) {
      auto store = ResultsStore::open(db, {.create = false});
      if (store) {
        auto trials = store->trials(1);
        if (trials && size_t(std::ranges::count_if(
                          *trials, [](const StoredTrial& t) { return t.trial.status != TrialStatus::skipped; })) >= n) {
          return true;
        }
      }
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

void expect_complete(const std::filesystem::path& db, const std::set<std::string>& planned) {
  auto store = test::open_store(db);
  const auto statuses = statuses_by_hash(store, 1);
  std::set<std::string> recorded;
  size_t skipped = 0;
  for (const auto& [hash, status] : statuses) {
    recorded.insert(hash);
    if (status == TrialStatus::skipped) {
      ++skipped;
    } else {
      EXPECT_EQ(status, TrialStatus::ok) << hash;
    }
  }
  EXPECT_EQ(recorded, planned);
  EXPECT_EQ(skipped, test::kTinySkipped);
  EXPECT_EQ(test::integrity_check(store), "ok");
  auto sweep = store.find_sweep(1);
  ASSERT_TRUE(sweep && *sweep);
  EXPECT_EQ((*sweep)->status, SweepStatus::done);
  auto second = store.find_sweep(2);
  ASSERT_TRUE(second);
  EXPECT_FALSE(*second) << "a resume created a new sweep";
}

TEST(SweepRunnerRun, TinySweepRecordsEveryTrialOnceAndExportsThem) {
  const auto dir = test::temp_dir();
  const auto db = dir / "results.db";
  const auto args = test::tiny_sweep_args(db);
  const auto planned = test::planned_hashes(args);
  ASSERT_EQ(planned.size(), test::kTinyPlanned);
  const auto log = dir / "log.txt";
  ASSERT_EQ(test::run_to_end(args, log), 0) << test::read_text(log);
  const std::string out = test::read_text(log);
  EXPECT_NE(out.find("sweep 1 done: 5 ok, 0 failed, 1 skipped"), std::string::npos) << out;
  EXPECT_NE(out.find("[1/5] ok      pp8"), std::string::npos) << out;  // not a terminal: plain lines
  EXPECT_NE(out.find("[5/5] ok"), std::string::npos) << out;
  expect_complete(db, planned);
  {
    auto store = test::open_store(db);
    auto trials = store.trials(1);
    ASSERT_TRUE(trials);
    for (const auto& t : *trials) {
      EXPECT_TRUE(t.trial.predicted_peak_rss_bytes) << t.trial.config_json;
      EXPECT_TRUE(t.trial.model_id) << t.trial.config_json;
      if (t.trial.status != TrialStatus::ok) continue;
      EXPECT_TRUE(t.trial.peak_rss_bytes) << t.trial.config_json;
      EXPECT_FALSE(t.metrics.empty()) << t.trial.config_json;
      auto samples = store.samples(t.id);
      ASSERT_TRUE(samples);
      EXPECT_FALSE(samples->empty());
    }
    // The stored spec reads back to the same plan: --resume ID needs nothing else.
    auto sweep = store.find_sweep(1);
    ASSERT_TRUE(sweep && *sweep);
    EXPECT_NE((*sweep)->spec.find("fixture-llama-f32.gguf"), std::string::npos) << (*sweep)->spec;
  }
  const auto exported = test::run_command(test::infertune_binary() + " export --format json --sweep 1 --db " +
                                          db.string() + " 2>/dev/null");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const auto rows = nlohmann::json::parse(exported.output);
  ASSERT_EQ(rows.size(), test::kTinyPlanned);
  std::set<std::string> exported_hashes;
  for (const auto& row : rows) {
    exported_hashes.insert(row["config_hash"].get<std::string>());
    if (row["status"] == "ok") {
      EXPECT_TRUE(row["pp_tps"].is_number() || row["tg_tps"].is_number()) << row.dump();
    }
  }
  EXPECT_EQ(exported_hashes, planned);

  // A finished sweep: --resume (by spec, and by id alone) runs nothing.
  const auto again = dir / "again.txt";
  EXPECT_EQ(test::run_to_end(with(args, {"--resume"}), again), 0) << test::read_text(again);
  EXPECT_NE(test::read_text(again).find("sweep 1 is complete"), std::string::npos) << test::read_text(again);
  const auto by_id = dir / "by_id.txt";
  EXPECT_EQ(test::run_to_end({"sweep", "--resume", "1", "--db", db.string()}, by_id), 0) << test::read_text(by_id);
  EXPECT_NE(test::read_text(by_id).find("sweep 1 is complete"), std::string::npos) << test::read_text(by_id);
  expect_complete(db, planned);
}

TEST(SweepRunnerRun, CtrlCStopsAfterTheCurrentTrialAndResumeCompletes) {
  const auto dir = test::temp_dir();
  const auto db = dir / "results.db";
  const auto args = test::tiny_sweep_args(db);
  const auto log = dir / "log.txt";
  {
    // Each trial idles 0.5 s first, so the sweep is still running when the signal comes.
    RunnerProcess runner(with(args, {"--cooldown", "0.5"}), log);
    ASSERT_TRUE(wait_for_run_trials(db, 1, 30s)) << test::read_text(log);
    runner.signal(SIGINT);
    EXPECT_EQ(runner.wait_for(30s), 3) << test::read_text(log);
  }
  const std::string out = test::read_text(log);
  EXPECT_NE(out.find("interrupted (interrupted by SIGINT)"), std::string::npos) << out;
  EXPECT_NE(out.find("resume with: infertune sweep --resume 1"), std::string::npos) << out;
  EXPECT_EQ(sweep_status(db, 1), SweepStatus::interrupted);
  {
    auto store = test::open_store(db);
    const size_t recorded = statuses_by_hash(store, 1).size();
    EXPECT_LT(recorded, test::kTinyPlanned);  // it stopped: not every trial ran
  }
  const auto resumed = dir / "resumed.txt";
  ASSERT_EQ(
      test::run_to_end({"sweep", "--resume", "1", "--db", db.string(), "--min-reps", "1", "--max-reps", "2"}, resumed),
      0)
      << test::read_text(resumed);
  expect_complete(db, test::planned_hashes(args));
}

TEST(SweepRunnerRun, AWorkerStoppedFromOutsideLeavesItsTrialForResume) {
  // SIGTERM reaching the worker alone (a batch system signals every process of a job): the trial is not a
  // failure; the others run, the sweep ends interrupted, and --resume runs that one trial.
  const auto dir = test::temp_dir();
  const auto db = dir / "results.db";
  const auto args = test::tiny_sweep_args(db);
  const auto r = test::run_command(std::string(kSweepFaultVariable) + "=term@0 " + test::infertune_binary() +
                                   test::join_args(args) + " 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("stopped by signal 15 from outside; the trial is not recorded"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 not run yet"), std::string::npos) << r.output;
  {
    auto store = test::open_store(db);
    const auto statuses = statuses_by_hash(store, 1);
    EXPECT_EQ(statuses.size(), test::kTinyPlanned - 1);
    for (const auto& [hash, status] : statuses) EXPECT_NE(status, TrialStatus::failed);
  }
  const auto resumed = dir / "resumed.txt";
  ASSERT_EQ(test::run_to_end(with(args, {"--resume"}), resumed), 0) << test::read_text(resumed);
  expect_complete(db, test::planned_hashes(args));
}

TEST(SweepRunnerRun, SecondCtrlCStopsAtOnce) {
  const auto dir = test::temp_dir();
  const auto db = dir / "results.db";
  const auto args = test::tiny_sweep_args(db);
  const auto log = dir / "log.txt";
  {
    // A 20 s cooldown per trial: only stopping at once ends this run quickly.
    RunnerProcess runner(with(args, {"--cooldown", "20"}), log);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (test::read_text(log).find("in 1 reload groups") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    std::this_thread::sleep_for(300ms);  // the worker is started and idling
    runner.signal(SIGINT);
    std::this_thread::sleep_for(100ms);
    runner.signal(SIGINT);
    EXPECT_EQ(runner.wait_for(10s), 3) << test::read_text(log);
  }
  EXPECT_NE(test::read_text(log).find("stopped at once by a second SIGINT"), std::string::npos) << test::read_text(log);
  EXPECT_EQ(sweep_status(db, 1), SweepStatus::interrupted);
  {
    auto store = test::open_store(db);
    const auto statuses = statuses_by_hash(store, 1);
    for (const auto& [hash, status] : statuses)
      EXPECT_EQ(status, TrialStatus::skipped) << "the killed trial is not a result";
    EXPECT_EQ(test::integrity_check(store), "ok");
  }
  const auto resumed = dir / "resumed.txt";
  ASSERT_EQ(test::run_to_end(with(args, {"--resume"}), resumed), 0) << test::read_text(resumed);
  expect_complete(db, test::planned_hashes(args));
}

TEST(SweepRunnerRun, TimeBudgetLeavesTrialsForResume) {
  const auto dir = test::temp_dir();
  const auto db = dir / "results.db";
  // Trials of at least 0.4 s (the cooldown) under a 0.5 s budget: one trial per run.
  const auto args = with(test::tiny_sweep_args(db), {"--time-budget", "0.5", "--cooldown", "0.4"});
  const auto log = dir / "log.txt";
  EXPECT_EQ(test::run_to_end(args, log), 3) << test::read_text(log);
  EXPECT_NE(test::read_text(log).find("(time budget"), std::string::npos) << test::read_text(log);
  EXPECT_EQ(sweep_status(db, 1), SweepStatus::interrupted);
  size_t runs = 1;
  for (int code = 3; code == 3 && runs < 10; ++runs) {
    code = test::run_to_end(with(args, {"--resume"}), log);
    ASSERT_TRUE(code == 0 || code == 3) << test::read_text(log);
  }
  EXPECT_GT(runs, 2u);  // the budget stopped more than the first run
  expect_complete(db, test::planned_hashes(args));
}

}  // namespace
}  // namespace infertune
