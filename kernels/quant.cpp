#include "kernels/quant.h"

#include "kernels/quant/codecs.h"

namespace infertune {
namespace {

struct CodecEntry {
  GgmlType type;
  codecs::QuantizeFn quantize;
  codecs::DequantizeFn dequantize;
};

constexpr CodecEntry kCodecs[] = {
    {GgmlType::F32, codecs::quantize_f32, codecs::dequantize_f32},
    {GgmlType::F16, codecs::quantize_f16, codecs::dequantize_f16},
    {GgmlType::BF16, codecs::quantize_bf16, codecs::dequantize_bf16},
    {GgmlType::Q4_0, codecs::quantize_q4_0, codecs::dequantize_q4_0},
    {GgmlType::Q4_1, codecs::quantize_q4_1, codecs::dequantize_q4_1},
    {GgmlType::Q5_0, codecs::quantize_q5_0, codecs::dequantize_q5_0},
    {GgmlType::Q5_1, codecs::quantize_q5_1, codecs::dequantize_q5_1},
    {GgmlType::Q8_0, codecs::quantize_q8_0, codecs::dequantize_q8_0},
    {GgmlType::Q8_1, codecs::quantize_q8_1, codecs::dequantize_q8_1},
    {GgmlType::Q2_K, codecs::quantize_q2_K, codecs::dequantize_q2_K},
    {GgmlType::Q3_K, codecs::quantize_q3_K, codecs::dequantize_q3_K},
    {GgmlType::Q4_K, codecs::quantize_q4_K, codecs::dequantize_q4_K},
    {GgmlType::Q5_K, codecs::quantize_q5_K, codecs::dequantize_q5_K},
    {GgmlType::Q6_K, codecs::quantize_q6_K, codecs::dequantize_q6_K},
    {GgmlType::Q8_K, codecs::quantize_q8_K, codecs::dequantize_q8_K},
    {GgmlType::IQ4_NL, codecs::quantize_iq4_nl, codecs::dequantize_iq4_nl},
    {GgmlType::MXFP4, codecs::quantize_mxfp4, codecs::dequantize_mxfp4},
    {GgmlType::IQ4_XS, codecs::quantize_iq4_xs, codecs::dequantize_iq4_xs},
};

struct WeightedCodecEntry {
  GgmlType type;
  codecs::WeightedQuantizeFn quantize;
};

// The types whose ggml quantizer reads an importance matrix (Q8_0's and MXFP4's ignore it).
constexpr WeightedCodecEntry kWeightedCodecs[] = {
    {GgmlType::Q4_0, codecs::quantize_q4_0_weighted},     {GgmlType::Q4_1, codecs::quantize_q4_1_weighted},
    {GgmlType::Q5_0, codecs::quantize_q5_0_weighted},     {GgmlType::Q5_1, codecs::quantize_q5_1_weighted},
    {GgmlType::Q2_K, codecs::quantize_q2_K_weighted},     {GgmlType::Q3_K, codecs::quantize_q3_K_weighted},
    {GgmlType::Q4_K, codecs::quantize_q4_K_weighted},     {GgmlType::Q5_K, codecs::quantize_q5_K_weighted},
    {GgmlType::Q6_K, codecs::quantize_q6_K_weighted},     {GgmlType::IQ4_NL, codecs::quantize_iq4_nl_weighted},
    {GgmlType::IQ4_XS, codecs::quantize_iq4_xs_weighted},
};

const WeightedCodecEntry* find_weighted_codec(GgmlType type) {
  for (const auto& c : kWeightedCodecs) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

const CodecEntry* find_codec(GgmlType type) {
  for (const auto& c : kCodecs) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

// Checks that a row of n values in `type` is representable and occupies exactly `bytes`.
Status check_row(GgmlType type, size_t n, size_t bytes) {
  const auto row_bytes = ggml_row_bytes(type, n);
  if (!row_bytes) {
    return fail("{} row of {} values: length is not a multiple of the block size {}", ggml_type_name(type), n,
                ggml_type_traits(type).block_elements);
  }
  if (*row_bytes != bytes) {
    return fail("{} row of {} values needs {} bytes, buffer has {}", ggml_type_name(type), n, *row_bytes, bytes);
  }
  return Status::success();
}

}  // namespace

bool has_reference_codec(GgmlType type) { return find_codec(type) != nullptr; }

Status dequantize_row(GgmlType type, std::span<const std::byte> src, std::span<float> dst) {
  const CodecEntry* codec = find_codec(type);
  if (!codec) return fail("no codec for type {}", ggml_type_name(type));
  if (Status s = check_row(type, dst.size(), src.size()); !s) return s;
  codec->dequantize(src.data(), dst.data(), static_cast<int64_t>(dst.size()));
  return Status::success();
}

Status quantize_row(GgmlType type, std::span<const float> src, std::span<std::byte> dst) {
  const CodecEntry* codec = find_codec(type);
  if (!codec) return fail("no codec for type {}", ggml_type_name(type));
  if (Status s = check_row(type, src.size(), dst.size()); !s) return s;
  codec->quantize(src.data(), dst.data(), static_cast<int64_t>(src.size()));
  return Status::success();
}

bool uses_importance(GgmlType type) { return find_weighted_codec(type) != nullptr; }

Status quantize_row_weighted(GgmlType type, std::span<const float> src, std::span<const float> importance,
                             std::span<std::byte> dst) {
  const WeightedCodecEntry* weighted = find_weighted_codec(type);
  if (!weighted) return quantize_row(type, src, dst);
  if (importance.size() != src.size()) {
    return fail("importance matrix of {} values for a row of {}", importance.size(), src.size());
  }
  if (Status s = check_row(type, src.size(), dst.size()); !s) return s;
  weighted->quantize(src.data(), dst.data(), static_cast<int64_t>(src.size()), importance.data());
  return Status::success();
}

}  // namespace infertune
