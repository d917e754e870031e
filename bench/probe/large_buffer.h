#pragma once
// Anonymous memory for bandwidth measurement: mapped but not touched, so the threads that will read it
// place its pages (Linux first-touch NUMA policy). It is not advised for transparent huge pages: with
// THP defrag set to "madvise" (a common default) each fault may compact memory, which made touching
// 1 GiB take seconds on a fragmented host, while streaming reads lose little to 4 KiB pages.
#include <cstddef>
#include <cstdint>

#include "kernels/result.h"

namespace infertune {

class LargeBuffer {
 public:
  static Result<LargeBuffer> map(size_t bytes);

  LargeBuffer(LargeBuffer&& other) noexcept;
  LargeBuffer& operator=(LargeBuffer&& other) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  ~LargeBuffer();

  uint64_t* words() const { return static_cast<uint64_t*>(data_); }  // [bytes() / 8]
  size_t bytes() const { return bytes_; }

 private:
  LargeBuffer(void* data, size_t bytes) : data_(data), bytes_(bytes) {}
  void release();

  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace infertune
