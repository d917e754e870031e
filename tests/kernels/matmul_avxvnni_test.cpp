// The avxvnni matmul variant (VEX-encoded VPDPBUSD / VPDPWSSD on ymm):
//  - it ranks between avx512vnni and avx2, so it runs where the CPU has AVX-VNNI but not AVX-512 VNNI, and
//    INFERTUNE_KERNEL=avxvnni (a forced registry) selects it;
//  - for every integer type it gives the avx2 variant's results bit for bit: both compute the same exact
//    integer block sums (the byte dot products do not round, whether maddubs pairs or VPDPBUSD quads sum
//    them) and apply the same float operations in the same order. Checked over odd shapes (1 / 5 / 17 rows,
//    1-3 blocks and long rows), weights, activations and outputs off alignment, one token, matvec batches
//    and tiled batches (a full and a short last token vector).
// Its accuracy against the scalar reference is covered with every variant's in matmul_simd_accuracy_test.cpp
// and matmul_tiled_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kIntegerTypes[] = {
    GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,   GgmlType::IQ4_NL, GgmlType::Q2_K,
    GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS, GgmlType::MXFP4};

std::optional<MatmulVariant> compiled_variant(std::string_view name) {
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.name == name) return v;
  }
  return std::nullopt;
}

bool runs_here(std::string_view name) {
  const auto v = compiled_variant(name);
  return v && (!v->available || v->available());
}

MatmulFn kernel_of(std::string_view variant, GgmlType type) {
  for (const MatmulKernel& k : compiled_variant(variant)->kernels()) {
    if (k.type == type) return k.fn;
  }
  return nullptr;
}

TEST(AvxVnniVariant, RanksBetweenAvx512VnniAndAvx2) {
  const auto avx2 = compiled_variant("avx2"), avxvnni = compiled_variant("avxvnni");
  const auto avx512 = compiled_variant("avx512vnni");
  ASSERT_TRUE(avx2 && avxvnni && avx512);
  EXPECT_GT(avxvnni->priority, avx2->priority);
  EXPECT_LT(avxvnni->priority, avx512->priority);
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(avxvnni->available(), f.avx2 && f.fma && f.f16c && f.avx_vnni);
}

TEST(AvxVnniVariant, ChosenWithoutAvx512VnniAndWhenForced) {
  if (!runs_here("avxvnni")) GTEST_SKIP() << "this CPU has no AVX-VNNI (cpuid leaf 7 subleaf 1 eax bit 4)";
  // This CPU as one without AVX-512 VNNI: the avx512vnni variant reports itself unavailable.
  std::vector<MatmulVariant> variants = compiled_matmul_variants();
  for (MatmulVariant& v : variants) {
    if (v.name == "avx512vnni") v.available = [] { return false; };
  }
  const MatmulRegistry without_avx512(variants, std::nullopt);
  ASSERT_FALSE(without_avx512.variant_names().empty());
  EXPECT_EQ(without_avx512.variant_names().front(), "avxvnni");
  for (GgmlType type : kIntegerTypes) {
    auto kernel = without_avx512.find(type);
    ASSERT_TRUE(kernel.ok()) << kernel.error().message;
    EXPECT_EQ(kernel->variant, "avxvnni") << ggml_type_name(type);
  }
  const MatmulRegistry forced(compiled_matmul_variants(), std::string("avxvnni"));
  for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q8_0, GgmlType::F16}) {
    auto kernel = forced.find(type);
    ASSERT_TRUE(kernel.ok()) << kernel.error().message;
    EXPECT_EQ(kernel->variant, "avxvnni");
  }
}

std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class AvxVnniMatchesAvx2 : public ::testing::TestWithParam<GgmlType> {
 protected:
  // avx2's and avxvnni's y for one shape, weights and x `misalign` bytes / floats off alignment.
  void expect_same_bits(size_t n_rows, size_t n_cols, size_t n_tokens, size_t misalign, uint32_t seed) {
    const GgmlType type = GetParam();
    const size_t row_bytes = *ggml_row_bytes(type, n_cols);
    std::vector<std::byte> storage(n_rows * row_bytes + misalign);
    const std::span<std::byte> weights(storage.data() + misalign, n_rows * row_bytes);
    const auto source = random_values(n_rows * n_cols, seed, 1.0f);
    for (size_t r = 0; r < n_rows; ++r) {
      ASSERT_TRUE(
          quantize_row(type, std::span(source).subspan(r * n_cols, n_cols), weights.subspan(r * row_bytes, row_bytes))
              .ok());
    }
    std::vector<float> x_storage(n_tokens * n_cols + misalign);
    float* x = x_storage.data() + misalign;
    const auto xv = random_values(n_tokens * n_cols, seed + 1, 0.5f);
    std::copy(xv.begin(), xv.end(), x);
    for (size_t i = 0; i < n_tokens * n_cols; i += 97) x[i] *= 12.0f;  // outliers, as after attention
    std::vector<float> y_avx2(n_tokens * n_rows + misalign, -999.0f), y_vnni(y_avx2);
    const MatmulProblem a{type, weights, n_rows, n_cols, x, n_tokens, y_avx2.data() + misalign};
    const MatmulProblem b{type, weights, n_rows, n_cols, x, n_tokens, y_vnni.data() + misalign};
    ASSERT_TRUE(check_matmul_problem(a).ok());
    kernel_of("avx2", type)(a, 0, n_rows);
    const size_t split = n_rows / 2;  // as two threads would
    kernel_of("avxvnni", type)(b, 0, split);
    kernel_of("avxvnni", type)(b, split, n_rows);
    ASSERT_EQ(y_vnni, y_avx2) << ggml_type_name(type) << " rows " << n_rows << " cols " << n_cols << " tokens "
                              << n_tokens;
  }
};

TEST_P(AvxVnniMatchesAvx2, BitForBitOverOddShapes) {
  if (!runs_here("avxvnni") || !runs_here("avx2")) GTEST_SKIP() << "this CPU cannot run both avxvnni and avx2";
  const size_t block = ggml_type_traits(GetParam()).block_elements;
  const std::vector<size_t> cols = {block, 3 * block, block == 32 ? 2048u : 2560u};
  uint32_t seed = 21;
  for (size_t n_cols : cols) {
    for (size_t n_rows : {1, 5, 17}) {
      for (size_t n_tokens : {1, 2, 5, 6, 17, 33}) {
        expect_same_bits(n_rows, n_cols, n_tokens, seed % 4, seed);
        if (HasFatalFailure()) return;
        ++seed;
      }
    }
  }
}

std::string type_name(const ::testing::TestParamInfo<GgmlType>& info) {
  return std::string(ggml_type_name(info.param));
}

INSTANTIATE_TEST_SUITE_P(IntegerTypes, AvxVnniMatchesAvx2, ::testing::ValuesIn(kIntegerTypes), type_name);

}  // namespace
}  // namespace infertune
