// Built when the CUDA backend is not: every GPU call reports kNotCompiled, so the engine's GPU code links
// and says "this build has no CUDA backend" instead of running.
#include "kernels/cuda/block_decode_kernel.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune::cuda {

std::string error_text(int code) { return code == 0 ? "success" : "this build has no CUDA backend"; }
int device_count(int* count) {
  *count = 0;
  return kNotCompiled;
}
int set_device(int) { return kNotCompiled; }
int memory_info(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = *total_bytes = 0;
  return kNotCompiled;
}
int device_alloc(void** ptr, size_t) {
  *ptr = nullptr;
  return kNotCompiled;
}
void device_free(void*) {}
int host_alloc_pinned(void** ptr, size_t) {
  *ptr = nullptr;
  return kNotCompiled;
}
void host_free_pinned(void*) {}
int stream_create(void** stream) {
  *stream = nullptr;
  return kNotCompiled;
}
void stream_destroy(void*) {}
int stream_synchronize(void*) { return kNotCompiled; }
int copy_to_device(void*, const void*, size_t, void*) { return kNotCompiled; }
int copy_to_host(void*, const void*, size_t, void*) { return kNotCompiled; }
int copy_on_device(void*, const void*, size_t, void*) { return kNotCompiled; }
int blas_create(void** handle, void*) {
  *handle = nullptr;
  return kNotCompiled;
}
void blas_destroy(void*) {}

bool weight_type_supported(uint32_t) { return false; }
bool kv_type_supported(uint32_t) { return false; }
int matvec(uint32_t, const void*, int64_t, int64_t, const float*, int64_t, float*, void*) { return kNotCompiled; }
int dequantize_to_f16(uint32_t, const void*, int64_t, int64_t, void*, void*) { return kNotCompiled; }
int convert_to_f16(const float*, int64_t, void*, void*) { return kNotCompiled; }
bool int8_form_supported(uint32_t) { return false; }
int quantize_activations_q8(const float*, int64_t, int64_t, int8_t*, float*, void*) { return kNotCompiled; }
int gemm_int8(uint32_t, const void*, int64_t, int64_t, const int8_t*, const float*, int64_t, float*, int64_t, void*) {
  return kNotCompiled;
}
int gemm_f16(void*, const void*, int64_t, int64_t, const void*, int64_t, float*, int64_t) { return kNotCompiled; }
int gemm_f32(void*, const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t) { return kNotCompiled; }
int rms_norm(const float*, const float*, float, int64_t, int64_t, float*, void*) { return kNotCompiled; }
int add(float*, const float*, int64_t, void*) { return kNotCompiled; }
int add_bias(float*, const float*, int64_t, int64_t, void*) { return kNotCompiled; }
int silu_mul(const float*, const float*, int64_t, float*, void*) { return kNotCompiled; }
int gelu_mul(const float*, const float*, int64_t, float*, void*) { return kNotCompiled; }
int soft_cap(float*, int64_t, float, void*) { return kNotCompiled; }
int rope(float*, int64_t, int, int, int, bool, const float*, const float*, void*) { return kNotCompiled; }
int gather_rows(const float*, const uint32_t*, int64_t, int64_t, float*, void*) { return kNotCompiled; }
int store_kv(const float*, int64_t, const uint32_t*, const KvLayerView&, void*) { return kNotCompiled; }
int attention(const float*, int64_t, int, const KvLayerView&, const KvLayerView&, const AttentionKeys&, float, float,
              float*, void*) {
  return kNotCompiled;
}
int launch_decode_pieces(uint32_t, const void*, int64_t, float*, void*) { return kNotCompiled; }
int measure_copy_bandwidth(size_t, int, double* gbps) {
  *gbps = 0.0;
  return kNotCompiled;
}
int time_batched(uint32_t, int64_t, int64_t, int, int, bool, double* tflops) {
  *tflops = 0.0;
  return kNotCompiled;
}
int time_matvec(uint32_t, int64_t, int64_t, int, int, double* gbps, bool) {
  *gbps = 0.0;
  return kNotCompiled;
}
int measure_gemm_tflops(int, int, double* tflops) {
  *tflops = 0.0;
  return kNotCompiled;
}

}  // namespace infertune::cuda
