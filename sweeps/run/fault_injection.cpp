#include "sweeps/run/fault_injection.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

namespace infertune {

namespace {

constexpr std::array<std::string_view, 5> kKindNames{"crash", "hang", "oom", "exit3", "term"};
constexpr unsigned long long kOomLimitCeiling = 4ull << 30;

std::optional<FaultKind> kind_from_name(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<FaultKind>(i);
  }
  return std::nullopt;
}

Result<FaultRule> parse_rule(std::string_view entry) {
  const size_t at = entry.find_first_of(":@");
  if (at == std::string_view::npos) return fail("'{}' is not KIND:HASHPREFIX or KIND@INDEX", entry);
  auto kind = kind_from_name(entry.substr(0, at));
  if (!kind) return fail("'{}': unknown fault '{}' (crash, hang, oom, exit3, term)", entry, entry.substr(0, at));
  const std::string_view target = entry.substr(at + 1);
  if (target.empty()) return fail("'{}': no trial named after '{}'", entry, entry[at]);
  FaultRule rule;
  rule.kind = *kind;
  if (entry[at] == ':') {
    rule.hash_prefix = std::string(target);
    return rule;
  }
  size_t index = 0;
  const auto [end, ec] = std::from_chars(target.data(), target.data() + target.size(), index);
  if (ec != std::errc{} || end != target.data() + target.size()) {
    return fail("'{}': '{}' is not a trial index", entry, target);
  }
  rule.trial_index = index;
  return rule;
}

// Only kill_group's SIGKILL or the timeout ends this; sleep in a loop since a signal may cut a sleep short.
[[noreturn]] void hang_forever() {
  for (;;) pause();
}

// Grows until allocation fails. Every page is written through a volatile pointer so that neither the
// compiler nor the kernel (overcommit, zero pages) can skip the memory.
[[noreturn]] void allocate_without_bound() {
  constexpr size_t kChunk = 32u << 20;
  std::vector<std::unique_ptr<char[]>> chunks;
  // Only address space is taken, not touched: the fault runs under an RLIMIT_AS below 4 GiB
  // (check_oom_fault_allowed), which refuses the allocation itself, at once. Touching the pages would add
  // seconds of page faults on a busy machine and race the trial timeout.
  for (;;) chunks.emplace_back(new char[kChunk]);  // throws std::bad_alloc at the limit
}

}  // namespace

std::optional<FaultKind> FaultPlan::fault_for(std::string_view hash, size_t index) const {
  for (const FaultRule& r : rules) {
    if (r.trial_index && *r.trial_index == index) return r.kind;
    if (!r.hash_prefix.empty() && hash.starts_with(r.hash_prefix)) return r.kind;
  }
  return std::nullopt;
}

Result<FaultPlan> parse_fault_plan(std::string_view text) {
  FaultPlan plan;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (entry.empty()) continue;
    auto rule = parse_rule(entry);
    if (!rule) return fail("{}: {}", kSweepFaultVariable, rule.error().message);
    plan.rules.push_back(std::move(*rule));
  }
  return plan;
}

Result<FaultPlan> fault_plan_from_environment() {
  const char* text = std::getenv(kSweepFaultVariable);
  return parse_fault_plan(text ? text : "");
}

Status check_oom_fault_allowed(unsigned long long address_space_limit) {
  if (address_space_limit == RLIM_INFINITY || address_space_limit >= kOomLimitCeiling) {
    return fail(
        "the oom fault needs an address-space limit (RLIMIT_AS) below 4 GiB; this worker has {}",
        address_space_limit == RLIM_INFINITY ? std::string("none") : fmt::format("{} bytes", address_space_limit));
  }
  return Status::success();
}

Status inject_fault(FaultKind kind) {
  switch (kind) {
    case FaultKind::crash: {
      const rlimit no_core{0, 0};  // a deliberate crash should not leave core files behind
      setrlimit(RLIMIT_CORE, &no_core);
      std::fputs("fault injection: crashing (SIGSEGV)\n", stderr);
      std::raise(SIGSEGV);
      hang_forever();  // a handler that returned would otherwise let the trial go on
    }
    case FaultKind::hang:
      std::fputs("fault injection: hanging\n", stderr);
      hang_forever();
    case FaultKind::term:
      std::fputs("fault injection: stopped by SIGTERM\n", stderr);
      std::raise(SIGTERM);
      hang_forever();
    case FaultKind::exit3:
      std::fputs("fault injection: exiting with status 3\n", stderr);
      std::fflush(stderr);
      _exit(3);
    case FaultKind::oom: {
      rlimit limit{};
      getrlimit(RLIMIT_AS, &limit);
      if (Status allowed = check_oom_fault_allowed(limit.rlim_cur); !allowed) return allowed;
      std::fputs("fault injection: allocating without bound\n", stderr);
      allocate_without_bound();
    }
  }
  return Status::success();
}

}  // namespace infertune
