// The attention kernels of every compiled variant this CPU runs, standard and flash, against the scalar
// reference (double accumulation, exact softmax) over every K/V type, head sizes that are and are not
// multiples of the vector width, grouped heads, rows that see different numbers of keys (causal), cells
// out of order, and key counts across tile boundaries. The reference decodes rows with the same codecs,
// so the kernels differ from it only by float rounding and the polynomial exp: the written tolerance is
// 2e-5 of the largest |value| (measured: below 1e-6).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_reference.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kKvTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0};

// A synthetic cache of n_cells rows of one head, encoded in `type`, with the decoded values kept.
struct HeadCache {
  std::vector<std::byte> bytes;
  size_t stride = 0;
  uint32_t dim = 0;
  GgmlType type = GgmlType::F32;
  float max_abs = 0;  // over the decoded values
  KvHeadRows rows() const { return {type, bytes.data(), stride, dim}; }
};

HeadCache make_cache(GgmlType type, uint32_t n_cells, uint32_t dim, uint32_t seed, float magnitude) {
  HeadCache c;
  c.type = type;
  c.dim = dim;
  c.stride = *ggml_row_bytes(type, dim) + 4;  // rows not packed: the kernels must use the stride
  c.bytes.resize(n_cells * c.stride);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, magnitude);
  std::vector<float> row(dim), decoded(dim);
  for (uint32_t cell = 0; cell < n_cells; ++cell) {
    for (float& x : row) x = dist(rng);
    std::span<std::byte> dst(c.bytes.data() + cell * c.stride, c.stride - 4);
    EXPECT_TRUE(quantize_row(type, row, dst).ok());
    EXPECT_TRUE(dequantize_row(type, dst, decoded).ok());
    for (float x : decoded) c.max_abs = std::max(c.max_abs, std::fabs(x));
  }
  return c;
}

struct Case {
  uint32_t head_dim;
  uint32_t n_heads;  // query heads per KV head
  uint32_t n_rows;
  uint32_t n_cells;
  bool shuffled;  // cells visited out of order
};

std::string case_name(const Case& c) {
  return fmt::format("d{}_h{}_r{}_k{}{}", c.head_dim, c.n_heads, c.n_rows, c.n_cells, c.shuffled ? "_shuffled" : "");
}

struct Built {
  HeadCache k, v;
  std::vector<float> q, out;
  std::vector<uint32_t> rows, n_keys, cells;
  AttentionProblem problem;
};

// Rows are tokens 1, 3, 5, ... of a q buffer (so the kernels must honour rows and strides); row r sees the
// first n_cells - (n_rows - 1 - r) * step keys, the last row all of them (a causal prompt's pattern).
void build(Built& b, const Case& c, GgmlType type_k, GgmlType type_v) {
  b.k = make_cache(type_k, c.n_cells, c.head_dim, 11, 1.0f);
  b.v = make_cache(type_v, c.n_cells, c.head_dim, 12, 2.0f);
  const size_t q_stride = static_cast<size_t>(c.n_heads) * c.head_dim + 3;
  const uint32_t n_tokens = 2 * c.n_rows + 1;
  b.q.resize(n_tokens * q_stride);
  std::mt19937 rng(13);
  // Large enough that the softmax is far from uniform (scores of several units).
  std::normal_distribution<float> dist(0.0f, 2.0f);
  for (float& x : b.q) x = dist(rng);
  b.out.assign(n_tokens * q_stride, -7.0f);
  b.rows.clear();
  b.n_keys.clear();
  const uint32_t step = std::max<uint32_t>(1, c.n_cells / (2 * c.n_rows + 1));
  for (uint32_t r = 0; r < c.n_rows; ++r) {
    b.rows.push_back(2 * r + 1);
    b.n_keys.push_back(std::max<uint32_t>(1, c.n_cells - (c.n_rows - 1 - r) * step));
  }
  b.cells.resize(c.n_cells);
  std::iota(b.cells.begin(), b.cells.end(), 0u);
  if (c.shuffled) std::shuffle(b.cells.begin(), b.cells.end(), std::mt19937(5));
  AttentionProblem& p = b.problem;
  p.q = b.q.data();
  p.q_stride = q_stride;
  p.rows = b.rows;
  p.n_heads = c.n_heads;
  p.n_keys = b.n_keys;
  p.cells = b.cells;
  p.k = b.k.rows();
  p.v = b.v.rows();
  p.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  p.out = b.out.data();
  p.out_stride = q_stride;
}

std::vector<float> run(AttentionFn fn, const AttentionProblem& p, std::vector<float>& out) {
  std::fill(out.begin(), out.end(), -7.0f);
  AttentionScratch scratch;
  fn(p, scratch);
  return out;
}

class AttentionKernelTest : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionKernelTest, EveryVariantMatchesTheReference) {
  const Case& c = GetParam();
  double worst_relative = 0;
  for (GgmlType type_k : kKvTypes) {
    for (GgmlType type_v : kKvTypes) {
      if (c.head_dim % 32 != 0 && (ggml_type_traits(type_k).quantized || ggml_type_traits(type_v).quantized)) continue;
      Built b;
      build(b, c, type_k, type_v);
      ASSERT_TRUE(check_attention_problem(b.problem).ok()) << check_attention_problem(b.problem).error().message;
      const std::vector<float> want = run(reference_attention, b.problem, b.out);
      const double tolerance = 2e-5 * b.v.max_abs;
      for (const AttentionVariant& variant : compiled_attention_variants()) {
        if (!variant.available()) continue;
        for (const auto& [kind, fn] :
             {std::pair{"standard", variant.kernels.standard}, std::pair{"flash", variant.kernels.flash}}) {
          const std::vector<float> got = run(fn, b.problem, b.out);
          double worst = 0;
          for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
          worst_relative = std::max(worst_relative, worst / b.v.max_abs);
          EXPECT_LE(worst, tolerance) << variant.name << " " << kind << " K " << ggml_type_name(type_k) << " V "
                                      << ggml_type_name(type_v);
          // Elements outside the rows and heads of the problem are left alone (-7 stays).
          EXPECT_EQ(got[0], -7.0f) << variant.name << " " << kind;
        }
      }
    }
  }
  std::cout << fmt::format("[attention] {}: worst |d| / max|v| over every variant and type {:.2e}\n", case_name(c),
                           worst_relative);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionKernelTest,
                         ::testing::Values(Case{64, 1, 1, 1, false}, Case{64, 4, 1, 200, false},
                                           Case{128, 4, 1, 1000, true}, Case{128, 2, 17, 333, false},
                                           Case{32, 4, 5, 64, true}, Case{32, 1, 3, 65, false},
                                           Case{8, 2, 4, 70, false}, Case{24, 3, 2, 129, true},
                                           Case{96, 1, 9, 130, false}),
                         [](const auto& info) { return case_name(info.param); });

// Keys beyond a row's n_keys do not change its output; keys within do.
TEST(AttentionKernels, RowsSeeOnlyTheirPrefixOfKeys) {
  Built b;
  build(b, Case{64, 2, 3, 150, false}, GgmlType::F32, GgmlType::F32);
  b.n_keys = {40, 100, 150};
  b.problem.n_keys = b.n_keys;
  for (const AttentionVariant& variant : compiled_attention_variants()) {
    if (!variant.available()) continue;
    for (AttentionFn fn : {variant.kernels.standard, variant.kernels.flash}) {
      const std::vector<float> before = run(fn, b.problem, b.out);
      // Change every value row from cell 100 on: rows 0 and 1 must not move, row 2 must.
      std::vector<std::byte> saved = b.v.bytes;
      auto* values = reinterpret_cast<float*>(b.v.bytes.data());
      for (uint32_t cell = 100; cell < 150; ++cell) {
        for (uint32_t d = 0; d < 64; ++d) values[cell * (b.v.stride / 4) + d] += 1.0f;
      }
      const std::vector<float> after = run(fn, b.problem, b.out);
      b.v.bytes = saved;
      const size_t head_span = 2 * 64;
      for (size_t r = 0; r < 3; ++r) {
        const size_t base = b.rows[r] * b.problem.q_stride;
        bool same = true;
        for (size_t i = 0; i < head_span; ++i) same = same && before[base + i] == after[base + i];
        EXPECT_EQ(same, r < 2) << variant.name << " row " << r;
      }
    }
  }
}

TEST(AttentionKernels, MalformedProblemsAreErrors) {
  Built b;
  build(b, Case{32, 1, 2, 10, false}, GgmlType::Q8_0, GgmlType::F16);
  EXPECT_TRUE(check_attention_problem(b.problem).ok());
  AttentionProblem p = b.problem;
  p.k.type = GgmlType::Q4_K;
  EXPECT_FALSE(check_attention_problem(p).ok());
  p = b.problem;
  p.k.dim = 24;  // not whole q8_0 blocks
  EXPECT_FALSE(check_attention_problem(p).ok());
  p = b.problem;
  std::vector<uint32_t> zero = {0, 3};
  p.n_keys = zero;
  EXPECT_FALSE(check_attention_problem(p).ok());
  std::vector<uint32_t> beyond = {3, 11};
  p.n_keys = beyond;
  EXPECT_FALSE(check_attention_problem(p).ok());
  p = b.problem;
  p.v.stride = 4;
  EXPECT_FALSE(check_attention_problem(p).ok());
}

TEST(AttentionKernels, VariantSelectionCanBeForced) {
  {
    ScopedAttentionVariant scalar("scalar");
    auto k = attention_kernels();
    ASSERT_TRUE(k.ok());
    EXPECT_EQ(k->variant, "scalar");
    EXPECT_EQ(k->standard, &reference_attention);
  }
  {
    ScopedAttentionVariant unknown("avx9000");
    EXPECT_FALSE(attention_kernels().ok());
  }
  ScopedAttentionVariant best(std::nullopt);
  auto k = attention_kernels();
  ASSERT_TRUE(k.ok());
  int best_priority = -1;
  std::string_view best_name;
  for (const AttentionVariant& v : compiled_attention_variants()) {
    if (v.available() && v.priority > best_priority) {
      best_priority = v.priority;
      best_name = v.name;
    }
  }
  EXPECT_EQ(k->variant, best_name);
}

}  // namespace
}  // namespace infertune
