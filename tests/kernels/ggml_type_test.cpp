// The type table against independent references: the byte sizes of ggml's own reference encodings
// (fixtures/quant/TYPE.quant hold 8 rows of 1024 values) and the fixed ids GGUF files use.
#include <gtest/gtest.h>

#include <filesystem>

#include "kernels/ggml_type.h"
#include "test_support.h"

namespace infertune {
namespace {

TEST(GgmlType, RowBytesMatchGgmlReferenceEncodings) {
  const char* names[] = {"f16",  "bf16", "q4_0", "q4_1", "q5_0", "q5_1",  "q8_0",
                         "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs"};
  for (const char* name : names) {
    const auto type = ggml_type_from_name(name);
    ASSERT_TRUE(type) << name;
    const auto path = test::fixture_path(std::string("quant/") + name + ".quant");
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const uint64_t file_bytes = std::filesystem::file_size(path);
    EXPECT_EQ(ggml_row_bytes(*type, 1024).value_or(0) * 8, file_bytes) << name;
  }
}

TEST(GgmlType, IdsAreTheOnesGgufFilesUse) {
  EXPECT_EQ(ggml_type_traits(0)->type, GgmlType::F32);
  EXPECT_EQ(ggml_type_traits(8)->type, GgmlType::Q8_0);
  EXPECT_EQ(ggml_type_traits(12)->type, GgmlType::Q4_K);
  EXPECT_EQ(ggml_type_traits(14)->type, GgmlType::Q6_K);
  EXPECT_EQ(ggml_type_traits(30)->type, GgmlType::BF16);
  // Ids ggml removed (Q4_2, Q4_3, the repacked Q4_0_4_4 family) and ids past the table are unknown.
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 1000u, 0xffffffffu}) {
    EXPECT_FALSE(ggml_type_traits(id)) << id;
  }
}

TEST(GgmlType, NamesRoundTripCaseInsensitively) {
  for (uint32_t id = 0; id < 64; ++id) {
    const auto traits = ggml_type_traits(id);
    if (!traits) continue;
    EXPECT_EQ(ggml_type_from_name(traits->name), traits->type);
    std::string upper(traits->name);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(ggml_type_from_name(upper), traits->type) << upper;
  }
  EXPECT_FALSE(ggml_type_from_name("q4_k_m"));  // a file-type mix, not an element type
  EXPECT_FALSE(ggml_type_from_name(""));
}

TEST(GgmlType, RowBytesRefuseBadLengthsAndOverflow) {
  EXPECT_FALSE(ggml_row_bytes(GgmlType::Q4_K, 255));
  EXPECT_FALSE(ggml_row_bytes(GgmlType::Q4_0, 33));
  EXPECT_EQ(ggml_row_bytes(GgmlType::Q4_0, 0), 0u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::F32, 3), 12u);
  EXPECT_FALSE(ggml_row_bytes(GgmlType::F64, UINT64_MAX / 4));  // 8 bytes each overflows
  EXPECT_TRUE(ggml_row_bytes(GgmlType::F64, UINT64_MAX / 8));
}

}  // namespace
}  // namespace infertune
