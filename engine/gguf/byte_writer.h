#pragma once
// Appends little-endian values to a byte vector: the counterpart of ByteReader for the GGUF writer.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

namespace infertune {

static_assert(std::endian::native == std::endian::little,
              "GGUF is written by memcpy of little-endian values; a big-endian host would need byte swaps");

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>& out) : out_(out) {}

  template <class T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    put_bytes(&value, sizeof(T));
  }
  void put_bytes(const void* data, size_t n) {
    const size_t at = out_.size();
    out_.resize(at + n);
    if (n > 0) std::memcpy(out_.data() + at, data, n);
  }
  // A GGUF string: u64 byte length, then the bytes.
  void put_string(std::string_view text) {
    put<uint64_t>(text.size());
    put_bytes(text.data(), text.size());
  }

 private:
  std::vector<std::byte>& out_;
};

}  // namespace infertune
