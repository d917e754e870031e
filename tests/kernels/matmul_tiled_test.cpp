// The prompt-batch paths of the integer matmul kernels (tiled from kMinPanelTokens tokens on, matvec below)
// of every SIMD variant this CPU runs, selected through the registry with ScopedMatmulVariant, against the
// scalar reference:
//  - tokens 1..17 and a few larger counts (two token vectors, a short last vector), row counts that are
//    not multiples of the row tile or of the matvec's 8-row group, rows of 1..3 blocks and longer ones
//    (block pairs and an odd last block), weights, activations and outputs off any alignment;
//  - activations quantized once beforehand (QuantizedActivations, as the engine shares them) or by the
//    kernel itself: the same codes, so bit-identical results;
//  - rows split between callers at arbitrary boundaries give bit-identical results (a row's result depends
//    only on its row and the tokens);
//  - a token's results are the same bits whatever batch it is in (alone: matvec; 2-7 tokens: matvec in
//    passes of up to 4 tokens; 8, 17, 33: tiled, at any lane) and whichever SIMD variant runs (the integer
//    sums are exact, and every path applies the same float operations in the same order).
//
// Tolerance (as in matmul_simd_accuracy_test.cpp): activation quantization moves each x[i] by at most
// amax_block / 254, so the result may move by at most sum_blocks (amax_block / 254) * sum |w[i]| (1.01x
// allowed), plus 1e-5 * sum |w| |x| for float rounding of the per-block scaling (the block sums and their
// offsets are exact integers) and of the accumulation over blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/matmul/scalar_matmul.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kIntegerTypes[] = {
    GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,   GgmlType::IQ4_NL, GgmlType::Q2_K,
    GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS, GgmlType::MXFP4};

struct TiledCase {
  std::string variant;
  GgmlType type;
};

void PrintTo(const TiledCase& c, std::ostream* os) { *os << c.variant << " " << ggml_type_name(c.type); }

std::vector<TiledCase> tiled_cases() {
  std::vector<TiledCase> cases;
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.name == "scalar" || (v.available && !v.available())) continue;
    for (GgmlType type : kIntegerTypes) {
      for (const MatmulKernel& k : v.kernels()) {
        if (k.type == type) cases.push_back({std::string(v.name), type});
      }
    }
  }
  return cases;
}

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

size_t activation_block(GgmlType t) { return ggml_type_traits(t).block_elements == 256 ? 256 : 32; }

double allowed_error(GgmlType type, const float* w, const float* x, size_t n) {
  double magnitude = 0;
  for (size_t i = 0; i < n; ++i) magnitude += std::fabs(static_cast<double>(w[i]) * x[i]);
  double bound = 1e-5 * magnitude + 1e-30;
  const size_t block = activation_block(type);
  for (size_t b = 0; b < n; b += block) {
    double amax = 0, wsum = 0;
    for (size_t i = b; i < b + block; ++i) {
      amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
      wsum += std::fabs(static_cast<double>(w[i]));
    }
    bound += 1.01 * amax / 254.0 * wsum;
  }
  return bound;
}

// One weight matrix and its input, at `misalign` bytes (weights) / floats (x, y) off alignment.
struct Problem {
  size_t n_rows, n_cols, n_tokens, misalign;
  std::vector<std::byte> w_storage;
  std::span<std::byte> weights;
  std::vector<float> decoded;  // [n_rows][n_cols], the reference codec's values
  std::vector<float> x_storage;
  float* x = nullptr;       // [n_tokens][n_cols]
  std::vector<float> want;  // [n_tokens][n_rows], the scalar reference

  Problem(GgmlType type, size_t rows, size_t cols, size_t tokens, size_t off, uint32_t seed)
      : n_rows(rows), n_cols(cols), n_tokens(tokens), misalign(off) {
    const size_t row_bytes = *ggml_row_bytes(type, cols);
    w_storage.resize(rows * row_bytes + off);
    weights = std::span(w_storage.data() + off, rows * row_bytes);
    decoded.resize(rows * cols);
    const auto source = random_values(rows * cols, seed);
    for (size_t r = 0; r < rows; ++r) {
      const auto bytes = weights.subspan(r * row_bytes, row_bytes);
      EXPECT_TRUE(quantize_row(type, std::span(source).subspan(r * cols, cols), bytes).ok());
      EXPECT_TRUE(dequantize_row(type, bytes, std::span(decoded).subspan(r * cols, cols)).ok());
    }
    x_storage.resize(tokens * cols + off);
    x = x_storage.data() + off;
    const auto xv = random_values(tokens * cols, seed + 1, 0.5f);
    std::copy(xv.begin(), xv.end(), x);
    for (size_t i = 0; i < tokens * cols; i += 97) x[i] *= 12.0f;  // outliers, as after attention
    want.assign(tokens * rows, -999.0f);
    for (const MatmulKernel& k : scalar_matmul_variant().kernels()) {
      if (k.type == type) k.fn({type, weights, rows, cols, x, tokens, want.data()}, 0, rows);
    }
  }
};

class TiledMatmulTest : public ::testing::TestWithParam<TiledCase> {
 protected:
  void SetUp() override {
    variant_.emplace(GetParam().variant);
    auto kernel = matmul_registry().find(GetParam().type);
    ASSERT_TRUE(kernel.ok()) << kernel.error().message;
    ASSERT_EQ(kernel->variant, GetParam().variant);
    fn_ = kernel->fn;
  }
  void TearDown() override { variant_.reset(); }

  // Runs the kernel on `p` (rows cut at `cuts`), with xq or without; returns y [n_tokens][n_rows].
  std::vector<float> run(const Problem& p, const QuantizedActivations* xq, std::vector<size_t> cuts = {}) {
    std::vector<float> y_storage(p.n_tokens * p.n_rows + p.misalign + 1, -999.0f);
    float* y = y_storage.data() + p.misalign;
    const MatmulProblem problem{GetParam().type, p.weights, p.n_rows, p.n_cols, p.x, p.n_tokens, y, xq};
    EXPECT_TRUE(check_matmul_problem(problem).ok());
    cuts.push_back(p.n_rows);
    size_t begin = 0;
    for (size_t end : cuts) {
      fn_(problem, begin, end);
      begin = end;
    }
    for (size_t i = 0; i < p.misalign; ++i) EXPECT_EQ(y_storage[i], -999.0f) << "wrote before y";
    EXPECT_EQ(y_storage.back(), -999.0f) << "wrote after y";
    return {y, y + p.n_tokens * p.n_rows};
  }

  void expect_near_reference(const Problem& p, const std::vector<float>& y) {
    for (size_t t = 0; t < p.n_tokens; ++t) {
      for (size_t r = 0; r < p.n_rows; ++r) {
        const double bound =
            allowed_error(GetParam().type, p.decoded.data() + r * p.n_cols, p.x + t * p.n_cols, p.n_cols);
        ASSERT_NEAR(y[t * p.n_rows + r], p.want[t * p.n_rows + r], bound)
            << GetParam().variant << " " << ggml_type_name(GetParam().type) << " rows " << p.n_rows << " cols "
            << p.n_cols << " tokens " << p.n_tokens << " at t" << t << " r" << r;
      }
    }
  }

  std::optional<ScopedMatmulVariant> variant_;
  MatmulFn fn_ = nullptr;
};

TEST_P(TiledMatmulTest, TokenCountsAndOddRowCountsMatchTheReference) {
  const size_t block = ggml_type_traits(GetParam().type).block_elements;
  const GgmlType types[] = {GetParam().type};
  uint32_t seed = 11;
  // 1 and 3 blocks, and 9 (32-value formats: one 8-block step and a single block) or 2 super-blocks.
  const std::vector<size_t> cols = block == 32 ? std::vector<size_t>{32, 96, 288} : std::vector<size_t>{256, 512};
  for (size_t n_cols : cols) {
    for (size_t n_rows : {1, 5, 7}) {
      for (size_t n_tokens = 1; n_tokens <= 17; ++n_tokens) {
        const Problem p(GetParam().type, n_rows, n_cols, n_tokens, seed % 4, seed);
        ++seed;
        QuantizedActivations xq;
        ASSERT_TRUE(xq.quantize_all(p.x, n_tokens, n_cols, types).ok());
        const std::vector<float> shared = run(p, &xq);
        expect_near_reference(p, shared);
        if (HasFatalFailure()) return;
        EXPECT_EQ(run(p, nullptr), shared) << "self-quantized differs, tokens " << n_tokens;
      }
    }
  }
}

TEST_P(TiledMatmulTest, LargerBatchesAndLongRowsMatchTheReference) {
  const size_t block = ggml_type_traits(GetParam().type).block_elements;
  const GgmlType types[] = {GetParam().type};
  // 32-value formats: 11 blocks = an 8-block step, a pair and a single block; 2048 values = 64 blocks.
  const std::vector<size_t> cols = block == 32 ? std::vector<size_t>{352, 2048} : std::vector<size_t>{768, 2048};
  uint32_t seed = 101;
  for (size_t n_cols : cols) {
    for (size_t n_tokens : {24, 32, 33, 40, 64}) {
      const Problem p(GetParam().type, 18, n_cols, n_tokens, seed % 4, seed);
      ++seed;
      QuantizedActivations xq;
      ASSERT_TRUE(xq.quantize_all(p.x, n_tokens, n_cols, types).ok());
      expect_near_reference(p, run(p, &xq));
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(TiledMatmulTest, RowSplitsGiveIdenticalResults) {
  const size_t n_cols = ggml_type_traits(GetParam().type).block_elements == 32 ? 320 : 512;
  const GgmlType types[] = {GetParam().type};
  for (size_t n_tokens : {3, 16, 21}) {
    const Problem p(GetParam().type, 23, n_cols, n_tokens, 1, 7 + static_cast<uint32_t>(n_tokens));
    QuantizedActivations xq;
    ASSERT_TRUE(xq.quantize_all(p.x, n_tokens, n_cols, types).ok());
    const std::vector<float> whole = run(p, &xq);
    EXPECT_EQ(run(p, &xq, {1, 2, 9, 16}), whole) << "tokens " << n_tokens;
    EXPECT_EQ(run(p, &xq, {3, 3, 22}), whole) << "tokens " << n_tokens;
  }
}

// y rows of tokens [first, first + n) of p, computed as a batch of their own.
std::vector<float> run_sub_batch(MatmulFn fn, GgmlType type, const Problem& p, size_t first, size_t n) {
  std::vector<float> y(n * p.n_rows);
  fn({type, p.weights, p.n_rows, p.n_cols, p.x + first * p.n_cols, n, y.data()}, 0, p.n_rows);
  return y;
}

TEST_P(TiledMatmulTest, BatchCompositionDoesNotChangeBits) {
  const size_t n_cols = ggml_type_traits(GetParam().type).block_elements == 32 ? 288 : 512;
  const Problem p(GetParam().type, 13, n_cols, 40, 2, 77);
  const std::vector<float> all = run(p, nullptr);
  // (first token, batch size): alone, matvec batches of every pass size and split into passes (2-8
  // tokens, below and above kMinPanelTokens), tiled batches with the tokens at other lanes.
  const std::pair<size_t, size_t> batches[] = {{0, 1},  {7, 1}, {39, 1}, {0, 2},  {9, 3},  {11, 4}, {3, 5},
                                               {20, 5}, {0, 6}, {14, 7}, {32, 8}, {5, 17}, {7, 33}, {1, 39}};
  for (const auto& [first, n] : batches) {
    const std::vector<float> sub = run_sub_batch(fn_, GetParam().type, p, first, n);
    for (size_t t = 0; t < n; ++t) {
      for (size_t r = 0; r < p.n_rows; ++r) {
        ASSERT_EQ(sub[t * p.n_rows + r], all[(first + t) * p.n_rows + r])
            << "token " << first + t << " row " << r << " in a batch of " << n << " from " << first;
      }
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<TiledCase>& info) {
  return info.param.variant + "_" + std::string(ggml_type_name(info.param.type));
}

INSTANTIATE_TEST_SUITE_P(AvailableVariants, TiledMatmulTest, ::testing::ValuesIn(tiled_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TiledMatmulTest);

TEST(TiledMatmulVariants, SomeVariantRunsHere) {
  if (tiled_cases().empty()) GTEST_SKIP() << "this CPU supports none of the compiled SIMD matmul variants";
  SUCCEED();
}

// Every SIMD variant gives the same bits for every integer type, one token and a batch.
TEST(TiledMatmulVariants, VariantsAgreeBitForBit) {
  std::vector<std::string> variants;
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.name != "scalar" && (!v.available || v.available())) variants.emplace_back(v.name);
  }
  if (variants.size() < 2) GTEST_SKIP() << "fewer than two SIMD matmul variants run on this CPU";
  for (GgmlType type : kIntegerTypes) {
    const size_t n_cols = ggml_type_traits(type).block_elements == 32 ? 352 : 768;
    for (size_t n_tokens : {1, 5, 20}) {
      const Problem p(type, 11, n_cols, n_tokens, 0, 5);
      std::vector<std::vector<float>> results;
      for (const std::string& name : variants) {
        const ScopedMatmulVariant forced(name);
        auto kernel = matmul_registry().find(type);
        ASSERT_TRUE(kernel.ok()) << kernel.error().message;
        results.push_back(run_sub_batch(kernel->fn, type, p, 0, n_tokens));
      }
      for (size_t i = 1; i < results.size(); ++i) {
        EXPECT_EQ(results[i], results[0])
            << ggml_type_name(type) << " tokens " << n_tokens << ": " << variants[i] << " vs " << variants[0];
      }
    }
  }
}

// Quantized activations of another input are refused, not silently used.
TEST(TiledMatmulVariants, ActivationsOfAnotherInputAreRejected) {
  const std::vector<float> x(4 * 64, 1.0f), other(4 * 64, 2.0f);
  std::vector<float> y(4 * 2);
  std::vector<std::byte> weights(2 * *ggml_row_bytes(GgmlType::Q8_0, 64));
  QuantizedActivations xq;
  const GgmlType types[] = {GgmlType::Q8_0};
  ASSERT_TRUE(xq.quantize_all(other.data(), 4, 64, types).ok());
  const Status s = check_matmul_problem({GgmlType::Q8_0, weights, 2, 64, x.data(), 4, y.data(), &xq});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("not of this input"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace infertune
