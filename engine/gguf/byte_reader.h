#pragma once
// A bounds-checked little-endian cursor over a byte span. Every read either succeeds or returns an
// Error naming the field (`what`) and the byte offset where it starts, so parse errors point into the file.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include "kernels/result.h"

namespace infertune {

static_assert(std::endian::native == std::endian::little,
              "GGUF is read by memcpy of little-endian values; a big-endian host would need byte swaps");

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  uint64_t offset() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  uint64_t size() const { return bytes_.size(); }

  template <class T>
  Result<T> read(std::string_view what) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (remaining() < sizeof(T)) return truncated(what, sizeof(T));
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  // `n` raw bytes, viewed in place.
  Result<std::span<const std::byte>> read_bytes(uint64_t n, std::string_view what) {
    if (remaining() < n) return truncated(what, n);
    const auto view = bytes_.subspan(pos_, n);
    pos_ += n;
    return view;
  }

  // A GGUF string: u64 byte length, then the bytes (no terminator, not checked as UTF-8).
  Result<std::string_view> read_string(std::string_view what) {
    const uint64_t start = pos_;
    auto length = read<uint64_t>(what);
    if (!length) return length.error();
    if (*length > remaining()) {
      pos_ = start;
      return fail("{} at offset {}: length {} runs past the end of the file ({} bytes remain)", what, start, *length,
                  remaining());
    }
    const auto* chars = reinterpret_cast<const char*>(bytes_.data() + pos_);
    pos_ += *length;
    return std::string_view(chars, *length);
  }

 private:
  Error truncated(std::string_view what, uint64_t needed) const {
    return fail("truncated file: {} at offset {} needs {} bytes, only {} remain", what, pos_, needed, remaining());
  }

  std::span<const std::byte> bytes_;
  uint64_t pos_ = 0;
};

}  // namespace infertune
