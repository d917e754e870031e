// Every SIMD matmul variant this CPU can run, for every type it implements, against the scalar reference
// kernel over odd shapes (rows 1/3/17, tokens 1/2/5/33, 1-4 blocks and longer rows), with unaligned weight,
// activation and output pointers and partial row ranges.
//
// Tolerance, written per type from how the kernels compute:
// - Integer types quantize each activation block (32 values for the 32-value formats, 256 for K-quants and
//   IQ4_XS) to int8 with d = amax / 127 and round to nearest, so each x[i] moves by at most d / 2 =
//   amax_block / 254. The weight codes and their integer products are exact, so the result can move by at
//   most  sum_blocks (amax_block / 254) * sum_{i in block} |w[i]|  (about 2^-8 of sum |w| * amax); we allow
//   1.01x that, plus 1e-5 * sum |w| |x| for float rounding of the per-block scaling and the final sums.
// - Float types (F32, F16, BF16) see the same weights and activations as the reference (both round F16 /
//   BF16 activations to the weight type); only float accumulation differs from the reference's double:
//   1e-5 * sum |w| |x| covers it for these row lengths (VDPBF16PS, avx512vnni's BF16 kernel where the CPU
//   has avx512-bf16, adds each lane's pair of products in f32: also only an order of float sums). Their row
//   lengths leave partial vector steps of every size class (1, 7, 33, 100, 1000) and none (2048).
// On such a CPU the avx512vnni variant's other BF16 kernel (bf16 widened by shifts) is checked as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul/avx512/matmul_avx512bf16.h"
#include "kernels/matmul/avx512/matmul_avx512vnni.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/matmul/scalar_matmul.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

struct SimdCase {
  std::string variant;
  GgmlType type;
  MatmulFn fn;
};

void PrintTo(const SimdCase& c, std::ostream* os) { *os << c.variant << " " << ggml_type_name(c.type); }

std::vector<SimdCase> simd_cases() {
  std::vector<SimdCase> cases;
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.name == "scalar" || (v.available && !v.available())) continue;
    for (const MatmulKernel& k : v.kernels()) cases.push_back({std::string(v.name), k.type, k.fn});
    if (v.name == "avx512vnni" && avx512bf16_dot_kernel()) {
      cases.push_back({"avx512vnni_widening", GgmlType::BF16, avx512vnni_bf16_widening_kernel()});
    }
  }
  return cases;
}

MatmulFn scalar_fn(GgmlType type) {
  for (const MatmulKernel& k : scalar_matmul_variant().kernels()) {
    if (k.type == type) return k.fn;
  }
  return nullptr;
}

bool is_float_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// Values per activation quantization block for the type's pairing (0: activations stay float).
size_t activation_block(GgmlType t) {
  if (is_float_type(t)) return 0;
  return ggml_type_traits(t).block_elements == 256 ? 256 : 32;
}

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The largest error the kernel may make for one (row, token), per the rules at the top of this file.
double allowed_error(GgmlType type, const float* w, const float* x, size_t n) {
  double magnitude = 0;
  for (size_t i = 0; i < n; ++i) magnitude += std::fabs(static_cast<double>(w[i]) * x[i]);
  double bound = 1e-5 * magnitude + 1e-30;
  const size_t block = activation_block(type);
  if (block == 0) return bound;
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

class SimdMatmulTest : public ::testing::TestWithParam<SimdCase> {
 protected:
  // Runs the SIMD kernel and the reference on one shape; `misalign` shifts weights by that many bytes and
  // activations/outputs by that many floats off any vector alignment.
  void check_shape(size_t n_rows, size_t n_cols, size_t n_tokens, size_t misalign, uint32_t seed) {
    const SimdCase& c = GetParam();
    const size_t row_bytes = *ggml_row_bytes(c.type, n_cols);
    // Weights from the reference quantizer of normal values (a realistic spread of codes and scales).
    std::vector<std::byte> storage(n_rows * row_bytes + misalign);
    const std::span<std::byte> weights(storage.data() + misalign, n_rows * row_bytes);
    std::vector<float> decoded(n_rows * n_cols);
    const auto source = random_values(n_rows * n_cols, seed);
    for (size_t r = 0; r < n_rows; ++r) {
      const auto bytes = weights.subspan(r * row_bytes, row_bytes);
      ASSERT_TRUE(quantize_row(c.type, std::span(source).subspan(r * n_cols, n_cols), bytes).ok());
      ASSERT_TRUE(dequantize_row(c.type, bytes, std::span(decoded).subspan(r * n_cols, n_cols)).ok());
    }
    // Activations with a few outliers, as after attention / norms.
    std::vector<float> x_storage(n_tokens * n_cols + misalign);
    float* x = x_storage.data() + misalign;
    const auto xv = random_values(n_tokens * n_cols, seed + 1, 0.5f);
    std::copy(xv.begin(), xv.end(), x);
    for (size_t i = 0; i < n_tokens * n_cols; i += 97) x[i] *= 12.0f;

    std::vector<float> y_storage(n_tokens * n_rows + misalign, -999.0f);
    float* y = y_storage.data() + misalign;
    std::vector<float> want(n_tokens * n_rows, -999.0f);
    const MatmulProblem problem{c.type, weights, n_rows, n_cols, x, n_tokens, y};
    const MatmulProblem reference{c.type, weights, n_rows, n_cols, x, n_tokens, want.data()};
    ASSERT_TRUE(check_matmul_problem(problem).ok());
    const MatmulFn ref = scalar_fn(c.type);
    ASSERT_NE(ref, nullptr) << "no scalar reference for " << ggml_type_name(c.type);
    ref(reference, 0, n_rows);

    // Two row ranges, as two threads would split them; a one-row problem is one range.
    const size_t split = n_rows / 2;
    c.fn(problem, 0, split);
    c.fn(problem, split, n_rows);
    for (size_t t = 0; t < n_tokens; ++t) {
      for (size_t r = 0; r < n_rows; ++r) {
        const double bound = allowed_error(c.type, decoded.data() + r * n_cols, x + t * n_cols, n_cols);
        ASSERT_NEAR(y[t * n_rows + r], want[t * n_rows + r], bound)
            << c.variant << " " << ggml_type_name(c.type) << " rows " << n_rows << " cols " << n_cols << " tokens "
            << n_tokens << " at t" << t << " r" << r;
      }
    }
    for (size_t i = 0; i < misalign; ++i) EXPECT_EQ(y_storage[i], -999.0f) << "wrote before y";
  }
};

TEST_P(SimdMatmulTest, MatchesScalarReferenceOverOddShapes) {
  const GgmlType type = GetParam().type;
  const size_t block = ggml_type_traits(type).block_elements;
  // 1-4 blocks, then longer rows; float types (1-value blocks) also get lengths that leave vector tails.
  std::vector<size_t> cols = {block, 2 * block, 3 * block, 4 * block, 11 * block};
  if (block == 32) cols.push_back(2048);
  if (block == 1) cols = {1, 7, 33, 100, 1000, 2048};
  uint32_t seed = 1;
  for (size_t n_cols : cols) {
    for (size_t n_rows : {1, 3, 17}) {
      for (size_t n_tokens : {1, 2, 5, 33}) {
        check_shape(n_rows, n_cols, n_tokens, seed % 3, seed);
        if (HasFatalFailure()) return;
        ++seed;
      }
    }
  }
}

TEST_P(SimdMatmulTest, OnlyWritesItsRowRange) {
  const SimdCase& c = GetParam();
  const size_t n_cols = 2 * std::max<size_t>(256, ggml_type_traits(c.type).block_elements);
  constexpr size_t kRows = 6, kTokens = 2;
  const size_t row_bytes = *ggml_row_bytes(c.type, n_cols);
  std::vector<std::byte> weights(kRows * row_bytes);
  const auto values = random_values(kRows * n_cols, 5);
  ASSERT_TRUE(quantize_row(c.type, values, weights).ok());
  const auto x = random_values(kTokens * n_cols, 6);
  std::vector<float> y(kTokens * kRows, -999.0f);
  c.fn({c.type, weights, kRows, n_cols, x.data(), kTokens, y.data()}, 2, 4);
  for (size_t t = 0; t < kTokens; ++t) {
    for (size_t r = 0; r < kRows; ++r) {
      if (r == 2 || r == 3) {
        EXPECT_NE(y[t * kRows + r], -999.0f);
      } else {
        EXPECT_EQ(y[t * kRows + r], -999.0f) << "row " << r;
      }
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<SimdCase>& info) {
  return info.param.variant + "_" + std::string(ggml_type_name(info.param.type));
}

INSTANTIATE_TEST_SUITE_P(AvailableVariants, SimdMatmulTest, ::testing::ValuesIn(simd_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SimdMatmulTest);

// On a CPU with no SIMD variant the parameterized tests above do not run; say so instead of passing.
TEST(SimdMatmulVariants, SomeVariantRunsHere) {
  if (simd_cases().empty()) GTEST_SKIP() << "this CPU supports none of the compiled SIMD matmul variants";
  SUCCEED();
}

// The registry prefers the highest-priority available variant per type, and the reference stays reachable.
TEST(SimdMatmulVariants, RegistryPicksBestAvailableVariant) {
  const auto cases = simd_cases();
  if (cases.empty()) GTEST_SKIP() << "this CPU supports none of the compiled SIMD matmul variants";
  const MatmulRegistry best(compiled_matmul_variants(), std::nullopt);
  const std::string top = best.variant_names().front();
  auto q4k = best.find(GgmlType::Q4_K);
  ASSERT_TRUE(q4k.ok());
  EXPECT_EQ(q4k->variant, top);
  const MatmulRegistry forced(compiled_matmul_variants(), std::string("scalar"));
  auto scalar = forced.find(GgmlType::Q4_K);
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->variant, "scalar");
  // A type no SIMD variant implements still falls back to the scalar kernel.
  auto q8k = best.find(GgmlType::Q8_K);
  ASSERT_TRUE(q8k.ok());
  EXPECT_EQ(q8k->variant, "scalar");
}

}  // namespace
}  // namespace infertune
