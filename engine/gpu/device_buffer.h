#pragma once
// Memory on the current CUDA device, freed when the owner goes. An allocation that does not fit is an
// error naming what it was for, how much it needed and how much the device had free.
#include <cstddef>
#include <string_view>
#include <utility>

#include "kernels/result.h"

namespace infertune {

// Wraps a CUDA error code (kernels/cuda/device_runtime.h) with what was being done; success is ok.
Status cuda_status(int code, std::string_view what);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(other.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  static Result<DeviceBuffer> allocate(size_t bytes, std::string_view what);

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace infertune
