#pragma once
// Parses and validates a whole GGUF v2/v3 image into a GgufFile. Validation is strict and cheap: the
// header, every metadata value and every tensor-table entry is checked (see gguf_parser.cpp for the
// list), tensor data is not read. Nothing is allocated beyond what the input's size justifies.
#include <span>

#include "engine/gguf/gguf_file.h"
#include "kernels/result.h"

namespace infertune {

class GgufParser {
 public:
  // Fills `file` from `bytes`, which it keeps viewing. On error `file` is left partly filled and the
  // message names the problem and its byte offset, key or tensor name (without the source name).
  static Status parse(std::span<const std::byte> bytes, GgufFile& file);
};

}  // namespace infertune
