#pragma once
// What the sweep runner's end-to-end tests share: the tiny sweep they run on the f32 fixture, running the
// real binary as a child process that a test can signal or SIGKILL, and reading the store it wrote.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sweeps/store/results_store.h"
#include "test_support.h"

namespace infertune::test {

// 6 planned trials on one reload group: pp8, tg4 and pp8+tg4 at two contexts; pp8+tg4 does not fit -c 10
// (skipped), and pp8 at -c 0 is pp8 at -c 8, so 5 run.
inline std::vector<std::string> tiny_sweep_args(const std::filesystem::path& db) {
  return {"sweep",      "-m",         fixture_path("models/fixture-llama-f32.gguf").string(),
          "-t",         "1",          "-c",
          "0,10",       "-p",         "8",
          "-n",         "4",          "--pg",
          "8,4",        "--min-reps", "1",
          "--max-reps", "2",          "--db",
          db.string()};
}
inline constexpr size_t kTinyPlanned = 6, kTinySkipped = 1;

inline std::string join_args(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& a : args) line += " '" + a + "'";
  return line;
}

// The plan's config hashes, from `sweep --dry-run --json`.
inline std::set<std::string> planned_hashes(std::vector<std::string> args) {
  args.push_back("--dry-run");
  args.push_back("--json");
  const auto r = run_command(infertune_binary() + join_args(args) + " 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> hashes;
  const auto plan = nlohmann::json::parse(r.output, nullptr, false);
  if (plan.is_discarded() || !plan.contains("groups")) {
    ADD_FAILURE() << "not a plan: " << r.output;
    return hashes;
  }
  for (const auto& group : plan["groups"]) {
    for (const auto& t : group["trials"]) hashes.insert(t["config_hash"].get<std::string>());
  }
  return hashes;
}

// The binary run with `args`, its stdout and stderr going to `log`.
class RunnerProcess {
 public:
  RunnerProcess(const std::vector<std::string>& args, const std::filesystem::path& log) {
    std::vector<std::string> argv{infertune_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> c_argv;
      for (auto& a : argv) c_argv.push_back(a.data());
      c_argv.push_back(nullptr);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
  }
  ~RunnerProcess() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      wait_for(std::chrono::seconds(10));
    }
  }
  pid_t pid() const { return pid_; }
  void signal(int sig) const { kill(pid_, sig); }
  // The exit code (128 + signal when killed), or -1 when it is still running at the deadline.
  int wait_for(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (r < 0 || std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs to the end (at most a minute); the exit code.
inline int run_to_end(const std::vector<std::string>& args, const std::filesystem::path& log) {
  RunnerProcess p(args, log);
  return p.wait_for(std::chrono::seconds(60));
}

inline ResultsStore open_store(const std::filesystem::path& db) {
  auto store = ResultsStore::open(db, {.create = false});
  if (!store) throw std::runtime_error(store.error().message);
  return std::move(*store);
}

inline std::string integrity_check(ResultsStore& store) {
  auto q = store.database().prepare("PRAGMA integrity_check");
  if (!q) return q.error().message;
  std::string all;
  while (true) {
    auto row = q->step();
    if (!row || !*row) break;
    all += q->column_text(0);
  }
  return all;
}

}  // namespace infertune::test
