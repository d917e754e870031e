// The MXFP4 matmul kernels of every SIMD variant this CPU runs against ggml's CPU dot product for the type,
// recomputed here from its definition: MXFP4 weights pair with q8_0 activations (ggml's vec_dot_type), and
//   y = sum over blocks b of  mxfp4_scale(e_b) * d_x(b) * sum_j kMxfp4Values[q_j] * x_code_j
// with the activations' codes and f16 scales from quantize_row_q8 (the quantization the kernels use, checked
// against ggml's q8_0 in matmul_activation_quant_test.cpp). The reference sums in double; the kernels' block
// sums are exact integers and each block costs one float multiply (exact: d_w is a power of two) and one FMA,
// so 1e-5 of the sum of |terms| bounds their rounding; subnormal products (e = 0, 1) may lose all precision,
// which 1e-35 absolute covers.
// Weights are random bytes, not encoder output: every code and exponents across the range, the subnormal
// scales e = 0, 1 among them. Shapes reach the matrix-vector path (1-5 tokens, block pairs and an odd last
// block, row groups cut short) and the tiled one (33 tokens), with pointers off alignment and rows split
// between two calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/quant/blocks_basic.h"

namespace infertune {
namespace {

using basic_quant::kMxfp4Values;
using basic_quant::mxfp4_scale;

constexpr size_t kBlockBytes = 17;

struct VariantKernel {
  std::string variant;
  MatmulFn fn;
};

std::vector<VariantKernel> mxfp4_kernels() {
  std::vector<VariantKernel> out;
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.name == "scalar" || (v.available && !v.available())) continue;
    for (const MatmulKernel& k : v.kernels()) {
      if (k.type == GgmlType::MXFP4) out.push_back({std::string(v.name), k.fn});
    }
  }
  return out;
}

// Random MXFP4 rows: any codes; exponents mostly near 127 (values of order 1), some subnormal-scale blocks.
std::vector<std::byte> random_weights(size_t n_rows, size_t n_cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), exponent(117, 137), pick(0, 9);
  std::vector<std::byte> w(n_rows * n_cols / 32 * kBlockBytes);
  for (size_t b = 0; b < w.size() / kBlockBytes; ++b) {
    const int p = pick(rng);
    w[b * kBlockBytes] = static_cast<std::byte>(p == 0 ? 0 : p == 1 ? 1 : exponent(rng));
    for (size_t i = 1; i < kBlockBytes; ++i) w[b * kBlockBytes + i] = static_cast<std::byte>(byte(rng));
  }
  return w;
}

struct Expected {
  double value;
  double tolerance;
};

// ggml's dot product of one weight row with one token's q8_0 activations (codes, d).
Expected ggml_dot(const std::byte* row, const int8_t* codes, const float* d, size_t n_cols) {
  double sum = 0, magnitude = 0;
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const auto* blk = reinterpret_cast<const uint8_t*>(row + b * kBlockBytes);
    int64_t dot = 0, abs_dot = 0;
    for (int j = 0; j < 32; ++j) {
      const int code = j < 16 ? blk[1 + j] & 0xF : blk[1 + j - 16] >> 4;
      const int64_t product = int64_t{kMxfp4Values[code]} * codes[32 * b + j];
      dot += product;
      abs_dot += product < 0 ? -product : product;
    }
    const double scale = static_cast<double>(mxfp4_scale(blk[0])) * d[b];
    sum += scale * static_cast<double>(dot);
    magnitude += std::fabs(scale) * static_cast<double>(abs_dot);
  }
  return {sum, 1e-5 * magnitude + 1e-35};
}

class Mxfp4Matmul : public ::testing::TestWithParam<VariantKernel> {
 protected:
  void check(size_t n_rows, size_t n_cols, size_t n_tokens, size_t misalign, uint32_t seed) {
    const size_t row_bytes = n_cols / 32 * kBlockBytes;
    const auto w = random_weights(n_rows, n_cols, seed);
    std::vector<std::byte> w_storage(w.size() + misalign);
    std::copy(w.begin(), w.end(), w_storage.begin() + static_cast<std::ptrdiff_t>(misalign));
    const std::span<const std::byte> weights(w_storage.data() + misalign, w.size());

    std::mt19937 rng(seed + 1);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    std::vector<float> x_storage(n_tokens * n_cols + misalign);
    float* x = x_storage.data() + misalign;
    for (size_t i = 0; i < n_tokens * n_cols; ++i) x[i] = i % 97 == 3 ? 12.0f * normal(rng) : normal(rng);

    std::vector<float> y_storage(n_tokens * n_rows + misalign, -999.0f);
    float* y = y_storage.data() + misalign;
    const MatmulProblem p{GgmlType::MXFP4, weights, n_rows, n_cols, x, n_tokens, y};
    ASSERT_TRUE(check_matmul_problem(p).ok());
    const size_t split = n_rows / 2;  // as two threads would
    GetParam().fn(p, 0, split);
    GetParam().fn(p, split, n_rows);

    std::vector<int8_t> codes(n_cols);
    std::vector<float> d(n_cols / 32), dsum(n_cols / 32);
    for (size_t t = 0; t < n_tokens; ++t) {
      quantize_row_q8(x + t * n_cols, n_cols, codes.data(), d.data(), dsum.data());
      for (size_t r = 0; r < n_rows; ++r) {
        const Expected want = ggml_dot(weights.data() + r * row_bytes, codes.data(), d.data(), n_cols);
        ASSERT_NEAR(y[t * n_rows + r], want.value, want.tolerance)
            << GetParam().variant << ": rows " << n_rows << " cols " << n_cols << " tokens " << n_tokens << ", row "
            << r << " token " << t;
      }
    }
  }
};

TEST_P(Mxfp4Matmul, MatchesGgmlDotProductOverOddShapes) {
  uint32_t seed = 5;
  for (size_t n_cols : {32, 96, 2048}) {
    for (size_t n_rows : {1, 5, 17}) {
      for (size_t n_tokens : {1, 2, 5, 33}) {
        check(n_rows, n_cols, n_tokens, seed % 4, seed);
        if (HasFatalFailure()) return;
        ++seed;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SimdVariants, Mxfp4Matmul, ::testing::ValuesIn(mxfp4_kernels()),
                         [](const auto& info) { return info.param.variant; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Mxfp4Matmul);

TEST(Mxfp4MatmulVariants, EveryCompiledVariantHasAKernel) {
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    bool found = false;
    for (const MatmulKernel& k : v.kernels()) found = found || k.type == GgmlType::MXFP4;
    EXPECT_TRUE(found) << v.name;
  }
}

}  // namespace
}  // namespace infertune
