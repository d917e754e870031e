#include "bench/llama_bench/test_matrix.h"

#include <fmt/format.h>

#include "bench/llama_bench/context_setup.h"

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

}  // namespace

bool BenchTest::same_model_load(const BenchTest& other) const {
  return model == other.model && n_gpu_layers == other.n_gpu_layers && use_mmap == other.use_mmap;
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
  const std::vector<std::string> default_kv{default_kv_type()};
  const std::vector<std::string>& types_k = params.type_k.empty() ? default_kv : params.type_k;
  const std::vector<std::string>& types_v = params.type_v.empty() ? default_kv : params.type_v;
  BenchTest c;
  // clang-format off
  for (const std::string& model : params.models)
  for (int ngl : params.n_gpu_layers)
  for (bool mmap : params.use_mmap)
  for (int nb : params.n_batch)
  for (int nub : params.n_ubatch)
  for (const std::string& tk : types_k)
  for (const std::string& tv : types_v)
  for (FlashAttn fa : params.flash_attn)
  for (int nt : params.n_threads)
  for (const std::string& mask : params.cpu_mask)
  for (bool strict : params.cpu_strict)
  for (int depth : params.n_depth)
  for (int poll : params.poll) {
                            // clang-format on
                            c.model = model;
                            c.n_gpu_layers = ngl;
                            c.use_mmap = mmap;
                            c.n_batch = nb;
                            c.n_ubatch = nub;
                            c.type_k = tk;
                            c.type_v = tv;
                            c.flash_attn = fa;
                            c.n_threads = nt;
                            c.cpu_mask = mask;
                            c.cpu_strict = strict;
                            c.n_depth = depth;
                            c.poll = poll;
                            add_shapes(params, c, tests);
                          }
  return tests;
}

}  // namespace infertune
