// The plain float element types: F32 (a copy), F16 and BF16 (one 2-byte value each, converted with
// kernels/half.h: round to nearest even, as ggml's reference row conversions do).
#include <cstring>

#include "kernels/half.h"
#include "kernels/quant/codecs.h"

namespace infertune::codecs {
namespace {

// Rows are byte buffers with no alignment promise, hence the memcpy of each 2-byte value.
template <class Half, Half (*kEncode)(float)>
void encode_halves(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<std::byte*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    const Half h = kEncode(src[i]);
    std::memcpy(out + 2 * i, &h.bits, 2);
  }
}

template <class Half, float (*kDecode)(Half)>
void decode_halves(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const std::byte*>(src);
  for (int64_t i = 0; i < n; ++i) {
    Half h;
    std::memcpy(&h.bits, in + 2 * i, 2);
    dst[i] = kDecode(h);
  }
}

}  // namespace

void quantize_f32(const float* src, void* dst, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));  // empty rows may be null
}

void dequantize_f32(const void* src, float* dst, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_f16(const float* src, void* dst, int64_t n) { encode_halves<f16_t, f32_to_f16>(src, dst, n); }
void dequantize_f16(const void* src, float* dst, int64_t n) { decode_halves<f16_t, f16_to_f32>(src, dst, n); }
void quantize_bf16(const float* src, void* dst, int64_t n) { encode_halves<bf16_t, f32_to_bf16>(src, dst, n); }
void dequantize_bf16(const void* src, float* dst, int64_t n) { decode_halves<bf16_t, bf16_to_f32>(src, dst, n); }

}  // namespace infertune::codecs
