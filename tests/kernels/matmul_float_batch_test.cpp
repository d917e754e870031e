// The float weight types' kernels (F32, F16, BF16) of every SIMD variant this CPU runs (and, on a CPU with
// avx512-bf16, the avx512vnni variant's widening BF16 kernel beside its VDPBF16PS one): each output is
// summed in one order whatever tile computes it, so
//  - a token's results are the same bits whatever batch it is in: alone (the matvec path), or in a batch
//    (the tiled path) at any position of a token tile or among the tokens left over after the full tiles;
//  - rows split between callers at any boundary (inside a row tile, inside the matvec's 8-row group) give
//    the same bits, and a call writes only its own rows.
// Row lengths leave a partial last vector step (1000) or none (2048). The accuracy of these kernels against
// the scalar reference is matmul_simd_accuracy_test.cpp's.
#include <gtest/gtest.h>

#include <cstddef>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/matmul/avx512/matmul_avx512bf16.h"
#include "kernels/matmul/avx512/matmul_avx512vnni.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

struct FloatCase {
  std::string variant;
  GgmlType type;
  MatmulFn fn;
};

void PrintTo(const FloatCase& c, std::ostream* os) { *os << c.variant << " " << ggml_type_name(c.type); }

std::vector<FloatCase> float_cases() {
  std::vector<FloatCase> cases;
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.name == "scalar" || (v.available && !v.available())) continue;
    for (const MatmulKernel& k : v.kernels()) {
      if (k.type == GgmlType::F32 || k.type == GgmlType::F16 || k.type == GgmlType::BF16) {
        cases.push_back({std::string(v.name), k.type, k.fn});
      }
    }
    if (v.name == "avx512vnni" && avx512bf16_dot_kernel()) {
      cases.push_back({"avx512vnni_widening", GgmlType::BF16, avx512vnni_bf16_widening_kernel()});
    }
  }
  return cases;
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class FloatBatchTest : public ::testing::TestWithParam<FloatCase> {
 protected:
  void make(size_t rows, size_t cols, size_t tokens) {
    n_rows_ = rows;
    n_cols_ = cols;
    n_tokens_ = tokens;
    weights_.resize(*ggml_row_bytes(GetParam().type, cols) * rows);
    ASSERT_TRUE(quantize_row(GetParam().type, random_values(rows * cols, 3), weights_).ok());
    x_ = random_values(tokens * cols, 4);
  }

  // y [n][n_rows] of tokens [first, first + n), rows computed in the ranges that `cuts` ends.
  std::vector<float> run(size_t first, size_t n, std::vector<size_t> cuts = {}) {
    std::vector<float> y(n * n_rows_, -999.0f);
    const MatmulProblem p{GetParam().type, weights_, n_rows_, n_cols_, x_.data() + first * n_cols_, n, y.data()};
    EXPECT_TRUE(check_matmul_problem(p).ok());
    cuts.push_back(n_rows_);
    size_t begin = 0;
    for (size_t end : cuts) {
      GetParam().fn(p, begin, end);
      begin = end;
    }
    return y;
  }

  size_t n_rows_ = 0, n_cols_ = 0, n_tokens_ = 0;
  std::vector<std::byte> weights_;
  std::vector<float> x_;
};

TEST_P(FloatBatchTest, BatchCompositionDoesNotChangeBits) {
  for (size_t n_cols : {1000, 2048}) {
    make(13, n_cols, 40);
    if (HasFatalFailure()) return;
    const std::vector<float> all = run(0, n_tokens_);
    // (first token, batch size): alone, and batches that put the tokens at every tile position and in the
    // leftover tokens of the 3- and 6-token tiles.
    const std::pair<size_t, size_t> batches[] = {{0, 1}, {7, 1}, {39, 1}, {3, 2}, {5, 5}, {1, 7}, {2, 17}, {7, 33}};
    for (const auto& [first, n] : batches) {
      const std::vector<float> sub = run(first, n);
      for (size_t t = 0; t < n; ++t) {
        for (size_t r = 0; r < n_rows_; ++r) {
          ASSERT_EQ(sub[t * n_rows_ + r], all[(first + t) * n_rows_ + r])
              << GetParam().variant << " " << ggml_type_name(GetParam().type) << " cols " << n_cols << " token "
              << first + t << " row " << r << " in a batch of " << n << " from " << first;
        }
      }
    }
  }
}

TEST_P(FloatBatchTest, RowSplitsGiveIdenticalResults) {
  make(23, 1000, 8);
  if (HasFatalFailure()) return;
  for (size_t tokens : {1, 8}) {
    const std::vector<float> whole = run(0, tokens);
    EXPECT_EQ(run(0, tokens, {1, 2, 9, 16}), whole) << "tokens " << tokens;
    EXPECT_EQ(run(0, tokens, {3, 3, 22}), whole) << "tokens " << tokens;
  }
}

TEST_P(FloatBatchTest, OnlyWritesItsRowRange) {
  make(11, 100, 7);
  if (HasFatalFailure()) return;
  for (size_t tokens : {1, 7}) {
    std::vector<float> y(tokens * n_rows_, -999.0f);
    GetParam().fn({GetParam().type, weights_, n_rows_, n_cols_, x_.data(), tokens, y.data()}, 2, 7);
    for (size_t t = 0; t < tokens; ++t) {
      for (size_t r = 0; r < n_rows_; ++r) {
        if (r >= 2 && r < 7) {
          EXPECT_NE(y[t * n_rows_ + r], -999.0f) << "tokens " << tokens << " t" << t << " r" << r;
        } else {
          EXPECT_EQ(y[t * n_rows_ + r], -999.0f) << "tokens " << tokens << " t" << t << " r" << r;
        }
      }
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<FloatCase>& info) {
  return info.param.variant + "_" + std::string(ggml_type_name(info.param.type));
}

INSTANTIATE_TEST_SUITE_P(AvailableVariants, FloatBatchTest, ::testing::ValuesIn(float_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FloatBatchTest);

}  // namespace
}  // namespace infertune
