// Split-K attention at the kernel level: every variant's standard and flash kernel computes partial states
// (AttentionPartial) over key ranges, merge_attention_partials combines them, and the result must be the
// attention over all the keys as computed here independently in double precision (decoded rows, exact
// softmax). Ranges are cut at odd places, so that some pieces hold one key, pieces cross the kernels' tiles,
// and (with causal rows) some rows see no key of a piece at all. Tolerance: 2e-5 of max|v|, as for the
// unsplit kernels (float sums and the polynomial exp; the merge itself adds a few float roundings).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_merge.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kKvTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0};

struct Rows {
  std::vector<std::byte> bytes;
  std::vector<float> decoded;  // [n][dim]
  size_t stride = 0;
};

Rows make_rows(GgmlType type, uint32_t n, uint32_t dim, uint32_t seed, float magnitude) {
  Rows r;
  r.stride = *ggml_row_bytes(type, dim);
  r.bytes.resize(n * r.stride);
  r.decoded.resize(static_cast<size_t>(n) * dim);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, magnitude);
  std::vector<float> row(dim);
  for (uint32_t i = 0; i < n; ++i) {
    for (float& x : row) x = dist(rng);
    std::span<std::byte> dst(r.bytes.data() + i * r.stride, r.stride);
    EXPECT_TRUE(quantize_row(type, row, dst).ok());
    EXPECT_TRUE(dequantize_row(type, dst, std::span<float>(r.decoded).subspan(size_t(i) * dim, dim)).ok());
  }
  return r;
}

struct SplitCase {
  uint32_t dim, n_heads, n_rows, n_keys;
  GgmlType type;
};

struct Built {
  Rows k, v;
  std::vector<float> q, out;
  std::vector<uint32_t> rows, n_keys, cells;
  AttentionProblem problem;
};

// Row r (token r) sees the first n_keys - (n_rows - 1 - r) * 3 keys; cells in a shuffled order.
void build(Built& b, const SplitCase& s) {
  b.k = make_rows(s.type, s.n_keys, s.dim, 21, 1.0f);
  b.v = make_rows(s.type, s.n_keys, s.dim, 22, 2.0f);
  const size_t q_stride = static_cast<size_t>(s.n_heads) * s.dim;
  b.q.resize(s.n_rows * q_stride);
  std::mt19937 rng(23);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  for (float& x : b.q) x = dist(rng);
  b.out.assign(b.q.size(), -7.0f);
  b.rows.resize(s.n_rows);
  std::iota(b.rows.begin(), b.rows.end(), 0u);
  b.n_keys.clear();
  for (uint32_t r = 0; r < s.n_rows; ++r) {
    b.n_keys.push_back(std::max<int>(1, static_cast<int>(s.n_keys) - static_cast<int>(s.n_rows - 1 - r) * 3));
  }
  b.cells.resize(s.n_keys);
  std::iota(b.cells.begin(), b.cells.end(), 0u);
  std::shuffle(b.cells.begin(), b.cells.end(), std::mt19937(24));
  AttentionProblem& p = b.problem;
  p.q = b.q.data();
  p.q_stride = q_stride;
  p.rows = b.rows;
  p.n_heads = s.n_heads;
  p.n_keys = b.n_keys;
  p.cells = b.cells;
  p.k = {s.type, b.k.bytes.data(), b.k.stride, s.dim};
  p.v = {s.type, b.v.bytes.data(), b.v.stride, s.dim};
  p.scale = 1.0f / std::sqrt(static_cast<float>(s.dim));
  p.out = b.out.data();
  p.out_stride = q_stride;
}

// The attention of query (r, h) over its keys, in double, from the decoded rows.
std::vector<double> exact(const Built& b, uint32_t r, uint32_t h) {
  const AttentionProblem& p = b.problem;
  const uint32_t dim = p.k.dim, n = p.n_keys[r];
  const float* q = b.q.data() + r * p.q_stride + h * dim;
  std::vector<double> s(n);
  double max = -std::numeric_limits<double>::infinity();
  for (uint32_t j = 0; j < n; ++j) {
    const float* key = b.k.decoded.data() + size_t(p.cells[j]) * dim;
    double dot = 0;
    for (uint32_t d = 0; d < dim; ++d) dot += double(q[d]) * key[d];
    s[j] = dot * p.scale;
    if (p.softcap != 0) s[j] = p.softcap * std::tanh(s[j] / p.softcap);  // gemma2's soft cap, in double
    max = std::max(max, s[j]);
  }
  double sum = 0;
  std::vector<double> out(dim, 0.0);
  for (uint32_t j = 0; j < n; ++j) {
    const double w = std::exp(s[j] - max);
    sum += w;
    const float* value = b.v.decoded.data() + size_t(p.cells[j]) * dim;
    for (uint32_t d = 0; d < dim; ++d) out[d] += w * value[d];
  }
  if (p.sinks) sum += std::exp(double(p.sinks[h]) - max);  // a logit in the denominator, no value behind it
  for (double& x : out) x /= sum;
  return out;
}

double max_abs(const std::vector<float>& x) {
  double m = 0;
  for (float v : x) m = std::max(m, double(std::fabs(v)));
  return m;
}

// Partials of `fn` over the ranges between consecutive `cuts` (0 first, past every key last), merged.
void split_and_merge(AttentionFn fn, Built& b, const std::vector<uint32_t>& cuts) {
  const AttentionProblem& whole = b.problem;
  const size_t queries = whole.rows.size() * whole.n_heads;
  const uint32_t dim = whole.v.dim;
  std::vector<std::vector<float>> storage(cuts.size() - 1);
  std::vector<AttentionPartial> parts(cuts.size() - 1);
  AttentionScratch scratch;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    storage[i].assign(queries * (dim + 2), std::nanf(""));
    parts[i] = {storage[i].data(), storage[i].data() + queries, storage[i].data() + 2 * queries};
    AttentionProblem p = whole;
    p.key_begin = cuts[i];
    p.key_end = cuts[i + 1];
    p.partial = &parts[i];
    ASSERT_TRUE(check_attention_problem(p).ok()) << check_attention_problem(p).error().message;
    fn(p, scratch);
  }
  for (size_t r = 0; r < whole.rows.size(); ++r) {
    for (uint32_t h = 0; h < whole.n_heads; ++h) {
      const float sink = whole.sinks ? whole.sinks[h] : -std::numeric_limits<float>::infinity();
      merge_attention_partials(parts, r * whole.n_heads + h, dim, b.out.data() + r * whole.out_stride + h * dim, sink);
    }
  }
}

std::vector<uint32_t> cuts_for(uint32_t n_keys, uint32_t pieces, uint32_t seed) {
  std::vector<uint32_t> cuts = {0};
  std::mt19937 rng(seed);
  for (uint32_t i = 1; i < pieces; ++i) cuts.push_back(std::uniform_int_distribution<uint32_t>(1, n_keys - 1)(rng));
  cuts.push_back(std::numeric_limits<uint32_t>::max());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

TEST(AttentionSplitKernels, MergedPartialsAreTheAttentionOverAllKeys) {
  const SplitCase setups[] = {
      {64, 4, 1, 301, {}}, {128, 1, 1, 1000, {}}, {64, 4, 5, 257, {}}, {32, 2, 3, 67, {}}, {64, 1, 1, 2, {}}};
  double worst = 0;
  for (SplitCase s : setups) {
    for (GgmlType type : kKvTypes) {
      s.type = type;
      Built b;
      build(b, s);
      const double tolerance = 2e-5 * max_abs(b.v.decoded);
      std::vector<std::vector<double>> want;  // [row * n_heads + head][dim]
      for (uint32_t r = 0; r < s.n_rows; ++r) {
        for (uint32_t h = 0; h < s.n_heads; ++h) want.push_back(exact(b, r, h));
      }
      for (const AttentionVariant& variant : compiled_attention_variants()) {
        if (variant.available && !variant.available()) continue;
        for (auto [kind, fn] :
             {std::pair{"standard", variant.kernels.standard}, std::pair{"flash", variant.kernels.flash}}) {
          for (uint32_t pieces : {2u, 3u, 7u}) {
            const std::vector<uint32_t> cuts = cuts_for(s.n_keys, std::min(pieces, s.n_keys), pieces * 7 + s.n_keys);
            SCOPED_TRACE(fmt::format("{}/{} {} d{} h{} rows{} keys{} cuts {}", variant.name, kind, ggml_type_name(type),
                                     s.dim, s.n_heads, s.n_rows, s.n_keys, fmt::join(cuts, ",")));
            split_and_merge(fn, b, cuts);
            for (uint32_t r = 0; r < s.n_rows; ++r) {
              for (uint32_t h = 0; h < s.n_heads; ++h) {
                const std::vector<double>& exact_out = want[r * s.n_heads + h];
                const float* got = b.out.data() + r * b.problem.out_stride + h * s.dim;
                for (uint32_t d = 0; d < s.dim; ++d) {
                  worst = std::max(worst, std::fabs(got[d] - exact_out[d]) / (tolerance / 2e-5));
                  ASSERT_NEAR(got[d], exact_out[d], tolerance) << "row " << r << " head " << h << " value " << d;
                }
              }
            }
          }
        }
      }
    }
  }
  std::printf("[attention split] worst |d| / max|v| against double: %.2e\n", worst);
}

// Every available variant's standard and flash kernel, whole and split-K, gives the double-precision attention of b.
void expect_every_kernel_exact(Built& b, const SplitCase& s) {
  const double tolerance = 2e-5 * max_abs(b.v.decoded);
  for (const AttentionVariant& variant : compiled_attention_variants()) {
    if (variant.available && !variant.available()) continue;
    for (auto [kind, fn] :
         {std::pair{"standard", variant.kernels.standard}, std::pair{"flash", variant.kernels.flash}}) {
      for (bool split : {false, true}) {
        SCOPED_TRACE(fmt::format("{}/{} {}", variant.name, kind, split ? "split" : "whole"));
        if (split) {
          split_and_merge(fn, b, {0, 57, 131, std::numeric_limits<uint32_t>::max()});
        } else {
          AttentionScratch scratch;
          fn(b.problem, scratch);
        }
        for (uint32_t r = 0; r < s.n_rows; ++r) {
          for (uint32_t h = 0; h < s.n_heads; ++h) {
            const std::vector<double> want = exact(b, r, h);
            const float* got = b.out.data() + r * b.problem.out_stride + h * s.dim;
            for (uint32_t d = 0; d < s.dim; ++d)
              ASSERT_NEAR(got[d], want[d], tolerance) << "row " << r << " head " << h;
          }
        }
      }
    }
  }
}

// gpt-oss's attention sinks: per head, one more logit in the softmax's denominator and no value. Sinks below, among
// and far above the scores (the last one takes nearly all the weight), whole and split-K, against the double sum.
TEST(AttentionSplitKernels, SinksTakePartInTheSoftmaxDenominatorOnly) {
  const SplitCase s{64, 4, 3, 200, GgmlType::F32};
  Built b;
  build(b, s);
  const std::vector<float> sinks = {-20.0f, 0.5f, 3.0f, 40.0f};
  b.problem.sinks = sinks.data();
  expect_every_kernel_exact(b, s);
  // The sink far above every score leaves that head's output near 0; a sink far below changes nothing.
  const float* last_head = b.out.data() + 2 * b.problem.out_stride + 3 * s.dim;
  EXPECT_LT(std::fabs(last_head[0]), 1e-6);
}

// gemma2's attention logit soft cap: every scaled score s becomes cap * tanh(s / cap) before the softmax, in every
// kernel, whole and split-K (a partial state's maximum is of capped scores, so the merge needs nothing). A cap of 1.5
// on scores of about twice that spread moves the output well past the tolerance, so a kernel that ignored it fails.
TEST(AttentionSplitKernels, TheSoftCapBendsEveryScoreBeforeTheSoftmax) {
  for (GgmlType type : {GgmlType::F32, GgmlType::Q8_0}) {
    SCOPED_TRACE(ggml_type_name(type));
    const SplitCase s{64, 4, 3, 200, type};
    Built b;
    build(b, s);
    const auto variants = compiled_attention_variants();
    const auto scalar =
        std::find_if(variants.begin(), variants.end(), [](const auto& v) { return v.name == "scalar"; });
    ASSERT_NE(scalar, variants.end());
    AttentionScratch scratch;
    scalar->kernels.standard(b.problem, scratch);
    const std::vector<float> uncapped = b.out;
    b.problem.softcap = 1.5f;
    expect_every_kernel_exact(b, s);
    double moved = 0;
    for (size_t i = 0; i < b.out.size(); ++i) moved = std::max(moved, double(std::fabs(b.out[i] - uncapped[i])));
    EXPECT_GT(moved, 100 * 2e-5 * max_abs(b.v.decoded));
  }
  Built bad;
  build(bad, {64, 1, 1, 10, GgmlType::F32});
  for (float cap : {-1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    bad.problem.softcap = cap;
    EXPECT_FALSE(check_attention_problem(bad.problem).ok()) << cap;
  }
}

TEST(AttentionSplitKernels, ARangeWithoutKeysGivesAnEmptyState) {
  Built b;
  build(b, {64, 2, 4, 40, GgmlType::F16});  // rows see 31, 34, 37 and 40 keys
  std::vector<float> storage(4 * 2 * (64 + 2), 5.0f);
  const AttentionPartial part{storage.data(), storage.data() + 8, storage.data() + 16};
  for (const AttentionVariant& variant : compiled_attention_variants()) {
    if (variant.available && !variant.available()) continue;
    for (AttentionFn fn : {variant.kernels.standard, variant.kernels.flash}) {
      AttentionProblem p = b.problem;
      p.key_begin = 35;
      p.key_end = 1000;
      p.partial = &part;
      AttentionScratch scratch;
      fn(p, scratch);
      for (uint32_t iq = 0; iq < 4; ++iq) {  // rows 0 and 1: nothing from key 35 on
        EXPECT_EQ(part.max[iq], -std::numeric_limits<float>::infinity()) << variant.name << " query " << iq;
        EXPECT_EQ(part.sum[iq], 0.0f);
        for (uint32_t d = 0; d < 64; ++d) ASSERT_EQ(part.acc[iq * 64 + d], 0.0f);
      }
      for (uint32_t iq = 4; iq < 8; ++iq) EXPECT_GE(part.sum[iq], 1.0f) << variant.name;  // the largest weighs 1
    }
  }
}

TEST(AttentionSplitKernels, KeyRangesAreChecked) {
  Built b;
  build(b, {64, 1, 1, 50, GgmlType::F32});
  AttentionProblem p = b.problem;
  p.key_begin = 10;
  EXPECT_FALSE(check_attention_problem(p).ok()) << "part of the keys without a partial output";
  p.key_begin = 0;
  p.key_end = 20;
  EXPECT_FALSE(check_attention_problem(p).ok());
  float buffer[66];
  const AttentionPartial part{buffer, buffer + 1, buffer + 2};
  p.partial = &part;
  EXPECT_TRUE(check_attention_problem(p).ok());
  p.key_begin = 20;
  EXPECT_FALSE(check_attention_problem(p).ok()) << "empty range";
  const AttentionPartial missing{buffer, nullptr, buffer + 2};
  p.key_begin = 0;
  p.partial = &missing;
  EXPECT_FALSE(check_attention_problem(p).ok());
}

}  // namespace
}  // namespace infertune
