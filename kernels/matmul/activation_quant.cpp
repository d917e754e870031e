#include "kernels/matmul/activation_quant.h"

#include <cstring>

#include "kernels/cpu_features.h"
#include "kernels/half.h"
#include "kernels/matmul/avx2/activation_quant_avx2.h"

namespace infertune {
namespace {

// Largest |x[i]| of a block. Written as compares (not fmax) so the compiler vectorizes it.
float abs_max(const float* x, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i) {
    const float a = x[i] < 0 ? -x[i] : x[i];
    m = a > m ? a : m;
  }
  return m;
}

// Rounds x[i] / d to the nearest code, ties to even (|code| <= 127 since d = amax / 127); returns the sum of
// the codes. Adding and subtracting 1.5 * 2^23 rounds a float of magnitude < 2^22 to an integer exactly as
// nearbyint does in the default rounding mode, and vectorizes where nearbyint would be a libm call.
int quantize_codes(const float* x, size_t n, float d, int8_t* qs) {
  constexpr float kRound = 12582912.0f;
  const float inv = d != 0 ? 1.0f / d : 0.0f;
  int sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const float r = (x[i] * inv + kRound) - kRound;
    const float c = r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r);
    const int q = static_cast<int>(c);
    qs[i] = static_cast<int8_t>(q);
    sum += q;
  }
  return sum;
}

}  // namespace

ActivationFormat activation_format(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q8_0:
    case GgmlType::IQ4_NL:
    case GgmlType::MXFP4:
      return ActivationFormat::q8;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::IQ4_XS:
      return ActivationFormat::q8k;
    default:
      return ActivationFormat::f32;
  }
}

void quantize_row_q8_scalar(const float* x, size_t n, int8_t* codes, float* d, float* dsum, int32_t* isum) {
  for (size_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    const float scale = abs_max(xb, 32) / 127.0f;
    const int sum = quantize_codes(xb, 32, scale, codes + 32 * b);
    d[b] = f16_to_f32(f32_to_f16(scale));
    dsum[b] = q8_offset_sum(scale, sum);
    if (isum) isum[b] = sum;
  }
}

void quantize_row_q8k_scalar(const float* x, size_t n, kquant::BlockQ8K* out) {
  for (size_t b = 0; b < n / kquant::kSuperBlock; ++b) {
    const float* xb = x + kquant::kSuperBlock * b;
    const float d = abs_max(xb, kquant::kSuperBlock) / 127.0f;
    kquant::BlockQ8K& y = out[b];
    y.d = d;
    for (int g = 0; g < kquant::kSuperBlock / 16; ++g) {
      y.bsums[g] = static_cast<int16_t>(quantize_codes(xb + 16 * g, 16, d, y.qs + 16 * g));
    }
  }
}

namespace {

bool use_avx2() {
  static const bool avx2 = cpu_features().avx2;
  return avx2;
}

}  // namespace

void quantize_row_q8(const float* x, size_t n, int8_t* codes, float* d, float* dsum, int32_t* isum) {
  if (use_avx2()) return quantize_row_q8_avx2(x, n, codes, d, dsum, isum);
  quantize_row_q8_scalar(x, n, codes, d, dsum, isum);
}

void quantize_row_q8k(const float* x, size_t n, kquant::BlockQ8K* out) {
  if (use_avx2()) return quantize_row_q8k_avx2(x, n, out);
  quantize_row_q8k_scalar(x, n, out);
}

void pair_interleave_q8(const int8_t* natural, size_t n, int8_t* paired) {
  const size_t nb = n / 32;
  size_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    const int8_t* a = natural + 32 * b;
    int8_t* out = paired + 32 * b;
    std::memcpy(out, a, 16);
    std::memcpy(out + 16, a + 32, 16);
    std::memcpy(out + 32, a + 16, 16);
    std::memcpy(out + 48, a + 48, 16);
  }
  if (b < nb) std::memcpy(paired + 32 * b, natural + 32 * b, 32);
}

}  // namespace infertune
