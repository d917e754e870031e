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

}  // namespace infertune
