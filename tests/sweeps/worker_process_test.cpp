// The worker process wrapper, on /bin/sh children: pipes both ways, the stderr tail, deadlines, the process
// group, the address-space limit, descriptor hygiene, and how each way of ending is classified.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "process_group_check.h"
#include "sweeps/run/worker_process.h"
#include "test_support.h"

namespace infertune {
namespace {

using std::chrono::milliseconds;
using Clock = WorkerProcess::Clock;

WorkerProcess shell(const std::string& script, std::optional<uint64_t> memory_limit = std::nullopt,
                    std::vector<std::string> environment = {}) {
  auto p = WorkerProcess::start(WorkerCommand{"/bin/sh", {"-c", script}, std::move(environment), memory_limit});
  EXPECT_TRUE(p) << p.error().message;
  return std::move(p).value();
}

WorkerProcess::Line line_of(WorkerProcess& p) { return p.next_line(Clock::now() + std::chrono::seconds(10)); }

// Killed processes vanish a moment after the kill is sent: wait for that, a short while.
bool group_is_gone(pid_t pgid) {
  for (int i = 0; i < 200; ++i) {
    if (test::live_processes_in_group(pgid) == 0) return true;
    usleep(10'000);
  }
  return false;
}

TEST(WorkerProcess, ReadsLinesAndKeepsTheStderrTail) {
  WorkerProcess p = shell("echo one; echo err1 >&2; printf 'two\\nthree'; echo err2 >&2");
  auto a = line_of(p);
  ASSERT_EQ(a.state, WorkerProcess::LineState::line);
  EXPECT_EQ(a.text, "one");
  auto b = line_of(p);
  ASSERT_EQ(b.state, WorkerProcess::LineState::line);
  EXPECT_EQ(b.text, "two");
  EXPECT_EQ(line_of(p).state, WorkerProcess::LineState::closed);  // "three" has no newline: dropped
  const WorkerExit exit = p.finish(milliseconds(2000));
  EXPECT_TRUE(exit.exited);
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_FALSE(exit.killed_by_us);
  EXPECT_EQ(p.stderr_tail(), (std::vector<std::string>{"err1", "err2"}));
}

TEST(WorkerProcess, InputReachesTheChildAndClosingItIsEndOfFile) {
  WorkerProcess p = shell("read line; echo got:$line; cat >/dev/null; echo eof");
  ASSERT_TRUE(p.write_input("hello\n", Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(line_of(p).text, "got:hello");
  p.close_input();
  EXPECT_EQ(line_of(p).text, "eof");
  EXPECT_EQ(p.finish(milliseconds(2000)).exit_code, 0);
}

TEST(WorkerProcess, StderrKeepsOnlyTheLastLines) {
  WorkerProcess p = shell("i=0; while [ $i -lt 50 ]; do echo line$i >&2; i=$((i+1)); done");
  p.finish(milliseconds(5000));
  const auto tail = p.stderr_tail();
  ASSERT_EQ(tail.size(), WorkerProcess::kStderrLines);
  EXPECT_EQ(tail.front(), "line30");
  EXPECT_EQ(tail.back(), "line49");
}

TEST(WorkerProcess, ASignalIsNamedInTheReason) {
  WorkerProcess p = shell("echo about to crash >&2; kill -SEGV $$");
  EXPECT_EQ(line_of(p).state, WorkerProcess::LineState::closed);
  const WorkerExit exit = p.finish(milliseconds(2000));
  ASSERT_TRUE(exit.signaled);
  EXPECT_EQ(exit.signal, SIGSEGV);
  const WorkerFailure f = classify_worker_end(exit, 0, p.stderr_tail());
  EXPECT_EQ(f.status, TrialStatus::failed);
  EXPECT_NE(f.reason.find("killed by signal 11 (Segmentation fault)"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("last stderr: about to crash"), std::string::npos) << f.reason;
}

TEST(WorkerProcess, DeadlineThenKillTakesTheWholeGroup) {
  // sh starts sleep as a child: the kill must reach it too (it shares the worker's group).
  WorkerProcess p = shell("sleep 30; echo never");
  const pid_t pid = p.pid();
  EXPECT_EQ(getpgid(pid), pid) << "the worker leads its own process group";
  EXPECT_NE(getpgid(pid), getpgid(0));
  const auto line = p.next_line(Clock::now() + milliseconds(200));
  EXPECT_EQ(line.state, WorkerProcess::LineState::deadline);
  EXPECT_EQ(test::live_processes_in_group(pid), 2u) << "sh and its sleep";
  p.kill_group();
  const WorkerExit exit = p.finish(milliseconds(2000));
  EXPECT_TRUE(exit.killed_by_us);
  EXPECT_TRUE(exit.signaled);
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_TRUE(group_is_gone(pid));
  const WorkerFailure f = classify_worker_end(exit, 3, p.stderr_tail());
  EXPECT_EQ(f.status, TrialStatus::timeout);
  EXPECT_EQ(f.reason, "timeout after 3 s");
}

TEST(WorkerProcess, FinishKillsAWorkerThatDoesNotExitInTime) {
  WorkerProcess p = shell("trap '' TERM; sleep 30");
  const pid_t pid = p.pid();
  const WorkerExit exit = p.finish(milliseconds(200));
  EXPECT_TRUE(exit.killed_by_us);
  EXPECT_TRUE(group_is_gone(pid));
}

TEST(WorkerProcess, DestroyingItKillsAndReapsTheGroup) {
  pid_t pid = 0;
  {
    WorkerProcess p = shell("sleep 30");
    pid = p.pid();
    ASSERT_EQ(kill(pid, 0), 0);
  }
  EXPECT_TRUE(group_is_gone(pid));
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1) << "already reaped";
}

TEST(WorkerProcess, MemoryLimitIsTheChildsAddressSpaceLimit) {
  WorkerProcess p = shell("ulimit -v", uint64_t(1) << 30);
  EXPECT_EQ(line_of(p).text, "1048576");  // KiB
  p.finish(milliseconds(2000));
  WorkerProcess unlimited = shell("ulimit -v");
  EXPECT_EQ(line_of(unlimited).text, "unlimited");
}

TEST(WorkerProcess, ExtraEnvironmentIsAddedOrReplaced) {
  WorkerProcess p = shell("echo $INFERTUNE_TEST_A:$HOME", std::nullopt, {"INFERTUNE_TEST_A=x y", "HOME=/elsewhere"});
  EXPECT_EQ(line_of(p).text, "x y:/elsewhere");
}

TEST(WorkerProcess, DescriptorsOfTheRunnerStayOutOfTheWorker) {
  const int leaked = open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 3);
  WorkerProcess p = shell("ls /proc/$$/fd");
  std::vector<std::string> fds;
  for (auto l = line_of(p); l.state == WorkerProcess::LineState::line; l = line_of(p)) fds.push_back(l.text);
  close(leaked);
  EXPECT_EQ(std::count(fds.begin(), fds.end(), std::to_string(leaked)), 0) << "fd " << leaked << " leaked";
  for (const char* standard : {"0", "1", "2"}) EXPECT_EQ(std::count(fds.begin(), fds.end(), standard), 1);
}

TEST(WorkerProcess, AMissingExecutableIsAnErrorNamingIt) {
  auto p = WorkerProcess::start(WorkerCommand{"/nonexistent/infertune", {"sweep-worker"}, {}, std::nullopt});
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("/nonexistent/infertune"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("No such file"), std::string::npos) << p.error().message;
}

TEST(WorkerProcess, WritingToAWorkerThatIsGoneIsAnError) {
  WorkerProcess p = shell("exit 0");
  p.finish(milliseconds(2000));
  EXPECT_FALSE(
      p.write_input("anything\n", Clock::now() + std::chrono::seconds(10)));  // closed by finish: no SIGPIPE either way
  WorkerProcess q = shell("exec 0<&-; sleep 1");
  std::string big(1 << 20, 'x');
  EXPECT_FALSE(q.write_input(big, Clock::now() + std::chrono::seconds(10))) << "EPIPE, not a signal";
}

TEST(WorkerProcess, AWorkerThatDoesNotReadItsInputMeetsTheDeadline) {
  WorkerProcess p = shell("sleep 30");
  const std::string big(1 << 20, 'x');  // far more than a pipe holds
  const Status s = p.write_input(big, Clock::now() + milliseconds(200));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("did not read its input"), std::string::npos) << s.error().message;
}

TEST(WorkerExit, OutOfMemoryIsRecognised) {
  WorkerExit sigkill{.signaled = true, .signal = SIGKILL};
  EXPECT_EQ(classify_worker_end(sigkill, 0, {}).status, TrialStatus::oom);
  EXPECT_NE(classify_worker_end(sigkill, 0, {}).reason.find("out of memory (worker killed by SIGKILL)"),
            std::string::npos);
  WorkerExit ours = sigkill;
  ours.killed_by_us = true;
  EXPECT_EQ(classify_worker_end(ours, 0, {}).status, TrialStatus::failed);
  WorkerExit own_exit{.exited = true, .exit_code = kWorkerOutOfMemoryExitCode};
  EXPECT_EQ(classify_worker_end(own_exit, 0, {}).status, TrialStatus::oom);
  WorkerExit abort{.signaled = true, .signal = SIGABRT};
  EXPECT_EQ(classify_worker_end(abort, 0, {"terminate called after throwing an instance of 'std::bad_alloc'"}).status,
            TrialStatus::oom);
  EXPECT_EQ(classify_worker_end(abort, 0, {"assertion failed"}).status, TrialStatus::failed);
  WorkerExit exit3{.exited = true, .exit_code = 3};
  const WorkerFailure f = classify_worker_end(exit3, 0, {"a", "b"});
  EXPECT_EQ(f.status, TrialStatus::failed);
  EXPECT_EQ(f.reason, "worker exited with status 3; last stderr: a | b");
}

}  // namespace
}  // namespace infertune
