#include "engine/gpu/device_buffer.h"

#include "kernels/cuda/device_runtime.h"

namespace infertune {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

Status cuda_status(int code, std::string_view what) {
  if (code == 0) return {};
  return fail("{}: CUDA error: {}", what, cuda::error_text(code));
}

DeviceBuffer::~DeviceBuffer() { cuda::device_free(ptr_); }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    cuda::device_free(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, std::string_view what) {
  DeviceBuffer buffer;
  const int code = cuda::device_alloc(&buffer.ptr_, bytes);
  if (code != 0) {
    size_t free_bytes = 0, total_bytes = 0;
    if (cuda::memory_info(&free_bytes, &total_bytes) == 0) {
      return fail("out of GPU memory for {}: it needs {:.1f} MiB, {:.1f} MiB of {:.1f} MiB are free ({})", what,
                  bytes / kMiB, free_bytes / kMiB, total_bytes / kMiB, cuda::error_text(code));
    }
    return fail("cannot allocate {:.1f} MiB of GPU memory for {}: {}", bytes / kMiB, what, cuda::error_text(code));
  }
  buffer.bytes_ = bytes;
  return buffer;
}

}  // namespace infertune
