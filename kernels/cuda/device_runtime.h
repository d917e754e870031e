#pragma once
// The CUDA runtime as the engine uses it: devices, memory, copies, streams and cuBLAS, behind plain C++
// (no CUDA headers), so that engine code compiles without the toolkit. Every call returns a CUDA error
// code (0: success); error_text() turns one into words. Without the backend compiled in, every call
// fails with kNotCompiled.
#include <cstddef>
#include <string>

namespace infertune::cuda {

inline constexpr int kNotCompiled = -1;
// cuBLAS statuses travel in the same int as CUDA's errors: kBlasErrorBase - status (error_text decodes it).
inline constexpr int kBlasErrorBase = -1000;
inline int blas_status_code(int status) { return status == 0 ? 0 : kBlasErrorBase - status; }

std::string error_text(int code);

int device_count(int* count);
int set_device(int device);
// Free and total memory of the current device.
int memory_info(size_t* free_bytes, size_t* total_bytes);

int device_alloc(void** ptr, size_t bytes);
void device_free(void* ptr);
// Page-locked host memory: copies from it run at the bus's speed and may be asynchronous.
int host_alloc_pinned(void** ptr, size_t bytes);
void host_free_pinned(void* ptr);

// A stream of work on the current device; null is the default stream.
int stream_create(void** stream);
void stream_destroy(void* stream);
int stream_synchronize(void* stream);

// Copies on `stream`; with pageable host memory they return once the source may be reused.
int copy_to_device(void* dst, const void* src, size_t bytes, void* stream);
int copy_to_host(void* dst, const void* src, size_t bytes, void* stream);
int copy_on_device(void* dst, const void* src, size_t bytes, void* stream);

// A cuBLAS handle bound to `stream`.
int blas_create(void** handle, void* stream);
void blas_destroy(void* handle);

}  // namespace infertune::cuda
