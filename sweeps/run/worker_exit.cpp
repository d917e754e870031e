#include "sweeps/run/worker_exit.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>

namespace infertune {

namespace {

bool mentions_bad_alloc(const std::vector<std::string>& lines) {
  for (const auto& line : lines) {
    if (line.find("bad_alloc") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool names_out_of_memory(std::string_view message) {
  return message.find("cannot allocate") != std::string_view::npos ||
         message.find("bad_alloc") != std::string_view::npos;
}

std::string WorkerExit::describe() const {
  if (signaled) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  if (exited) return fmt::format("exited with status {}", exit_code);
  return "ended in an unknown way";
}

std::string stderr_suffix(const std::vector<std::string>& tail, size_t max_lines) {
  if (tail.empty()) return "";
  const size_t first = tail.size() > max_lines ? tail.size() - max_lines : 0;
  std::string text = "; last stderr: ";
  for (size_t i = first; i < tail.size(); ++i) {
    if (i > first) text += " | ";
    text += tail[i];
  }
  return text;
}

WorkerFailure classify_worker_end(const WorkerExit& exit, double timeout_s, const std::vector<std::string>& tail) {
  const std::string last = stderr_suffix(tail);
  if (timeout_s > 0) return {TrialStatus::timeout, fmt::format("timeout after {:g} s{}", timeout_s, last)};
  if (exit.signaled && exit.signal == SIGKILL && !exit.killed_by_us) {
    return {TrialStatus::oom, fmt::format("out of memory (worker killed by SIGKILL){}", last)};
  }
  if (exit.exited && exit.exit_code == kWorkerOutOfMemoryExitCode) {
    return {TrialStatus::oom, fmt::format("out of memory (worker {}){}", exit.describe(), last)};
  }
  if (exit.signaled && exit.signal == SIGABRT && mentions_bad_alloc(tail)) {
    return {TrialStatus::oom, fmt::format("out of memory (std::bad_alloc; worker {}){}", exit.describe(), last)};
  }
  return {TrialStatus::failed, fmt::format("worker {}{}", exit.describe(), last)};
}

}  // namespace infertune
