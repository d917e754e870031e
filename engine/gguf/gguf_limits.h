#pragma once
// Limits of what the GGUF reader accepts and the writer produces. They follow ggml where it has one
// and are otherwise chosen to refuse only files that no real model produces.
#include <cstdint>

namespace infertune {

// general.alignment: a power of two, at most 1 MiB. Real files use 32 (the default) up to a few KiB for
// direct I/O; larger values only waste space, and a cap keeps padding arithmetic far from overflow.
inline constexpr uint64_t kGgufMaxAlignment = uint64_t{1} << 20;

// Tensor names: non-empty and at most 63 bytes, as ggml stores names in char[GGML_MAX_NAME = 64]
// including the terminating NUL, and llama.cpp refuses longer ones.
inline constexpr uint64_t kGgufMaxTensorNameBytes = 63;

// Tensors have 1 to GGML_MAX_DIMS = 4 dimensions.
inline constexpr uint32_t kGgufMaxDims = 4;

// Arrays of arrays are allowed for keys without a fixed type; nesting deeper than this is refused,
// so that a hostile file cannot drive the reader's recursion into a stack overflow.
inline constexpr int kGgufMaxArrayNesting = 16;

}  // namespace infertune
