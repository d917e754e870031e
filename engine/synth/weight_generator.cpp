#include "engine/synth/weight_generator.h"

#include <cmath>

namespace infertune {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// SplitMix64's output function: a strong 64-bit mixer, cheap enough to call once per value.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
  return hash;
}

// The sum of four 16-bit uniforms has mean 4 * 32767.5 and variance 4 * (65536^2 - 1) / 12.
constexpr float kSumMean = 131070.0f;
const float kSumStddev = std::sqrt((65536.0f * 65536.0f - 1.0f) / 3.0f);

}  // namespace

WeightDistribution weight_distribution(const TensorSpec& tensor, const ModelConfig& config) {
  const float fan_in = static_cast<float>(tensor.dims[0]);
  const float projection = 1.0f / std::sqrt(fan_in);  // keeps y = W x at the variance of x
  // Residual branches (attn_output, ffn_down) are scaled down as in GPT-2's initialisation: the
  // 2 * n_layers branch outputs then add up to about unit variance instead of growing with depth.
  const float residual = projection / std::sqrt(2.0f * static_cast<float>(config.n_layers));
  switch (tensor.role) {
    case TensorRole::TokenEmbedding:
      return {0.0f, 0.02f};
    case TensorRole::RopeFreqs:
      return {1.0f, 0.0f};
    // LongRoPE's divisors are above 1, the long ones far above (Phi-3.5's reach 60); these stay positive (a value is
    // within 3.5 standard deviations of its mean) and differ enough that the two sets give different logits.
    case TensorRole::RopeFactorsLong:
      return {4.0f, 1.0f};
    case TensorRole::RopeFactorsShort:
      return {1.2f, 0.05f};
    case TensorRole::AttnNorm:
    case TensorRole::FfnNorm:
    case TensorRole::OutputNorm:
    case TensorRole::AttnQNorm:
    case TensorRole::AttnKNorm:
    case TensorRole::AttnPostNorm:
    case TensorRole::FfnPostNorm:
      return {1.0f, 0.02f};
    case TensorRole::AttnQBias:
    case TensorRole::AttnKBias:
    case TensorRole::AttnVBias:
    case TensorRole::AttnOutputBias:
    case TensorRole::FfnGateInpBias:
    case TensorRole::FfnGateExpsBias:
    case TensorRole::FfnUpExpsBias:
    case TensorRole::FfnDownExpsBias:
      return {0.0f, 0.02f};
    case TensorRole::AttnSinks:  // of the order of the scores, so that a short prompt's outputs feel them
      return {0.0f, 1.0f};
    case TensorRole::AttnOutput:
    case TensorRole::FfnDown:
    case TensorRole::FfnDownExps:
    case TensorRole::FfnDownShexp:
      return {0.0f, residual};
    case TensorRole::FfnGateInp:  // router logits of about unit variance: tokens spread over the experts
    case TensorRole::FfnGateInpShexp:
    case TensorRole::FfnGateShexp:
    case TensorRole::FfnUpShexp:
    case TensorRole::FfnGateExps:
    case TensorRole::FfnUpExps:
    case TensorRole::Output:
    case TensorRole::AttnQ:
    case TensorRole::AttnK:
    case TensorRole::AttnV:
    case TensorRole::AttnQkv:
    case TensorRole::FfnGate:
    case TensorRole::FfnUp:
    case TensorRole::FfnGateUp:
      return {0.0f, projection};
  }
  return {0.0f, projection};
}

WeightGenerator::WeightGenerator(uint64_t seed, std::string_view tensor_name, WeightDistribution distribution)
    : tensor_key_(mix64(seed * kGolden ^ fnv1a(tensor_name))),
      mean_(distribution.mean),
      scale_(distribution.stddev / kSumStddev) {}

void WeightGenerator::fill_row(uint64_t row, std::span<float> out) const {
  uint64_t state = mix64(tensor_key_ + (row + 1) * kGolden);
  for (float& value : out) {
    state += kGolden;
    const uint64_t bits = mix64(state);
    const uint32_t sum =
        static_cast<uint32_t>((bits & 0xFFFF) + ((bits >> 16) & 0xFFFF) + ((bits >> 32) & 0xFFFF) + (bits >> 48));
    value = mean_ + scale_ * (static_cast<float>(sum) - kSumMean);
  }
}

}  // namespace infertune
