// The GPU's weight products against the reference decoder: for every weight type, the matrix-vector kernel
// (1, 3 and 8 tokens) and the batched path (f16 decode + cuBLAS, or f32 cuBLAS) give W x as computed in
// double from dequantize_row's values, within a written tolerance relative to sum |w| |x| of each output:
//   matrix-vector: 1e-5 (f32 accumulation of exactly decoded weights, only the order of the sum differs)
//   batched f16:   2e-3 (weights and activations rounded to f16: 2^-11 each, f32 accumulation)
//   batched f32:   1e-5
//   batched int8:  1e-2 (each activation rounded to 1/254 of its 32-value piece's largest magnitude: for
//                  these uniform activations at most 2/254 of their mean magnitude; the integer dots exact)
// Skips without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cuda_test_support.h"
#include "kernels/cuda/block_decode_kernel.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/ggml_type.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr int64_t kRows = 37;  // not a multiple of the kernels' rows per block
constexpr int64_t kCols = 512;

struct Weights {
  std::vector<std::byte> bytes;  // [kRows] rows in the type's blocks
  std::vector<float> values;     // [kRows][kCols] as the reference decodes them
};

Weights make_weights(GgmlType type, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const GgmlTypeTraits& t = ggml_type_traits(type);
  const size_t row_bytes = kCols / t.block_elements * t.block_bytes;
  Weights w;
  w.bytes.resize(kRows * row_bytes);
  w.values.resize(kRows * kCols);
  std::vector<float> row(kCols);
  for (int64_t r = 0; r < kRows; ++r) {
    for (float& v : row) v = normal(rng) * (0.5f + static_cast<float>(r % 5));
    const std::span<std::byte> dst(w.bytes.data() + r * row_bytes, row_bytes);
    EXPECT_TRUE(quantize_row(type, row, dst).ok());
    EXPECT_TRUE(dequantize_row(type, dst, std::span(w.values).subspan(r * kCols, kCols)).ok());
  }
  return w;
}

std::vector<float> random_activations(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> x(n * kCols);
  for (float& v : x) v = u(rng);
  return x;
}

// Every y[t][r] of a rows x cols product against the double-precision one, within tol * sum |w||x|.
void expect_products(const Weights& w, int64_t rows, int64_t cols, const std::vector<float>& x, int64_t n,
                     const std::vector<float>& y, double tol, const std::string& what) {
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double exact = 0.0, magnitude = 0.0;
      for (int64_t c = 0; c < cols; ++c) {
        const double p = static_cast<double>(w.values[r * cols + c]) * x[t * cols + c];
        exact += p;
        magnitude += std::fabs(p);
      }
      ASSERT_NEAR(y[t * rows + r], exact, tol * magnitude + 1e-6) << what << " token " << t << " row " << r;
    }
  }
}

void expect_products(const Weights& w, const std::vector<float>& x, int64_t n, const std::vector<float>& y, double tol,
                     const char* path) {
  expect_products(w, kRows, kCols, x, n, y, tol, path);
}

class CudaLinear : public ::testing::TestWithParam<GgmlType> {};

TEST_P(CudaLinear, MatrixVectorMatchesTheReferenceDecode) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const GgmlType type = GetParam();
  ASSERT_TRUE(cuda::weight_type_supported(static_cast<uint32_t>(type)));
  const Weights w = make_weights(type, 11);
  const auto dw = test::to_device(w.bytes);
  for (int64_t n : {1, 3, 8}) {
    const std::vector<float> x = random_activations(n, 5 + static_cast<uint32_t>(n));
    const auto dx = test::to_device(x);
    const auto dy = test::device_zeros(n * kRows * sizeof(float));
    ASSERT_EQ(cuda::matvec(static_cast<uint32_t>(type), dw.get(), kRows, kCols, static_cast<const float*>(dx.get()), n,
                           static_cast<float*>(dy.get()), nullptr),
              0);
    expect_products(w, x, n, test::to_host<float>(dy, n * kRows), 1e-5, "matvec");
  }
}

// The decoders every kernel builds on, in device code: the reference's values bit for bit.
TEST_P(CudaLinear, DeviceDecodesTheReferenceBits) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const GgmlType type = GetParam();
  const Weights w = make_weights(type, 13);
  const auto dw = test::to_device(w.bytes);
  const int64_t n_pieces = kRows * kCols / 32;  // the matrix's rows are one run of whole blocks
  const auto dout = test::device_zeros(n_pieces * 32 * sizeof(float));
  ASSERT_EQ(cuda::launch_decode_pieces(static_cast<uint32_t>(type), dw.get(), n_pieces, static_cast<float*>(dout.get()),
                                       nullptr),
            0);
  const std::vector<float> got = test::to_host<float>(dout, n_pieces * 32);
  ASSERT_EQ(std::memcmp(got.data(), w.values.data(), got.size() * sizeof(float)), 0) << ggml_type_name(type);
}

TEST_P(CudaLinear, BatchedProductMatchesTheReferenceDecode) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const GgmlType type = GetParam();
  const Weights w = make_weights(type, 12);
  const int64_t n = 21;
  const std::vector<float> x = random_activations(n, 9);
  const auto dw = test::to_device(w.bytes);
  const auto dx = test::to_device(x);
  const auto dy = test::device_zeros(n * kRows * sizeof(float));
  void* blas = nullptr;
  ASSERT_EQ(cuda::blas_create(&blas, nullptr), 0);
  if (type == GgmlType::F32) {
    ASSERT_EQ(cuda::gemm_f32(blas, static_cast<const float*>(dw.get()), kRows, kCols,
                             static_cast<const float*>(dx.get()), n, static_cast<float*>(dy.get()), kRows),
              0);
    expect_products(w, x, n, test::to_host<float>(dy, n * kRows), 1e-5, "gemm_f32");
  } else {
    const auto w16 = test::device_zeros(kRows * kCols * 2);
    const auto x16 = test::device_zeros(n * kCols * 2);
    ASSERT_EQ(cuda::dequantize_to_f16(static_cast<uint32_t>(type), dw.get(), kRows, kCols, w16.get(), nullptr), 0);
    ASSERT_EQ(cuda::convert_to_f16(static_cast<const float*>(dx.get()), n * kCols, x16.get(), nullptr), 0);
    ASSERT_EQ(cuda::gemm_f16(blas, w16.get(), kRows, kCols, x16.get(), n, static_cast<float*>(dy.get()), kRows), 0);
    expect_products(w, x, n, test::to_host<float>(dy, n * kRows), 2e-3, "gemm_f16");
  }
  cuda::blas_destroy(blas);
}

Weights make_weights_shaped(GgmlType type, int64_t rows, int64_t cols, uint32_t seed);  // below

// The int8 path (linear_int8.cu) on a shape inside one tile and on one of several tiles each way, with a
// partial last tile of rows, tokens and pieces.
TEST_P(CudaLinear, Int8ProductMatchesTheReferenceDecode) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const GgmlType type = GetParam();
  const auto id = static_cast<uint32_t>(type);
  if (type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16) {
    EXPECT_FALSE(cuda::int8_form_supported(id));
    GTEST_SKIP() << ggml_type_name(type) << " has no integer form: its batches go through cuBLAS";
  }
  ASSERT_TRUE(cuda::int8_form_supported(id));
  struct Shape {
    int64_t rows, cols, tokens;
  };
  for (const Shape shape : {Shape{kRows, kCols, 21}, Shape{130, 1280, 70}}) {
    const Weights w = make_weights_shaped(type, shape.rows, shape.cols, 23 + static_cast<uint32_t>(shape.rows));
    std::mt19937 rng(29);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<float> x(shape.tokens * shape.cols);
    for (float& v : x) v = u(rng);
    const auto dw = test::to_device(w.bytes);
    const auto dx = test::to_device(x);
    const auto xq = test::device_zeros(shape.tokens * shape.cols);
    const auto xd = test::device_zeros(shape.tokens * shape.cols / 32 * sizeof(float));
    const auto dy = test::device_zeros(shape.tokens * shape.rows * sizeof(float));
    ASSERT_EQ(cuda::quantize_activations_q8(static_cast<const float*>(dx.get()), shape.tokens, shape.cols,
                                            static_cast<int8_t*>(xq.get()), static_cast<float*>(xd.get()), nullptr),
              0);
    ASSERT_EQ(cuda::gemm_int8(id, dw.get(), shape.rows, shape.cols, static_cast<const int8_t*>(xq.get()),
                              static_cast<const float*>(xd.get()), shape.tokens, static_cast<float*>(dy.get()),
                              shape.rows, nullptr),
              0);
    expect_products(w, shape.rows, shape.cols, x, shape.tokens, test::to_host<float>(dy, shape.tokens * shape.rows),
                    1e-2, fmt::format("int8, {}x{},", shape.rows, shape.cols));
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryWeightType, CudaLinear,
                         ::testing::Values(GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0,
                                           GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL,
                                           GgmlType::IQ4_XS, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                                           GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::MXFP4),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

// The fast kernels of the common types (kernels/cuda/matvec_fast.cu) on shapes that reach every path: one
// block per row (256 columns), a row that does not fill the warp's last pass (4096 + 256), a long row
// (14336, ffn_down's), row counts that leave the last warp's second row empty, each token count's
// instantiation, and weights shifted by 2 bytes (the 2-byte-aligned types then start their blocks in the
// other half word; the 16-byte-aligned types fall back to the generic kernel). Same tolerance as above.
struct FastShape {
  int64_t rows, cols;
};

Weights make_weights_shaped(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t row_bytes = *ggml_row_bytes(type, cols);
  Weights w;
  w.bytes.resize(rows * row_bytes);
  w.values.resize(rows * cols);
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = normal(rng) * (0.5f + static_cast<float>(r % 5));
    const std::span<std::byte> dst(w.bytes.data() + r * row_bytes, row_bytes);
    EXPECT_TRUE(quantize_row(type, row, dst).ok());
    EXPECT_TRUE(dequantize_row(type, dst, std::span(w.values).subspan(r * cols, cols)).ok());
  }
  return w;
}

class CudaMatvecFast : public ::testing::TestWithParam<GgmlType> {};

TEST_P(CudaMatvecFast, EveryShapeAndTokenCountMatchesTheReferenceDecode) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const GgmlType type = GetParam();
  for (const FastShape shape :
       {FastShape{37, 256}, FastShape{9, 4096 + 256}, FastShape{1, 14336}, FastShape{6, 14336}}) {
    const Weights w = make_weights_shaped(type, shape.rows, shape.cols, 17 + static_cast<uint32_t>(shape.cols));
    for (size_t shift : {size_t{0}, size_t{2}}) {
      std::vector<std::byte> shifted(shift + w.bytes.size());
      std::memcpy(shifted.data() + shift, w.bytes.data(), w.bytes.size());
      const auto dw = test::to_device(shifted);
      const void* weights = static_cast<const std::byte*>(dw.get()) + shift;
      for (int64_t n : {1, 2, 5, 8}) {
        std::mt19937 rng(3 + static_cast<uint32_t>(n));
        std::uniform_real_distribution<float> u(-2.0f, 2.0f);
        std::vector<float> x(n * shape.cols);
        for (float& v : x) v = u(rng);
        const auto dx = test::to_device(x);
        const auto dy = test::device_zeros(n * shape.rows * sizeof(float));
        ASSERT_EQ(cuda::matvec(static_cast<uint32_t>(type), weights, shape.rows, shape.cols,
                               static_cast<const float*>(dx.get()), n, static_cast<float*>(dy.get()), nullptr),
                  0);
        expect_products(w, shape.rows, shape.cols, x, n, test::to_host<float>(dy, n * shape.rows), 1e-5,
                        fmt::format("{}x{} shift {} tokens {}", shape.rows, shape.cols, shift, n));
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CommonWeightTypes, CudaMatvecFast,
                         ::testing::Values(GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_0,
                                           GgmlType::Q4_0, GgmlType::F16),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

// Prints the streaming rate of the fast kernel and of the generic one (never asserts speed).
TEST(CudaMatvecSpeed, ReportsBandwidth) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  for (GgmlType type :
       {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_K, GgmlType::F16}) {
    for (const FastShape shape : {FastShape{4096, 4096}, FastShape{14336, 4096}, FastShape{4096, 14336}}) {
      for (int n : {1, 8}) {
        double fast = 0.0, generic = 0.0;
        ASSERT_EQ(cuda::time_matvec(static_cast<uint32_t>(type), shape.rows, shape.cols, n, 200, &fast), 0);
        ASSERT_EQ(cuda::time_matvec(static_cast<uint32_t>(type), shape.rows, shape.cols, n, 50, &generic, true), 0);
        std::printf("matvec %-5s %6lldx%-6lld tokens %d: fast %7.1f GB/s  generic %7.1f GB/s\n",
                    std::string(ggml_type_name(type)).c_str(), static_cast<long long>(shape.rows),
                    static_cast<long long>(shape.cols), n, fast, generic);
      }
    }
  }
}

// Prints the prompt-batch rates of the f16 path and the int8 path (never asserts speed): what decides which
// one the engine defaults to (INFERTUNE_CUDA_BATCH).
TEST(CudaBatchedSpeed, ReportsF16AgainstInt8) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_K}) {
    for (const FastShape shape : {FastShape{4096, 4096}, FastShape{14336, 4096}, FastShape{4096, 14336}}) {
      for (int n : {64, 512}) {
        double f16 = 0.0, int8 = 0.0;
        const auto id = static_cast<uint32_t>(type);
        ASSERT_EQ(cuda::time_batched(id, shape.rows, shape.cols, n, 20, false, &f16), 0);
        ASSERT_EQ(cuda::time_batched(id, shape.rows, shape.cols, n, 20, true, &int8), 0);
        std::printf("batched %-5s %6lldx%-6lld tokens %3d: f16 %6.1f TFLOP/s  int8 %6.1f TFLOP/s\n",
                    std::string(ggml_type_name(type)).c_str(), static_cast<long long>(shape.rows),
                    static_cast<long long>(shape.cols), n, f16, int8);
      }
    }
  }
}

TEST(CudaLinearTypes, EveryTypeTheCpuRunsHasAGpuKernel) {
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1,
                     GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q2_K, GgmlType::Q3_K,
                     GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::MXFP4}) {
    EXPECT_EQ(cuda::weight_type_supported(static_cast<uint32_t>(t)), cuda_compiled()) << ggml_type_name(t);
  }
  EXPECT_FALSE(cuda::weight_type_supported(static_cast<uint32_t>(GgmlType::Q8_K)));
}

}  // namespace
}  // namespace infertune
