// The KV cache encoders the GPU stores keys and values with (kernels/cuda/kv_encode.h), run on the CPU:
// every block of every cache type is byte for byte what the reference quantize_row writes, for ordinary
// values, tiny and huge ones (f16 subnormals and overflow), zeros, exact rounding ties and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/kv_encode.h"
#include "kernels/ggml_type.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

std::vector<std::vector<float>> sample_blocks() {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> blocks;
  for (float scale : {1.0f, 1e-3f, 1e-6f, 3e4f, 7e4f}) {
    for (int r = 0; r < 20; ++r) {
      std::vector<float> b(32);
      for (float& v : b) v = normal(rng) * scale;
      blocks.push_back(b);
    }
  }
  blocks.push_back(std::vector<float>(32, 0.0f));
  std::vector<float> ties(32);
  for (int j = 0; j < 32; ++j) ties[j] = static_cast<float>(j - 16) * 0.5f;  // x/d lands on .5 for q8_0/q4_0
  blocks.push_back(ties);
  std::vector<float> with_nan(32, 1.0f);
  with_nan[5] = std::numeric_limits<float>::quiet_NaN();
  blocks.push_back(with_nan);
  std::vector<float> subnormal_halves(32);
  for (int j = 0; j < 32; ++j) subnormal_halves[j] = std::ldexp(static_cast<float>(j + 1), -26);
  blocks.push_back(subnormal_halves);
  return blocks;
}

class CudaKvEncode : public ::testing::TestWithParam<GgmlType> {};

TEST_P(CudaKvEncode, WritesTheReferenceEncodersBytes) {
  const GgmlType type = GetParam();
  const GgmlTypeTraits& t = ggml_type_traits(type);
  const size_t bytes = 32 / t.block_elements * t.block_bytes;
  ASSERT_EQ(static_cast<size_t>(cuda::kv_block_bytes(static_cast<cuda::BlockType>(type))), bytes);
  size_t index = 0;
  for (const std::vector<float>& block : sample_blocks()) {
    std::vector<std::byte> want(bytes);
    ASSERT_TRUE(quantize_row(type, block, want).ok());
    std::vector<uint8_t> got(bytes);
    ASSERT_TRUE(cuda::encode_kv_block_any(static_cast<uint32_t>(type), block.data(), got.data()));
    for (size_t i = 0; i < bytes; ++i) {
      ASSERT_EQ(got[i], static_cast<uint8_t>(want[i])) << ggml_type_name(type) << " block " << index << " byte " << i;
    }
    ++index;
  }
}

INSTANTIATE_TEST_SUITE_P(CacheTypes, CudaKvEncode,
                         ::testing::Values(GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0,
                                           GgmlType::Q4_0),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(CudaKvEncodeTypes, OtherTypesAreRefused) {
  float x[32] = {};
  uint8_t out[256] = {};
  EXPECT_FALSE(cuda::encode_kv_block_any(static_cast<uint32_t>(GgmlType::Q4_K), x, out));
  EXPECT_EQ(cuda::kv_block_bytes(cuda::BlockType::Q6_K), 0);
}

}  // namespace
}  // namespace infertune
