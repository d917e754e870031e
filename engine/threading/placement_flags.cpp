#include "engine/threading/placement_flags.h"

#include <fmt/format.h>

#include <array>
#include <string>

#include "engine/cli/flag_ranges.h"
#include "engine/threading/topology.h"

namespace infertune {
namespace {

constexpr const char* kGroup = "Threads and CPU placement";

constexpr std::array kAliases{FlagAlias{"-tb", "--threads-batch"}};

std::string auto_threads_text(int threads, const char* meaning) {
  return threads > 0 ? std::to_string(threads) : fmt::format("{}: {}", threads, meaning);
}

CLI::Validator cpu_mask_validator(MachineCpus machine) {
  return CLI::Validator(
      [machine = std::move(machine)](std::string& text) {
        if (auto mask = parse_cpu_mask(text); !mask) return mask.error().message;
        auto cpus = machine();
        if (!cpus) return cpus.error().message;
        const Status fits = check_cpu_mask_fits(text, *cpus);
        return fits ? std::string() : fits.error().message;
      },
      "MASK", "hex mask or CPU range list");
}

IntRange thread_count_range(const char* auto_meaning) {
  return {.low = 1, .high = kMaxThreads, .special = {{kAutoThreads, auto_meaning}}};
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

Result<CpuSet> this_machine_cpus() {
  auto topology = Topology::load_machine();
  if (!topology) return topology.error();
  return topology->all_cpus();
}

Status check_cpu_mask_fits(std::string_view mask_text, const CpuSet& machine) {
  auto mask = parse_cpu_mask(mask_text);
  if (!mask) return mask.error();
  if (mask->empty()) return fail("-C/--cpu-mask '{}' selects no CPUs", mask_text);
  if (const CpuSet missing = mask->minus(machine); !missing.empty()) {
    return fail(
        "-C/--cpu-mask '{}': CPUs {} are not on this machine or not available to this process (it may use "
        "CPUs {})",
        mask_text, missing.to_string(), machine.to_string());
  }
  return {};
}

void add_placement_flags(CLI::App& command, PlacementOptions& options, MachineCpus machine) {
  command
      .add_option("-t,--threads", options.threads,
                  fmt::format("Threads for generation (default {})",
                              auto_threads_text(options.threads, "the number of physical cores")))
      ->transform(int_flag_range(thread_count_range("the number of physical cores")))
      ->group(kGroup);
  command
      .add_option("--threads-batch", options.threads_batch,
                  fmt::format("-tb: threads for prompt and batch processing (default {})",
                              auto_threads_text(options.threads_batch, "same as --threads")))
      ->transform(int_flag_range(thread_count_range("same as --threads")))
      ->group(kGroup);
  command
      .add_option("-C,--cpu-mask", options.cpu_mask,
                  "CPUs to run on: a hex mask (0xF0, bit i = CPU i) or a range list (0-3,8) (default: all)")
      ->check(cpu_mask_validator(std::move(machine)))
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
      ->transform(int_flag_range({.low = 0, .high = 3, .note = "0 normal, 1 medium, 2 high, 3 realtime"}))
      ->group(kGroup);
  command
      .add_option("--poll", options.poll,
                  fmt::format("How long a waiting thread spins before it sleeps, 0 (sleep at once) to 100 "
                              "(never sleep) (default {})",
                              options.poll))
      ->transform(int_flag_range({.low = 0, .high = 100}))
      ->group(kGroup);
}

std::span<const FlagAlias> placement_flag_aliases() { return kAliases; }

}  // namespace infertune
