#include "bench/probe/large_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace infertune {

Result<LargeBuffer> LargeBuffer::map(size_t bytes) {
  if (bytes == 0) return fail("cannot map an empty measurement buffer");
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) return fail("cannot map {} bytes for the bandwidth buffer: {}", bytes, std::strerror(errno));
  return LargeBuffer(data, bytes);
}

LargeBuffer::LargeBuffer(LargeBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

LargeBuffer::~LargeBuffer() { release(); }

void LargeBuffer::release() {
  if (data_) munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace infertune
