// `kill -9` of the sweep runner at random moments, then `--resume` until the sweep is done: every planned
// config hash is recorded exactly once, none is lost, every trial that ran is ok, one sweep row, and the
// database passes PRAGMA integrity_check. The kills land anywhere: before the sweep row exists, while
// skipped trials are written, during a trial, between the commit of one trial and the start of the next.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "sweep_runner_support.h"

namespace infertune {
namespace {

using namespace std::chrono_literals;

TEST(SweepRunnerKill, SigkillAtRandomPointsThenResumeLosesAndDuplicatesNothing) {
  const auto dir = test::temp_dir();
  for (unsigned seed : {1u, 2u, 3u}) {
    const auto db = dir / fmt::format("results-{}.db", seed);
    // A short cooldown stretches each trial, so a full run lasts about 2 s and the kills land inside it.
    auto args = test::tiny_sweep_args(db);
    args.insert(args.end(), {"--cooldown", "0.3"});
    const auto planned = test::planned_hashes(args);
    ASSERT_EQ(planned.size(), test::kTinyPlanned);
    const auto log = dir / fmt::format("log-{}.txt", seed);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> delay_ms(30, 1000);
    auto resume_args = args;
    resume_args.push_back("--resume");
    for (int round = 0; round < 5; ++round) {
      test::RunnerProcess runner(round == 0 ? args : resume_args, log);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
      runner.signal(SIGKILL);
      runner.wait_for(10s);
    }
    int code = -1;
    for (int attempt = 0; attempt < 5 && code != 0; ++attempt) code = test::run_to_end(resume_args, log);
    ASSERT_EQ(code, 0) << "seed " << seed << "\n" << test::read_text(log);

    auto store = test::open_store(db);
    EXPECT_EQ(test::integrity_check(store), "ok") << "seed " << seed;
    auto rows = store.database().prepare("SELECT COUNT(*), COUNT(DISTINCT config_hash) FROM trials");
    ASSERT_TRUE(rows);
    ASSERT_TRUE(rows->step());
    EXPECT_EQ(rows->column_int(0), int64_t(test::kTinyPlanned)) << "seed " << seed;
    EXPECT_EQ(rows->column_int(1), int64_t(test::kTinyPlanned)) << "seed " << seed;
    auto sweeps = store.database().prepare("SELECT COUNT(*), MIN(status) FROM sweeps");
    ASSERT_TRUE(sweeps);
    ASSERT_TRUE(sweeps->step());
    EXPECT_EQ(sweeps->column_int(0), 1) << "seed " << seed;
    EXPECT_EQ(sweeps->column_text(1), "done") << "seed " << seed;
    auto trials = store.trials(1);
    ASSERT_TRUE(trials) << trials.error().message;
    std::set<std::string> recorded;
    for (const auto& t : *trials) {
      EXPECT_TRUE(recorded.insert(t.trial.config_hash).second) << "seed " << seed;
      if (t.trial.status != TrialStatus::skipped) {
        EXPECT_EQ(t.trial.status, TrialStatus::ok) << "seed " << seed << ": " << t.trial.reason;
      }
    }
    EXPECT_EQ(recorded, planned) << "seed " << seed;
  }
}

}  // namespace
}  // namespace infertune
