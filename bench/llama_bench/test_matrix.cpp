#include "bench/llama_bench/test_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "engine/settings/settings_table.h"

namespace infertune {
namespace {

// The varying shapes of one configuration: its -p tests, then -n tests, then -pg tests.
void add_shapes(const BenchParams& params, const BenchTest& config, std::vector<BenchTest>& out) {
  for (int p : params.n_prompt) {
    if (p == 0) continue;
    BenchTest test = config;
    test.n_prompt = p;
    out.push_back(test);
  }
  for (int n : params.n_gen) {
    if (n == 0) continue;
    BenchTest test = config;
    test.n_gen = n;
    out.push_back(test);
  }
  for (const auto& [p, n] : params.n_pg) {
    if (p == 0 && n == 0) continue;
    BenchTest test = config;
    test.n_prompt = p;
    test.n_gen = n;
    out.push_back(test);
  }
}

// llama-bench's loop order, outermost first; "depth" is the -d list, the rest are setting keys.
constexpr std::array<std::string_view, 15> kLlamaBenchOrder{
    "n_gpu_layers", "split_mode", "main_gpu", "tensor_split", "mmap",       "batch_size", "ubatch_size", "cache_type_k",
    "cache_type_v", "flash_attn", "threads",  "cpu_mask",     "cpu_strict", "depth",      "poll"};

// The loops of the matrix: llama-bench's, then the settings bench takes that llama-bench does not loop over.
std::vector<std::string_view> bench_axes(const BenchParams& params) {
  std::vector<std::string_view> axes(kLlamaBenchOrder.begin(), kLlamaBenchOrder.end());
  for (const auto& [key, values] : params.settings) {
    if (std::ranges::find(axes, key) == axes.end()) axes.push_back(find_setting(key)->key);
  }
  return axes;
}

// One loop of the product per axis; the innermost adds the tests of each shape.
void expand_axes(const BenchParams& params, const std::vector<std::string_view>& axes, size_t axis,
                 const BenchTest& config, std::vector<BenchTest>& out) {
  if (axis == axes.size()) {
    add_shapes(params, config, out);
    return;
  }
  if (axes[axis] == "depth") {
    for (int depth : params.n_depth) {
      BenchTest next = config;
      next.n_depth = depth;
      expand_axes(params, axes, axis + 1, next, out);
    }
    return;
  }
  const Setting& setting = *find_setting(axes[axis]);
  for (const std::string& value : params.values(std::string(setting.key))) {
    BenchTest next = config;
    setting.apply(value, next.settings);
    expand_axes(params, axes, axis + 1, next, out);
  }
}

}  // namespace

std::string BenchTest::value(std::string_view key) const { return find_setting(key)->read(settings); }

bool BenchTest::same_model_load(const BenchTest& other) const {
  if (model != other.model) return false;
  return std::ranges::all_of(
      all_settings(), [&](const Setting& s) { return !s.reloads_model || s.read(settings) == s.read(other.settings); });
}

std::string test_name(const BenchTest& test) {
  std::string name;
  if (test.n_gen == 0) {
    name = fmt::format("pp{}", test.n_prompt);
  } else if (test.n_prompt == 0) {
    name = fmt::format("tg{}", test.n_gen);
  } else {
    name = fmt::format("pp{}+tg{}", test.n_prompt, test.n_gen);
  }
  if (test.n_depth > 0) name += fmt::format(" @ d{}", test.n_depth);
  return name;
}

std::vector<BenchTest> expand_tests(const BenchParams& params) {
  std::vector<BenchTest> tests;
  for (const std::string& model : params.models) {
    BenchTest config;
    config.model = model;
    expand_axes(params, bench_axes(params), 0, config, tests);
  }
  return tests;
}

}  // namespace infertune
