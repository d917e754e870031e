#pragma once
// Device memory and the skip rule for the CUDA kernel tests: they need a GPU and skip, saying so, without one.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_devices.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune::test {

#define INFERTUNE_SKIP_WITHOUT_GPU()                                  \
  do {                                                                \
    if (const std::string why = no_cuda_gpu_reason(); !why.empty()) { \
      GTEST_SKIP() << why;                                            \
    }                                                                 \
  } while (0)

struct DeviceFree {
  void operator()(void* p) const { cuda::device_free(p); }
};
using DevicePtr = std::unique_ptr<void, DeviceFree>;

inline DevicePtr device_zeros(size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(cuda::device_alloc(&p, bytes), 0);
  std::vector<std::byte> zeros(bytes);
  EXPECT_EQ(cuda::copy_to_device(p, zeros.data(), bytes, nullptr), 0);
  EXPECT_EQ(cuda::stream_synchronize(nullptr), 0);
  return DevicePtr(p);
}

template <class T>
DevicePtr to_device(const std::vector<T>& values) {
  DevicePtr d = device_zeros(values.size() * sizeof(T));
  EXPECT_EQ(cuda::copy_to_device(d.get(), values.data(), values.size() * sizeof(T), nullptr), 0);
  EXPECT_EQ(cuda::stream_synchronize(nullptr), 0);
  return d;
}

template <class T>
std::vector<T> to_host(const DevicePtr& d, size_t n) {
  std::vector<T> out(n);
  EXPECT_EQ(cuda::copy_to_host(out.data(), d.get(), n * sizeof(T), nullptr), 0);
  return out;
}

}  // namespace infertune::test
