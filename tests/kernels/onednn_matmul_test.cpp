// The oneDNN backend (kernels/onednn/onednn_matmul.h) against the scalar reference kernel, for each float
// type oneDNN supports here, over odd shapes (rows 1/3/17/40, tokens 2/5/33, row lengths that leave vector
// tails), unaligned pointers and split row ranges; and that it starts no threads of its own.
//
// Tolerance: oneDNN sees the same weights and the same paired activations as the reference (bf16-rounded
// for BF16, f16-rounded for F16, and products of those are exact in f32), so only the order and precision
// of the f32 accumulation differ from the reference's double: 1e-5 * sum |w| |x| per output, as for our
// own SIMD kernels (tests/kernels/matmul_simd_accuracy_test.cpp).
#include <gtest/gtest.h>

#include <dirent.h>

#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/half.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/onednn/onednn_matmul.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

MatmulFn scalar_kernel(GgmlType type) {
  auto k = MatmulRegistry(compiled_matmul_variants(), std::string("scalar")).find(type);
  return k ? k->fn : nullptr;
}

float paired(GgmlType type, float x) {
  if (type == GgmlType::F16) return f16_to_f32(f32_to_f16(x));
  if (type == GgmlType::BF16) return bf16_to_f32(f32_to_bf16(x));
  return x;
}

// Threads of this process (entries of /proc/self/task).
size_t process_threads() {
  size_t n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(dir)) n += e->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

// A problem with its storage: weights quantized from normal values (and decoded), activations with a few
// outliers; `misalign` shifts weights by that many bytes and activations/outputs by that many floats.
struct TestProblem {
  std::vector<std::byte> weight_storage;
  std::vector<float> decoded, x_storage, y_storage;
  MatmulProblem problem;

  TestProblem(GgmlType type, size_t n_rows, size_t n_cols, size_t n_tokens, size_t misalign, uint32_t seed) {
    const size_t row_bytes = *ggml_row_bytes(type, n_cols);
    weight_storage.resize(n_rows * row_bytes + misalign);
    const std::span<std::byte> weights(weight_storage.data() + misalign, n_rows * row_bytes);
    decoded.resize(n_rows * n_cols);
    const auto source = random_values(n_rows * n_cols, seed);
    EXPECT_TRUE(quantize_row(type, source, weights).ok());
    EXPECT_TRUE(dequantize_row(type, weights, decoded).ok());
    x_storage.resize(n_tokens * n_cols + misalign);
    float* x = x_storage.data() + misalign;
    const auto xv = random_values(n_tokens * n_cols, seed + 1, 0.5f);
    std::copy(xv.begin(), xv.end(), x);
    for (size_t i = 0; i < n_tokens * n_cols; i += 97) x[i] *= 12.0f;
    y_storage.assign(n_tokens * n_rows + misalign, -999.0f);
    problem = {type, weights, n_rows, n_cols, x, n_tokens, y_storage.data() + misalign};
  }

  double allowed_error(size_t t, size_t r) const {
    double magnitude = 0;
    for (size_t i = 0; i < problem.n_cols; ++i) {
      magnitude += std::fabs(static_cast<double>(decoded[r * problem.n_cols + i]) *
                             paired(problem.type, problem.x[t * problem.n_cols + i]));
    }
    return 1e-5 * magnitude + 1e-30;
  }
};

class OnednnMatmulTest : public ::testing::TestWithParam<GgmlType> {
 protected:
  void SetUp() override {
    if (!onednn_built()) GTEST_SKIP() << "built without oneDNN (onednn: " << onednn_summary() << ")";
    if (!onednn_supports(GetParam())) {
      GTEST_SKIP() << "oneDNN cannot compute " << ggml_type_name(GetParam()) << " here: " << onednn_summary();
    }
  }
};

TEST_P(OnednnMatmulTest, MatchesScalarReferenceOverOddShapes) {
  const GgmlType type = GetParam();
  const MatmulFn reference = scalar_kernel(type);
  ASSERT_NE(reference, nullptr);
  uint32_t seed = 1;
  for (size_t n_cols : {1, 7, 33, 100, 1000, 2048}) {
    for (size_t n_rows : {1, 3, 17, 40}) {
      for (size_t n_tokens : {2, 5, 33}) {
        const size_t misalign = seed % 3;
        TestProblem tp(type, n_rows, n_cols, n_tokens, misalign, seed);
        ++seed;
        const MatmulProblem& p = tp.problem;
        ASSERT_TRUE(check_matmul_problem(p).ok());
        std::vector<float> want(n_tokens * n_rows);
        reference({p.type, p.weights, n_rows, n_cols, p.x, n_tokens, want.data()}, 0, n_rows);
        // Two row ranges, as two threads would split them.
        const size_t split = n_rows / 2;
        onednn_matmul(p, 0, split);
        onednn_matmul(p, split, n_rows);
        ASSERT_FALSE(take_onednn_failure().has_value());
        for (size_t t = 0; t < n_tokens; ++t) {
          for (size_t r = 0; r < n_rows; ++r) {
            ASSERT_NEAR(p.y[t * n_rows + r], want[t * n_rows + r], tp.allowed_error(t, r))
                << ggml_type_name(type) << " rows " << n_rows << " cols " << n_cols << " tokens " << n_tokens << " at t"
                << t << " r" << r;
          }
        }
        for (size_t i = 0; i < misalign; ++i) ASSERT_EQ(tp.y_storage[i], -999.0f) << "wrote before y";
      }
    }
  }
}

TEST_P(OnednnMatmulTest, OnlyWritesItsRowRange) {
  TestProblem tp(GetParam(), 70, 64, 3, 0, 11);
  const MatmulProblem& p = tp.problem;
  onednn_matmul(p, 20, 45);
  for (size_t t = 0; t < p.n_tokens; ++t) {
    for (size_t r = 0; r < p.n_rows; ++r) {
      const bool inside = r >= 20 && r < 45;
      EXPECT_EQ(p.y[t * p.n_rows + r] != -999.0f, inside) << "t" << t << " r" << r;
    }
  }
}

// oneDNN is limited to the calling thread: running it (here, and on two threads at once on disjoint rows,
// as the pool does) leaves no extra threads behind (an OpenMP team would stay alive), and the concurrent
// results agree with the single-threaded ones (the row split may change oneDNN's blocking, not more).
TEST_P(OnednnMatmulTest, RunsOnTheCallingThreadsOnly) {
  TestProblem tp(GetParam(), 256, 512, 64, 0, 21);
  const MatmulProblem& p = tp.problem;
  const size_t before = process_threads();
  onednn_matmul(p, 0, p.n_rows);
  EXPECT_EQ(process_threads(), before);
  const std::vector<float> single(p.y, p.y + p.n_tokens * p.n_rows);
  std::fill(p.y, p.y + p.n_tokens * p.n_rows, -999.0f);
  size_t during = 0;
  std::thread other([&] { onednn_matmul(p, 128, 256); });
  onednn_matmul(p, 0, 128);
  during = process_threads();
  other.join();
  EXPECT_LE(during, before + 1);
  EXPECT_EQ(process_threads(), before);
  for (size_t t = 0; t < p.n_tokens; ++t) {
    for (size_t r = 0; r < p.n_rows; ++r) {
      ASSERT_NEAR(p.y[t * p.n_rows + r], single[t * p.n_rows + r], tp.allowed_error(t, r)) << "t" << t << " r" << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, OnednnMatmulTest, ::testing::Values(GgmlType::F32, GgmlType::F16, GgmlType::BF16),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(OnednnSummaryTest, SaysWhatWasBuilt) {
  const std::string summary = onednn_summary();
  if (!onednn_built()) {
    EXPECT_EQ(summary, "not built");
    EXPECT_FALSE(onednn_supports(GgmlType::F32));
    return;
  }
  EXPECT_NE(summary.find("cpu runtime"), std::string::npos) << summary;
  EXPECT_FALSE(onednn_supports(GgmlType::Q8_0));
}

}  // namespace
}  // namespace infertune
