// Crash safety of the results store: a writer process killed with SIGKILL — between trials, inside
// record_trial's transaction, or inside an open transaction on purpose — loses no committed trial, leaves
// no partial one, and leaves a database that opens and passes PRAGMA integrity_check.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "store_test_data.h"
#include "sweeps/store/sqlite_transaction.h"
#include "test_support.h"

namespace infertune {
namespace {

constexpr size_t kItlSamplesPerTrial = 200;  // makes each transaction long enough to be hit by the kill
constexpr int kTrialsPerWriter = 100000;     // more than a writer gets through before it is killed

int64_t scalar(ResultsStore& store, const std::string& sql) {
  auto q = store.database().prepare(sql);
  EXPECT_TRUE(q) << q.error().message;
  EXPECT_TRUE(*q->step()) << sql;
  return q->column_int(0);
}

std::string integrity(ResultsStore& store) {
  auto q = store.database().prepare("PRAGMA integrity_check");
  EXPECT_TRUE(q);
  EXPECT_TRUE(*q->step());
  return q->column_text(0);
}

// The child: resumes the sweep (skipping what is done) and reports each committed trial's index on `fd`.
[[noreturn]] void write_trials(const std::filesystem::path& path, int64_t sweep, int fd) {
  auto store = ResultsStore::open(path);
  if (!store) _exit(3);
  auto done = store->done_config_hashes(sweep);
  if (!done) _exit(4);
  for (int i = 0; i < kTrialsPerWriter; ++i) {
    TrialRecord t = test::test_trial(sweep, i, kItlSamplesPerTrial);
    if (done->count(t.config_hash)) continue;
    if (!store->record_trial(t)) _exit(5);
    if (write(fd, &i, sizeof i) != sizeof i) _exit(6);
  }
  _exit(0);
}

// Reads `want` reports, waits a random moment, kills the child; returns every index it reported.
std::set<int> kill_after(pid_t child, int fd, int want, std::mt19937& rng) {
  std::set<int> reported;
  int index = 0;
  while (static_cast<int>(reported.size()) < want && read(fd, &index, sizeof index) == sizeof index) {
    reported.insert(index);
  }
  std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 3000)(rng)));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer ended early, status " << status;
  // What it reported before dying is committed too.
  while (read(fd, &index, sizeof index) == sizeof index) reported.insert(index);
  return reported;
}

TEST(StoreCrash, SigkillDuringRecordingLosesNoCommittedTrialAndDuplicatesNone) {
  const auto path = test::temp_dir() / "r.db";
  int64_t sweep = 0;
  { test::store_with_sweep(path, sweep); }  // closed before forking: a connection never crosses fork()

  std::mt19937 rng(12345);
  std::set<int> committed;
  for (int round = 0; round < 4; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      write_trials(path, sweep, fds[1]);
    }
    close(fds[1]);
    const std::set<int> reported = kill_after(child, fds[0], 5 + 3 * round, rng);
    close(fds[0]);
    committed.insert(reported.begin(), reported.end());

    auto store = ResultsStore::open(path, {.create = false});
    ASSERT_TRUE(store) << store.error().message;
    EXPECT_EQ(integrity(*store), "ok") << "round " << round;
    // Each writer resumes where the last stopped, so the trials are always 0..n-1: nothing lost or doubled.
    const int64_t n = scalar(*store, "SELECT count(*) FROM trials");
    EXPECT_EQ(scalar(*store, "SELECT count(DISTINCT config_hash) FROM trials"), n);
    EXPECT_GE(n, static_cast<int64_t>(committed.size()));
    auto done = store->done_config_hashes(sweep);
    ASSERT_TRUE(done);
    for (int i : committed) EXPECT_TRUE(done->count("config-" + std::to_string(i))) << "lost trial " << i;
    for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(done->count("config-" + std::to_string(i))) << "gap at " << i;
    // No partial trial: every trial has all its samples and both summaries.
    EXPECT_EQ(scalar(*store, "SELECT count(*) FROM samples"), n * static_cast<int64_t>(7 + kItlSamplesPerTrial));
    EXPECT_EQ(scalar(*store, "SELECT count(*) FROM metrics"), n * 3);
    EXPECT_EQ(scalar(*store, "SELECT count(*) FROM trial_summary WHERE pp_tps IS NULL"), 0);
  }
  EXPECT_GE(committed.size(), 5u + 8u + 11u + 14u);
}

TEST(StoreCrash, SigkillInsideAnOpenTransactionLeavesNothingOfIt) {
  const auto path = test::temp_dir() / "r.db";
  int64_t sweep = 0;
  {
    ResultsStore store = test::store_with_sweep(path, sweep);
    ASSERT_TRUE(store.record_trial(test::test_trial(sweep, 0)));
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto store = ResultsStore::open(path);
    if (!store) _exit(3);
    auto transaction = Transaction::begin_immediate(store->database());
    if (!transaction) _exit(4);
    // Far more than the page cache holds, so pages of the transaction reach the WAL file before the kill.
    for (int i = 1; i <= 5000; ++i) {
      const std::string sql = "INSERT INTO trials (sweep_id, config_hash, config, status) VALUES (" +
                              std::to_string(sweep) + ", 'uncommitted-" + std::to_string(i) + "', '{\"pad\": \"" +
                              std::string(1000, 'x') + "\"}', 'ok')";
      if (!store->database().exec(sql)) _exit(5);
    }
    const char ready = 'r';
    if (write(fds[1], &ready, 1) != 1) _exit(6);
    pause();
    _exit(0);
  }
  close(fds[1]);
  char ready = 0;
  ASSERT_EQ(read(fds[0], &ready, 1), 1);
  close(fds[0]);
  const auto wal = std::filesystem::path(path.string() + "-wal");
  EXPECT_GT(std::filesystem::file_size(wal), 1'000'000u) << "the transaction should have spilled into the WAL";
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);

  auto store = ResultsStore::open(path, {.create = false});
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ(integrity(*store), "ok");
  EXPECT_EQ(scalar(*store, "SELECT count(*) FROM trials"), 1);
  EXPECT_EQ(scalar(*store, "SELECT count(*) FROM trials WHERE config_hash LIKE 'uncommitted-%'"), 0);
  EXPECT_TRUE(store->record_trial(test::test_trial(sweep, 1)));  // and it takes writes again
}

}  // namespace
}  // namespace infertune
