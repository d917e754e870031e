#include "engine/threading/placement_flags.h"

#include <fmt/format.h>

#include <array>
#include <string>

#include "engine/threading/cpu_set.h"

namespace infertune {
namespace {

constexpr const char* kGroup = "Threads and CPU placement";

constexpr std::array kAliases{FlagAlias{"-tb", "--threads-batch"}};

std::string auto_threads_text(int threads, const char* meaning) {
  return threads > 0 ? std::to_string(threads) : fmt::format("{}: {}", threads, meaning);
}

CLI::Validator cpu_mask_validator() {
  return CLI::Validator(
      [](std::string& text) {
        auto mask = parse_cpu_mask(text);
        return mask ? std::string() : mask.error().message;
      },
      "MASK", "hex mask or CPU range list");
}

CLI::Validator numa_mode_validator() {
  return CLI::Validator(
      [](std::string& text) {
        return parse_numa_mode(text) ? std::string()
                                     : "unknown mode '" + text + "' (expected distribute, isolate or numactl)";
      },
      "distribute|isolate|numactl", "NUMA mode");
}

}  // namespace

void add_placement_flags(CLI::App& command, PlacementOptions& options) {
  command
      .add_option("-t,--threads", options.threads,
                  fmt::format("Threads for generation (default {})",
                              auto_threads_text(options.threads, "the number of physical cores")))
      ->group(kGroup);
  command
      .add_option("--threads-batch", options.threads_batch,
                  fmt::format("-tb: threads for prompt and batch processing (default {})",
                              auto_threads_text(options.threads_batch, "same as --threads")))
      ->group(kGroup);
  command
      .add_option("-C,--cpu-mask", options.cpu_mask,
                  "CPUs to run on: a hex mask (0xF0, bit i = CPU i) or a range list (0-3,8) (default: all)")
      ->check(cpu_mask_validator())
      ->group(kGroup);
  command
      .add_option("--cpu-strict", options.cpu_strict,
                  fmt::format("1: pin each thread to its own CPU; 0: threads float over the allowed CPUs "
                              "(default {})",
                              options.cpu_strict ? 1 : 0))
      ->check(CLI::IsMember({"0", "1"}))
      ->group(kGroup);
  command
      .add_option_function<std::string>(
          "--numa", [&options](const std::string& text) { options.numa = *parse_numa_mode(text); },
          "NUMA policy: distribute (spread threads over all nodes), isolate (only the node the process "
          "started on), numactl (only the CPUs the process started with) (default: none)")
      ->check(numa_mode_validator())
      ->group(kGroup);
  command
      .add_option("--prio", options.priority,
                  fmt::format("Thread priority: 0 normal, 1 medium, 2 high, 3 realtime (default {})", options.priority))
      ->check(CLI::Range(0, 3))
      ->group(kGroup);
  command
      .add_option("--poll", options.poll,
                  fmt::format("How long a waiting thread spins before it sleeps, 0 (sleep at once) to 100 "
                              "(never sleep) (default {})",
                              options.poll))
      ->check(CLI::Range(0, 100))
      ->group(kGroup);
}

std::span<const FlagAlias> placement_flag_aliases() { return kAliases; }

}  // namespace infertune
