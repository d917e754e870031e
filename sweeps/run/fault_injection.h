#pragma once
// Faults a sweep worker injects into chosen trials, so that tests (and anyone doubting the runner) can see a
// sweep survive a worker that crashes, hangs, runs out of memory or exits. Set in the worker's environment:
//
//   INFERTUNE_SWEEP_FAULT="crash:3f2a,hang:91,oom@4,exit3@0"
//
// Each comma-separated entry is KIND:HASHPREFIX (trials whose config hash starts with the prefix) or
// KIND@INDEX (the trial at that position of the sweep's run order, PlannedTrial::index). Kinds:
//   crash  raise(SIGSEGV) once the trial has started
//   hang   sleep forever (the runner's trial timeout ends it)
//   oom    allocate and touch memory without bound until allocation fails (std::bad_alloc). Refused (the
//          trial fails with a message saying why) unless the worker runs under an address-space limit
//          (RLIMIT_AS, the runner's memory limit) below 4 GiB, so it can never eat a shared machine.
//   exit3  _exit(3) at once, as a worker that quits with an error status would
//   term   raise(SIGTERM) once the trial has started, as a batch system's requeue or preemption signals every
//          process of a job (the runner does not record such a trial: it runs again on --resume)
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

inline constexpr const char* kSweepFaultVariable = "INFERTUNE_SWEEP_FAULT";

enum class FaultKind { crash, hang, oom, exit3, term };

struct FaultRule {
  FaultKind kind = FaultKind::crash;
  std::string hash_prefix;            // non-empty: matches by config hash
  std::optional<size_t> trial_index;  // set: matches by run-order index
};

struct FaultPlan {
  std::vector<FaultRule> rules;
  // The first rule that names this trial.
  std::optional<FaultKind> fault_for(std::string_view hash, size_t index) const;
};

// Errors name the entry that is wrong.
Result<FaultPlan> parse_fault_plan(std::string_view text);
// From INFERTUNE_SWEEP_FAULT; no rules when it is unset or empty.
Result<FaultPlan> fault_plan_from_environment();

// The oom fault's guard: fine only when an address-space limit below 4 GiB is given (RLIM_INFINITY: none).
Status check_oom_fault_allowed(unsigned long long address_space_limit);

// Makes the fault happen. crash, hang and exit3 never return; oom throws std::bad_alloc when memory runs
// out, or returns an error (touching nothing) when check_oom_fault_allowed refuses the process's RLIMIT_AS.
Status inject_fault(FaultKind kind);

}  // namespace infertune
