// Kernel selection: the highest-priority available variant per type, unavailable variants skipped, a
// forced variant (INFERTUNE_KERNEL) used for every type it has and an error for the rest or for an unknown
// name; and the compiled registry covering every type with a codec through "scalar".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/matmul/matmul_registry.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void kernel_a(const MatmulProblem&, size_t, size_t) {}
void kernel_b(const MatmulProblem&, size_t, size_t) {}
void kernel_c(const MatmulProblem&, size_t, size_t) {}

std::vector<MatmulVariant> fake_variants() {
  return {
      {"slow", 0, [] { return true; },
       [] {
         return std::vector<MatmulKernel>{{GgmlType::F32, "slow", kernel_a}, {GgmlType::Q8_0, "slow", kernel_a}};
       }},
      {"fast", 10, [] { return true; },
       [] {
         return std::vector<MatmulKernel>{{GgmlType::Q8_0, "fast", kernel_b}};
       }},
      {"absent", 20, [] { return false; },
       [] {
         return std::vector<MatmulKernel>{{GgmlType::Q8_0, "absent", kernel_c}};
       }},
  };
}

TEST(MatmulRegistryTest, PicksTheBestAvailableVariantPerType) {
  const MatmulRegistry registry(fake_variants(), std::nullopt);
  EXPECT_THAT(registry.variant_names(), ElementsAre("fast", "slow"));  // "absent": not on this CPU
  auto q8 = registry.find(GgmlType::Q8_0);
  ASSERT_TRUE(q8.ok());
  EXPECT_EQ(q8->variant, "fast");
  EXPECT_EQ(q8->fn, kernel_b);
  auto f32 = registry.find(GgmlType::F32);
  ASSERT_TRUE(f32.ok());
  EXPECT_EQ(f32->variant, "slow");  // the only one that has it
  auto missing = registry.find(GgmlType::Q4_K);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("q4_K"));
}

TEST(MatmulRegistryTest, ForcedVariantIsUsedOrRefused) {
  const MatmulRegistry forced(fake_variants(), "slow");
  auto q8 = forced.find(GgmlType::Q8_0);
  ASSERT_TRUE(q8.ok());
  EXPECT_EQ(q8->fn, kernel_a);

  const MatmulRegistry fast_only(fake_variants(), "fast");
  auto f32 = fast_only.find(GgmlType::F32);
  ASSERT_FALSE(f32.ok());
  EXPECT_THAT(f32.error().message, HasSubstr("no fast matmul kernel for type f32"));

  const MatmulRegistry unknown(fake_variants(), "absent");  // compiled, but not on this CPU
  auto r = unknown.find(GgmlType::Q8_0);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("INFERTUNE_KERNEL=absent"));
  EXPECT_THAT(r.error().message, HasSubstr("fast, slow"));
}

TEST(MatmulRegistryTest, CompiledRegistryHasScalarForEveryCodecType) {
  const MatmulRegistry registry(compiled_matmul_variants(), "scalar");
  for (uint32_t id = 0; id < 64; ++id) {
    const auto traits = ggml_type_traits(id);
    if (!traits) continue;
    auto kernel = registry.find(traits->type);
    EXPECT_EQ(kernel.ok(), has_reference_codec(traits->type)) << traits->name;
    if (kernel.ok()) {
      EXPECT_EQ(kernel->variant, "scalar");
    }
  }
}

}  // namespace
}  // namespace infertune
