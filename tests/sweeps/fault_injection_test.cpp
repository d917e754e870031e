// INFERTUNE_SWEEP_FAULT: which trials a rule names, the errors for bad entries, the guard on the oom fault,
// and that crash / hang / exit3 do what they say (each in a forked child).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "sanitizer_runtime.h"
#include "sweeps/run/fault_injection.h"

namespace infertune {
namespace {

TEST(FaultInjection, RulesNameTrialsByHashPrefixOrIndex) {
  auto plan = parse_fault_plan("crash:3f2a,hang@4,,oom:91,exit3@0");
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->rules.size(), 4u);
  EXPECT_EQ(plan->fault_for("3f2a000011112222", 9), FaultKind::crash);
  EXPECT_EQ(plan->fault_for("0000000000000000", 4), FaultKind::hang);
  EXPECT_EQ(plan->fault_for("91aa", 2), FaultKind::oom);
  EXPECT_EQ(plan->fault_for("dead", 0), FaultKind::exit3);
  EXPECT_FALSE(plan->fault_for("dead", 1).has_value());
  EXPECT_FALSE(plan->fault_for("a3f2", 1).has_value());  // a prefix, not a substring
  // The first rule that names a trial wins.
  EXPECT_EQ(plan->fault_for("3f2a", 4), FaultKind::crash);
}

TEST(FaultInjection, EmptyOrUnsetMeansNoFaults) {
  auto plan = parse_fault_plan("");
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->rules.empty());
  EXPECT_FALSE(plan->fault_for("anything", 0).has_value());
}

TEST(FaultInjection, BadEntriesAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"boom:abc", "unknown fault 'boom'"},
      {"crash", "'crash' is not KIND:HASHPREFIX or KIND@INDEX"},
      {"hang:", "'hang:'"},
      {"exit3@x1", "'x1' is not a trial index"},
      {"crash:ab,oom@-1", "'oom@-1'"},
  };
  for (const auto& [text, expected] : cases) {
    auto plan = parse_fault_plan(text);
    ASSERT_FALSE(plan) << text;
    EXPECT_NE(plan.error().message.find(expected), std::string::npos) << text << " -> " << plan.error().message;
    EXPECT_NE(plan.error().message.find(kSweepFaultVariable), std::string::npos) << plan.error().message;
  }
}

TEST(FaultInjection, OomNeedsAnAddressSpaceLimitBelow4GiB) {
  EXPECT_FALSE(check_oom_fault_allowed(RLIM_INFINITY));
  EXPECT_FALSE(check_oom_fault_allowed(4ull << 30));
  EXPECT_FALSE(check_oom_fault_allowed(24ull << 30));
  EXPECT_TRUE(check_oom_fault_allowed(1536ull << 20));
  const Status refused = check_oom_fault_allowed(RLIM_INFINITY);
  EXPECT_NE(refused.error().message.find("RLIMIT_AS"), std::string::npos) << refused.error().message;
}

TEST(FaultInjection, OomIsRefusedInAProcessWithoutALimit) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &limit), 0);
  if (limit.rlim_cur < (4ull << 30)) GTEST_SKIP() << "this test process runs under RLIMIT_AS < 4 GiB";
  const Status s = inject_fault(FaultKind::oom);  // must return at once, allocating nothing
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("RLIMIT_AS"), std::string::npos) << s.error().message;
}

// Runs the fault in a child and returns its wait status.
int status_of_child_with(FaultKind kind, bool kill_after_a_moment = false) {
  const pid_t child = fork();
  if (child == 0) {
    (void)inject_fault(kind);
    _exit(0);  // only an oom refusal returns
  }
  if (kill_after_a_moment) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int status = 0;
    EXPECT_EQ(waitpid(child, &status, WNOHANG), 0) << "the hang fault returned";
    kill(child, SIGKILL);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

TEST(FaultInjection, CrashRaisesSegv) {
  INFERTUNE_SKIP_UNDER_SANITIZER("handles SIGSEGV itself");
  const int status = status_of_child_with(FaultKind::crash);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
}

TEST(FaultInjection, TermRaisesSigterm) {
  const int status = status_of_child_with(FaultKind::term);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(FaultInjection, Exit3ExitsWithStatus3) {
  const int status = status_of_child_with(FaultKind::exit3);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST(FaultInjection, HangDoesNotReturn) {
  const int status = status_of_child_with(FaultKind::hang, /*kill_after_a_moment=*/true);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(FaultInjection, OomUnderALimitEndsInBadAlloc) {
  INFERTUNE_SKIP_UNDER_SANITIZER("cannot start under an address-space limit");
  const pid_t child = fork();
  if (child == 0) {
    const rlimit limit{512ull << 20, 512ull << 20};
    setrlimit(RLIMIT_AS, &limit);
    try {
      (void)inject_fault(FaultKind::oom);
    } catch (const std::bad_alloc&) {
      _exit(42);
    }
    _exit(1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 42);
}

}  // namespace
}  // namespace infertune
