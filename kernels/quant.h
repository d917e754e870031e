#pragma once
// Scalar reference encode/decode of rows of every block format infertune reads and writes. Byte-compatible
// with GGUF files from llama.cpp: decoding reproduces ggml's dequantization bit for bit, and encoding
// follows ggml's reference quantizers (no importance matrix). These are the references that SIMD and
// CUDA kernels are tested against; they favour clarity over speed.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

// True when quantize_row / dequantize_row support the type.
bool has_reference_codec(GgmlType type);

// Decodes src (whole blocks, laid out as in a GGUF tensor) into dst.size() floats. Errors when the type
// has no codec, dst.size() is not a multiple of the block size, or src is not exactly the row's bytes.
Status dequantize_row(GgmlType type, std::span<const std::byte> src, std::span<float> dst);

// Encodes src.size() floats into dst, which must hold exactly the row's bytes. Same errors as above.
Status quantize_row(GgmlType type, std::span<const float> src, std::span<std::byte> dst);

// True when ggml's quantizer for the type reads an importance matrix: Q4_0, Q4_1, Q5_0, Q5_1, Q2_K ... Q6_K,
// IQ4_NL and IQ4_XS. The others here (F32, F16, BF16, Q8_0, Q8_1, Q8_K, MXFP4) encode the same with or without
// one.
bool uses_importance(GgmlType type);

// quantize_row with an importance matrix, as ggml's quantize_TYPE with non-null quant_weights (byte for byte):
// importance holds one weight per value of the row, the tensor's per-column weights, which steer the scale
// fits towards the columns that matter. src must be a whole tensor row (some types weight values by the
// row's mean square). Types that do not use a matrix encode exactly as quantize_row. Same errors as
// quantize_row, and when importance.size() != src.size().
Status quantize_row_weighted(GgmlType type, std::span<const float> src, std::span<const float> importance,
                             std::span<std::byte> dst);

}  // namespace infertune
