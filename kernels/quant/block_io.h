#pragma once
// Copying one block in or out of a row of GGUF tensor data. Rows in a file need not be aligned for the
// block struct, so blocks are copied rather than dereferenced in place.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace infertune {

template <class Block>
Block load_block(const void* row, int64_t index) {
  Block block;
  std::memcpy(&block, static_cast<const std::byte*>(row) + index * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
  return block;
}

template <class Block>
void store_block(void* row, int64_t index, const Block& block) {
  std::memcpy(static_cast<std::byte*>(row) + index * static_cast<int64_t>(sizeof(Block)), &block, sizeof(Block));
}

}  // namespace infertune
