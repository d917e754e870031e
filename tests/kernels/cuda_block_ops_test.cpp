// The GPU's per-token kernels and its KV cache against the CPU: RMSNorm, SwiGLU and rope against the CPU ops
// (relative 1e-5: the same formulas, float rounding differs); the cache encoders give the reference
// quantize_row's bytes; attention over a shuffled, partly filled cache matches softmax(q k / sqrt(d)) v
// computed in double from the decoded cache (1e-4 of the largest |v|). Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "cuda_test_support.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/ggml_type.h"
#include "kernels/ops/elementwise.h"
#include "kernels/ops/gelu.h"
#include "kernels/ops/rms_norm.h"
#include "kernels/ops/rope.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * std::max(1.0, std::fabs(static_cast<double>(want[i]))))
        << what << " [" << i << "]";
  }
}

TEST(CudaBlockOps, RmsNormMatchesTheCpu) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const int64_t rows = 5, width = 4096;
  const auto x = random_values(rows * width, 1, 3.0f);
  const auto gain = random_values(width, 2);
  std::vector<float> want(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    rms_norm(std::span(x).subspan(r * width, width), gain, 1e-5f, std::span(want).subspan(r * width, width));
  }
  const auto dx = test::to_device(x);
  const auto dg = test::to_device(gain);
  const auto dy = test::device_zeros(x.size() * 4);
  ASSERT_EQ(cuda::rms_norm(static_cast<float*>(dx.get()), static_cast<float*>(dg.get()), 1e-5f, rows, width,
                           static_cast<float*>(dy.get()), nullptr),
            0);
  expect_close(test::to_host<float>(dy, x.size()), want, 1e-5, "rms_norm");
}

TEST(CudaBlockOps, SiluMulAndAddMatchTheCpu) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const size_t n = 10000;
  const auto gate = random_values(n, 3, 4.0f);
  const auto up = random_values(n, 4);
  std::vector<float> want(n);
  silu_mul(gate, up, want);
  const auto dg = test::to_device(gate);
  const auto du = test::to_device(up);
  ASSERT_EQ(cuda::silu_mul(static_cast<float*>(dg.get()), static_cast<float*>(du.get()), n,
                           static_cast<float*>(dg.get()), nullptr),
            0);
  expect_close(test::to_host<float>(dg, n), want, 1e-5, "silu_mul");
  ASSERT_EQ(cuda::add(static_cast<float*>(dg.get()), static_cast<float*>(du.get()), n, nullptr), 0);
  for (size_t i = 0; i < n; ++i) want[i] += up[i];
  expect_close(test::to_host<float>(dg, n), want, 1e-5, "add");
}

// The GPU's GELU goes through half precision as the CPU's table does, so the two agree to float rounding of the
// product, across the table's range and past both of its ends (|x| >= 10).
TEST(CudaBlockOps, GeluMulMatchesTheCpusTable) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const size_t n = 20000;
  auto gate = random_values(n, 5, 6.0f);
  gate[0] = -10.0f, gate[1] = 10.0f, gate[2] = -25.0f, gate[3] = 31.5f, gate[4] = 0.0f;
  const auto up = random_values(n, 6);
  std::vector<float> want(n);
  gelu_mul(gate, up, want);
  const auto dg = test::to_device(gate);
  const auto du = test::to_device(up);
  ASSERT_EQ(cuda::gelu_mul(static_cast<float*>(dg.get()), static_cast<float*>(du.get()), n,
                           static_cast<float*>(dg.get()), nullptr),
            0);
  expect_close(test::to_host<float>(dg, n), want, 1e-5, "gelu_mul");
}

TEST(CudaBlockOps, SoftCapMatchesTheDefinition) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const float cap = 30.0f;
  const auto x = random_values(5000, 7, 40.0f);
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = cap * std::tanh(x[i] / cap);
  const auto dx = test::to_device(x);
  ASSERT_EQ(cuda::soft_cap(static_cast<float*>(dx.get()), static_cast<int64_t>(x.size()), cap, nullptr), 0);
  expect_close(test::to_host<float>(dx, x.size()), want, 1e-5, "soft_cap");
}

TEST(CudaBlockOps, RopeMatchesTheCpuInBothLayouts) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const int n_tokens = 3, n_heads = 4, head_dim = 64;
  for (RopeLayout layout : {RopeLayout::Interleaved, RopeLayout::Neox}) {
    RopeParams params;
    params.n_rot = 48;  // part of the head stays as it is
    params.layout = layout;
    const uint32_t half = params.n_rot / 2;
    auto x = random_values(n_tokens * n_heads * head_dim, 5);
    std::vector<float> cos(n_tokens * half), sin(n_tokens * half);
    std::vector<float> want = x;
    for (int t = 0; t < n_tokens; ++t) {
      const std::span c(cos.data() + t * half, half), s(sin.data() + t * half, half);
      rope_angles(params, 1000 * t + 7, c, s);
      for (int h = 0; h < n_heads; ++h) {
        rope_rotate(params, c, s, std::span(want).subspan((t * n_heads + h) * head_dim, head_dim));
      }
    }
    const auto dx = test::to_device(x);
    const auto dc = test::to_device(cos);
    const auto ds = test::to_device(sin);
    ASSERT_EQ(
        cuda::rope(static_cast<float*>(dx.get()), n_tokens, n_heads, head_dim, params.n_rot, layout == RopeLayout::Neox,
                   static_cast<float*>(dc.get()), static_cast<float*>(ds.get()), nullptr),
        0);
    expect_close(test::to_host<float>(dx, x.size()), want, 1e-5, "rope");
  }
}

size_t head_bytes(GgmlType type, int head_dim) {
  const GgmlTypeTraits& t = ggml_type_traits(type);
  return head_dim / t.block_elements * t.block_bytes;
}

struct KvTypes {
  GgmlType k, v;
};

class CudaKvCache : public ::testing::TestWithParam<KvTypes> {};

TEST_P(CudaKvCache, StoresTheReferenceBytesAndAttendsLikeTheDefinition) {
  INFERTUNE_SKIP_WITHOUT_GPU();
  const auto [type_k, type_v] = GetParam();
  const int n_head = 4, n_head_kv = 2, head_dim = 64;
  const int64_t n_cells = 300;
  const cuda::KvLayerView empty{};
  cuda::KvLayerView k = empty, v = empty;
  const auto k_bytes = head_bytes(type_k, head_dim), v_bytes = head_bytes(type_v, head_dim);
  const auto dk = test::device_zeros(n_head_kv * n_cells * k_bytes);
  const auto dv = test::device_zeros(n_head_kv * n_cells * v_bytes);
  k = {dk.get(), static_cast<uint32_t>(type_k), n_head_kv, head_dim, n_cells, k_bytes};
  v = {dv.get(), static_cast<uint32_t>(type_v), n_head_kv, head_dim, n_cells, v_bytes};

  // Every cell written, in a shuffled order of cells.
  const auto keys = random_values(n_cells * n_head_kv * head_dim, 6, 2.0f);
  const auto values = random_values(n_cells * n_head_kv * head_dim, 7);
  std::vector<uint32_t> cells(n_cells);
  std::iota(cells.begin(), cells.end(), 0u);
  std::shuffle(cells.begin(), cells.end(), std::mt19937(8));
  const auto dcells = test::to_device(cells);
  const auto dkeys = test::to_device(keys);
  const auto dvalues = test::to_device(values);
  ASSERT_EQ(cuda::store_kv(static_cast<float*>(dkeys.get()), n_cells, static_cast<uint32_t*>(dcells.get()), k, nullptr),
            0);
  ASSERT_EQ(
      cuda::store_kv(static_cast<float*>(dvalues.get()), n_cells, static_cast<uint32_t*>(dcells.get()), v, nullptr), 0);

  // The bytes of each head row are the reference encoder's; decode them for the attention reference.
  const auto k_cache = test::to_host<std::byte>(dk, n_head_kv * n_cells * k_bytes);
  const auto v_cache = test::to_host<std::byte>(dv, n_head_kv * n_cells * v_bytes);
  std::vector<float> k_dec(n_head_kv * n_cells * head_dim), v_dec(k_dec.size());  // [head][cell][d]
  for (int64_t t = 0; t < n_cells; ++t) {
    for (int h = 0; h < n_head_kv; ++h) {
      const int64_t slot = h * n_cells + cells[t];
      for (auto [type, src, cache, bytes, dec] : {std::tuple{type_k, &keys, &k_cache, k_bytes, &k_dec},
                                                  std::tuple{type_v, &values, &v_cache, v_bytes, &v_dec}}) {
        std::vector<std::byte> want(bytes);
        ASSERT_TRUE(quantize_row(type, std::span(*src).subspan((t * n_head_kv + h) * head_dim, head_dim), want).ok());
        const std::span<const std::byte> got(cache->data() + slot * bytes, bytes);
        const auto diff = std::mismatch(want.begin(), want.end(), got.begin());
        ASSERT_TRUE(diff.first == want.end())
            << ggml_type_name(type) << " token " << t << " head " << h << " cell " << cells[t] << ": byte "
            << (diff.first - want.begin()) << " of " << bytes << " is " << static_cast<int>(*diff.second)
            << ", the reference encoder's " << static_cast<int>(*diff.first);
        ASSERT_TRUE(dequantize_row(type, got, std::span(*dec).subspan(slot * head_dim, head_dim)).ok());
      }
    }
  }

  // Three query tokens attending to lists of 1, 150 and 300 cells (in position order = the write order).
  const std::vector<int32_t> n_keys = {1, 150, 300};
  const std::vector<int32_t> offset = {0, 0, 0};
  const auto q = random_values(3 * n_head * head_dim, 9);
  const auto dq = test::to_device(q);
  const auto dn = test::to_device(n_keys);
  const auto doff = test::to_device(offset);
  const auto dout = test::device_zeros(q.size() * 4);
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const cuda::AttentionKeys lists{static_cast<int32_t*>(doff.get()), static_cast<int32_t*>(dn.get()),
                                  static_cast<uint32_t*>(dcells.get())};
  // Without a soft cap, and with gemma2's (a small one, so that it changes the weights of these scores).
  for (const float softcap : {0.0f, 1.5f}) {
    SCOPED_TRACE(softcap);
    ASSERT_EQ(cuda::attention(static_cast<float*>(dq.get()), 3, n_head, k, v, lists, scale, softcap,
                              static_cast<float*>(dout.get()), nullptr),
              0);
    const auto out = test::to_host<float>(dout, q.size());
    for (int t = 0; t < 3; ++t) {
      for (int h = 0; h < n_head; ++h) {
        const int kvh = h / (n_head / n_head_kv);
        std::vector<double> w(n_keys[t]);
        double max = -1e300, sum = 0.0;
        for (int j = 0; j < n_keys[t]; ++j) {
          double dot = 0.0;
          for (int d = 0; d < head_dim; ++d) {
            dot += static_cast<double>(q[(t * n_head + h) * head_dim + d]) *
                   k_dec[(kvh * n_cells + cells[j]) * head_dim + d];
          }
          w[j] = dot * scale;
          if (softcap != 0.0f) w[j] = softcap * std::tanh(w[j] / softcap);
          max = std::max(max, w[j]);
        }
        for (double& x : w) sum += (x = std::exp(x - max));
        for (int d = 0; d < head_dim; ++d) {
          double want = 0.0;
          for (int j = 0; j < n_keys[t]; ++j) want += w[j] / sum * v_dec[(kvh * n_cells + cells[j]) * head_dim + d];
          ASSERT_NEAR(out[(t * n_head + h) * head_dim + d], want, 1e-4 * 4.0) << "token " << t << " head " << h;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    CacheTypes, CudaKvCache,
    ::testing::Values(KvTypes{GgmlType::F32, GgmlType::F32}, KvTypes{GgmlType::F16, GgmlType::F16},
                      KvTypes{GgmlType::BF16, GgmlType::BF16}, KvTypes{GgmlType::Q8_0, GgmlType::Q8_0},
                      KvTypes{GgmlType::Q4_0, GgmlType::Q4_0}, KvTypes{GgmlType::F16, GgmlType::Q8_0}),
    [](const auto& info) {
      return std::string(ggml_type_name(info.param.k)) + "_" + std::string(ggml_type_name(info.param.v));
    });

}  // namespace
}  // namespace infertune
