#include "bench/llama_bench/verbose_notes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

#include "engine/settings/command_line.h"

namespace infertune {

std::string load_note(const BenchTest& test, uint32_t n_layers, const ModelFacts& facts, double load_ms) {
  return fmt::format("loaded {} in {:.0f} ms ({}, {}): {}, {} layers, {:.2f} MiB, {:.2f} M parameters; kernels {}",
                     test.model, load_ms, test.settings.use_mmap ? "mapped" : "read into memory",
                     test.settings.repack ? "rows repacked" : "file layout", facts.type, n_layers,
                     static_cast<double>(facts.size_bytes) / (1 << 20), static_cast<double>(facts.n_params) / 1e6,
                     facts.kernel);
}

std::vector<std::string> test_notes(const std::string& test_name, const BenchTest& test, const PlacementPlan& plan) {
  std::vector<std::string> notes{fmt::format(
      "{}: engine flags: {} (n_ctx {})", test_name,
      fmt::join(setting_command_flags(test.settings, Command::run, Spelling::infertune), " "), test.n_ctx())};
  std::istringstream lines(plan.describe());
  for (std::string line; std::getline(lines, line);) notes.push_back(fmt::format("{}: {}", test_name, line));
  return notes;
}

}  // namespace infertune
