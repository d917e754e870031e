// Every SIMD ops variant this CPU runs against the scalar reference table (kernels/ops/scalar_ops.cpp), over
// odd sizes (not multiples of 8 or 16, down to 1 and 0), unaligned pointers (offsets of 1 and 3 floats, 1 byte
// for encoded rows) and the inputs that break naive kernels (masked scores, exp overflow and underflow).
//
// Tolerances, written from how the kernels compute:
// - add, embedding row decoding, gelu_mul: exact (the same IEEE operations in the same order; gelu_mul's rounding
//   to half precision and its table lookup are exact operations).
// - rms_norm: the same float operations; only the order of the double sum of squares differs, which moves
//   the float mean by at most 1 ulp, so each output by a few ulp: 5e-7 relative.
// - rope: a fused multiply-add instead of two roundings; each output x0 c - x1 s differs by at most
//   2^-23 (|x0| + |x1|) from the reference, we allow 2^-22 (|x0| + |x1|).
// - softmax, silu_mul: the polynomial exp is within 2 ulp of exp (checked directly below), and the
//   normalization / division add a few roundings: 1e-6 relative, plus 1e-44 absolute for results in the
//   subnormal range, where 1 ulp is 1.4e-45.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/half.h"
#include "kernels/ops/embedding.h"
#include "kernels/ops/gelu.h"
#include "kernels/ops/ops_kernels.h"
#include "kernels/ops/rms_norm.h"
#include "kernels/ops/scalar_ops.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr size_t kSizes[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 100, 255, 257, 1000, 2048, 4099};
constexpr size_t kOffsets[] = {0, 1, 3};

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A buffer whose data starts `offset` floats into its allocation, so that loads are unaligned.
struct Shifted {
  std::vector<float> storage;
  size_t offset;
  Shifted(const std::vector<float>& values, size_t off) : storage(values.size() + off + 1, 0.0f), offset(off) {
    std::copy(values.begin(), values.end(), storage.begin() + static_cast<ptrdiff_t>(off));
  }
  float* data() { return storage.data() + offset; }
  std::vector<float> values(size_t n) const {
    return {storage.begin() + static_cast<ptrdiff_t>(offset), storage.begin() + static_cast<ptrdiff_t>(offset + n)};
  }
};

std::vector<const OpsKernels*> simd_tables() {
  std::vector<const OpsKernels*> tables;
  for (const OpsVariant& v : available_ops_variants(compiled_ops_variants())) {
    if (v.name != "scalar") tables.push_back(&v.kernels());
  }
  return tables;
}

class OpsSimdTest : public ::testing::TestWithParam<const OpsKernels*> {
 protected:
  const OpsKernels& simd() const { return *GetParam(); }
  const OpsKernels& ref() const { return scalar_ops_kernels(); }
};

TEST_P(OpsSimdTest, RmsNormMatchesReference) {
  for (size_t n : kSizes) {
    if (n == 0) continue;  // the mean of nothing is not defined
    for (size_t off : kOffsets) {
      for (float scale : {1e-3f, 1.0f, 1e3f}) {
        const auto x = random_values(n, 1 + static_cast<uint32_t>(n), scale);
        const auto gain = random_values(n, 2, 1.0f);
        Shifted xs(x, off), gs(gain, 2 * off % 4), out(std::vector<float>(n), off);
        std::vector<float> want(n);
        ref().rms_norm(x.data(), gain.data(), 1e-5f, n, want.data());
        simd().rms_norm(xs.data(), gs.data(), 1e-5f, n, out.data());
        const auto got = out.values(n);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_NEAR(got[i], want[i], 5e-7 * std::fabs(want[i]) + 1e-38) << "n=" << n << " off=" << off << " i=" << i;
        }
        EXPECT_EQ(out.storage.back(), 0.0f) << "wrote past the end, n=" << n;
        // In place gives the same floats.
        simd().rms_norm(xs.data(), gs.data(), 1e-5f, n, xs.data());
        EXPECT_EQ(xs.values(n), got);
      }
    }
  }
}

TEST_P(OpsSimdTest, RopeMatchesReferenceInBothLayouts) {
  for (size_t n_pairs : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64}) {
    for (bool neox : {false, true}) {
      for (size_t off : {0, 1}) {
        std::mt19937 rng(static_cast<uint32_t>(n_pairs));
        std::uniform_real_distribution<float> angle(-3.2f, 3.2f);
        std::vector<float> cos(n_pairs + 1), sin(n_pairs + 1);
        for (size_t i = 0; i < n_pairs; ++i) {
          const float a = angle(rng);
          cos[i] = std::cos(a);
          sin[i] = std::sin(a);
        }
        // Two floats past the rotated part (dimensions beyond n_rot) must stay as they are.
        const auto head = random_values(2 * n_pairs + 2, 9, 3.0f);
        std::vector<float> want = head;
        ref().rope_rotate(want.data(), cos.data(), sin.data(), n_pairs, neox);
        Shifted got(head, off);
        Shifted c(cos, off), s(sin, off);
        simd().rope_rotate(got.data(), c.data(), s.data(), n_pairs, neox);
        const auto out = got.values(head.size());
        for (size_t i = 0; i < n_pairs; ++i) {
          const size_t a = neox ? i : 2 * i, b = neox ? i + n_pairs : 2 * i + 1;
          const double bound = std::ldexp(std::fabs(head[a]) + std::fabs(head[b]), -22);
          ASSERT_NEAR(out[a], want[a], bound) << "n_pairs=" << n_pairs << " neox=" << neox << " pair " << i;
          ASSERT_NEAR(out[b], want[b], bound) << "n_pairs=" << n_pairs << " neox=" << neox << " pair " << i;
        }
        EXPECT_EQ(out[2 * n_pairs], head[2 * n_pairs]);
        EXPECT_EQ(out[2 * n_pairs + 1], head[2 * n_pairs + 1]);
      }
    }
  }
}

void expect_softmax_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == 0.0f) {
      ASSERT_LE(std::fabs(got[i]), 1e-44) << what << " i=" << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], 1e-6 * want[i] + 1e-44) << what << " i=" << i;
  }
}

TEST_P(OpsSimdTest, SoftmaxMatchesReference) {
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t n : kSizes) {
    for (size_t off : kOffsets) {
      for (float scale : {0.1f, 3.0f, 30.0f, 300.0f}) {
        auto x = random_values(n, 3 + static_cast<uint32_t>(n), scale);
        for (size_t i = 2; i < n; i += 5) x[i] = -inf;  // masked keys
        std::vector<float> want = x;
        ref().softmax(want.data(), n);
        Shifted got(x, off);
        simd().softmax(got.data(), n);
        const auto out = got.values(n);
        expect_softmax_close(out, want, "n=" + std::to_string(n) + " scale=" + std::to_string(scale));
        for (size_t i = 2; i < n; i += 5) ASSERT_EQ(out[i], 0.0f) << "masked entry " << i;
        EXPECT_EQ(got.storage.back(), 0.0f) << "wrote past the end, n=" << n;
      }
    }
  }
}

TEST_P(OpsSimdTest, SoftmaxOfMaskedRowsIsZero) {
  for (size_t n : {1, 5, 8, 16, 17, 40}) {
    std::vector<float> x(n, -std::numeric_limits<float>::infinity());
    simd().softmax(x.data(), n);
    for (float v : x) ASSERT_EQ(v, 0.0f) << n;
  }
}

// Units in the last place between a float and the exact value.
double ulps(float got, double exact) {
  const float rounded = static_cast<float>(exact);
  const double ulp =
      rounded == 0.0f ? std::numeric_limits<float>::denorm_min()
                      : std::nextafter(std::fabs(rounded), std::numeric_limits<float>::infinity()) - std::fabs(rounded);
  return std::fabs(got - exact) / ulp;
}

TEST_P(OpsSimdTest, ExpIsWithinTwoUlp) {
  // softmax([0, t, t', ...]) with every t <= -40: the sum is 1 + (less than 2^-25), its inverse rounds to 1,
  // so entry j is exactly the kernel's exp(t_j). Rows of 2 and 17 cover the masked-tail and the full-vector
  // code paths. Down to -103.9, the end of the subnormal range.
  double worst = 0;
  for (size_t n : {2, 17}) {
    for (float t0 = -103.9f; t0 <= -40.0f; t0 += 0.01f * static_cast<float>(n)) {
      std::vector<float> x(n, 0.0f);
      for (size_t j = 1; j < n; ++j) x[j] = std::max(-103.9f, t0 - 0.003f * static_cast<float>(j));
      std::vector<float> row = x;
      simd().softmax(row.data(), n);
      for (size_t j = 1; j < n; ++j) worst = std::max(worst, ulps(row[j], std::exp(static_cast<double>(x[j]))));
    }
  }
  // In [-40, -17.4] one other entry of 0 keeps the sum's inverse at 1 (e^t < 2^-25).
  for (float t = -40.0f; t <= -17.4f; t += 0.001f) {
    std::vector<float> row = {0.0f, t};
    simd().softmax(row.data(), 2);
    worst = std::max(worst, ulps(row[1], std::exp(static_cast<double>(t))));
  }
  EXPECT_LE(worst, 2.0);
}

TEST_P(OpsSimdTest, SiluMulMatchesReference) {
  for (size_t n : kSizes) {
    for (size_t off : kOffsets) {
      for (float scale : {0.5f, 5.0f, 50.0f}) {
        const auto gate = random_values(n, 4 + static_cast<uint32_t>(n), scale);
        const auto up = random_values(n, 5, 2.0f);
        std::vector<float> want(n);
        ref().silu_mul(gate.data(), up.data(), n, want.data());
        Shifted g(gate, off), u(up, (off + 1) % 4), out(std::vector<float>(n), off);
        simd().silu_mul(g.data(), u.data(), n, out.data());
        const auto got = out.values(n);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_NEAR(got[i], want[i], 1e-6 * std::fabs(want[i]) + 1e-44) << "n=" << n << " gate=" << gate[i];
        }
        EXPECT_EQ(out.storage.back(), 0.0f) << "wrote past the end, n=" << n;
        // out aliasing gate (the engine's use) and up give the same floats.
        simd().silu_mul(g.data(), u.data(), n, g.data());
        EXPECT_EQ(g.values(n), got);
        Shifted g2(gate, off);
        simd().silu_mul(g2.data(), u.data(), n, u.data());
        EXPECT_EQ(u.values(n), got);
      }
    }
  }
}

TEST_P(OpsSimdTest, SiluMulOverTheWholeExpRange) {
  // Gates from -120 to 120: exp(-gate) overflows (gate < -88.7, silu -> -0) and underflows.
  std::vector<float> gate;
  for (float g = -120.0f; g <= 120.0f; g += 0.0137f) gate.push_back(g);
  const std::vector<float> up(gate.size(), 1.5f);
  std::vector<float> want(gate.size()), got(gate.size());
  ref().silu_mul(gate.data(), up.data(), gate.size(), want.data());
  simd().silu_mul(gate.data(), up.data(), gate.size(), got.data());
  for (size_t i = 0; i < gate.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-6 * std::fabs(want[i]) + 1e-44) << "gate=" << gate[i];
    ASSERT_FALSE(std::isnan(got[i])) << "gate=" << gate[i];
  }
}

// Every half-precision value as a gate (the table's whole domain), values between them (rounding to nearest even,
// ties included), the ends of the table (+-10) and beyond, infinities and NaN: the same bits as the reference, at odd
// sizes and offsets, written in place over gate or up as the engine does.
TEST_P(OpsSimdTest, GeluMulIsTheReferenceBitForBit) {
  std::vector<float> gate;
  for (uint32_t bits = 0; bits < 65536; ++bits) gate.push_back(f16_to_f32(f16_t{static_cast<uint16_t>(bits)}));
  for (float x = -12.0f; x <= 12.0f; x += 0.000917f) gate.push_back(x);
  for (float x :
       {kGeluTableLow, kGeluTableHigh, std::nextafter(kGeluTableLow, 0.0f), std::nextafter(kGeluTableHigh, 0.0f),
        1.00048828125f /* a tie between two halves */, 1e-30f, -1e-30f, std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    gate.push_back(x);
  }
  const auto up = random_values(gate.size(), 11, 2.0f);
  const auto bits = [](const std::vector<float>& v) {
    std::vector<uint32_t> out;
    for (float x : v) out.push_back(std::bit_cast<uint32_t>(x));
    return out;
  };
  std::vector<float> want(gate.size()), got(gate.size());
  ref().gelu_mul(gate.data(), up.data(), gate.size(), want.data());
  simd().gelu_mul(gate.data(), up.data(), gate.size(), got.data());
  ASSERT_EQ(bits(got), bits(want));
  for (size_t n : kSizes) {
    for (size_t off : kOffsets) {
      const std::vector<float> g_n(gate.end() - static_cast<ptrdiff_t>(n), gate.end());  // the edge cases last
      const std::vector<float> u_n(up.begin(), up.begin() + static_cast<ptrdiff_t>(n));
      std::vector<float> expected(n);
      ref().gelu_mul(g_n.data(), u_n.data(), n, expected.data());
      Shifted g(g_n, off), u(u_n, (off + 1) % 4);
      simd().gelu_mul(g.data(), u.data(), n, g.data());
      ASSERT_EQ(bits(g.values(n)), bits(expected)) << "n=" << n;
      EXPECT_EQ(g.storage.back(), 0.0f) << "wrote past the end, n=" << n;
    }
  }
}

TEST_P(OpsSimdTest, AddIsExact) {
  for (size_t n : kSizes) {
    for (size_t off : kOffsets) {
      const auto x = random_values(n, 6, 3.0f);
      const auto y = random_values(n, 7, 1e-3f);
      std::vector<float> want = x;
      ref().add(want.data(), y.data(), n);
      Shifted got(x, off), ys(y, 3 - off);
      simd().add(got.data(), ys.data(), n);
      EXPECT_EQ(got.values(n), want) << "n=" << n << " off=" << off;
      EXPECT_EQ(got.storage.back(), 0.0f) << "wrote past the end, n=" << n;
    }
  }
}

// Encoded rows: quantized from normal values, and raw random bytes (any scale bits, NaN and inf included).
std::vector<std::byte> encoded_row(GgmlType type, size_t n, uint32_t seed, bool raw) {
  std::vector<std::byte> row(*ggml_row_bytes(type, n));
  if (raw) {
    std::mt19937 rng(seed);
    for (std::byte& b : row) b = static_cast<std::byte>(rng() & 0xFF);
  } else {
    (void)quantize_row(type, random_values(n, seed, 2.0f), row);
  }
  return row;
}

TEST_P(OpsSimdTest, EmbeddingRowDecodersAreBitExact) {
  constexpr GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,
                                 GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K};
  for (GgmlType type : kTypes) {
    const DequantRowFn decode = simd().dequant_row(type);
    ASSERT_NE(decode, nullptr) << ggml_type_name(type);
    const size_t block = ggml_type_traits(type).block_elements;
    const std::vector<size_t> sizes = block == 1 ? std::vector<size_t>{1, 7, 9, 17, 33, 2048}
                                                 : std::vector<size_t>{block, 2 * block, 3 * block, 5 * block};
    for (size_t n : sizes) {
      for (bool raw : {false, true}) {
        const auto row = encoded_row(type, n, static_cast<uint32_t>(n) + raw, raw);
        std::vector<float> want(n);
        ASSERT_TRUE(dequantize_row(type, row, want));
        // src one byte off any alignment, dst one float off.
        std::vector<std::byte> src(row.size() + 1);
        std::copy(row.begin(), row.end(), src.begin() + 1);
        std::vector<float> got(n + 2, 0.0f);
        decode(src.data() + 1, got.data() + 1, n);
        ASSERT_EQ(std::memcmp(got.data() + 1, want.data(), n * sizeof(float)), 0)
            << ggml_type_name(type) << " n=" << n << " raw=" << raw;
        EXPECT_EQ(got[n + 1], 0.0f) << "wrote past the end";
      }
    }
  }
}

TEST_P(OpsSimdTest, EmbeddingLookupUsesTheVariant) {
  // embedding_row through the process-wide table forced to this variant decodes the requested row.
  ScopedOpsVariant forced(std::string(simd().variant));
  ASSERT_EQ(ops_kernels().variant, simd().variant);
  constexpr size_t kRows = 5, kCols = 512;
  for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q8_0, GgmlType::Q5_K}) {  // Q5_K: the reference fallback
    const size_t row_bytes = *ggml_row_bytes(type, kCols);
    std::vector<std::byte> table;
    for (size_t r = 0; r < kRows; ++r) {
      const auto row = encoded_row(type, kCols, 20 + static_cast<uint32_t>(r), false);
      table.insert(table.end(), row.begin(), row.end());
    }
    std::vector<float> got(kCols), want(kCols);
    ASSERT_TRUE(embedding_row(type, table, 3, got));
    ASSERT_TRUE(dequantize_row(type, std::span(table).subspan(3 * row_bytes, row_bytes), want));
    EXPECT_EQ(got, want) << ggml_type_name(type);
    EXPECT_FALSE(embedding_row(type, table, kRows, got));
  }
}

std::string variant_name(const ::testing::TestParamInfo<const OpsKernels*>& info) {
  return std::string(info.param->variant);
}

INSTANTIATE_TEST_SUITE_P(Variants, OpsSimdTest, ::testing::ValuesIn(simd_tables()), variant_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OpsSimdTest);  // a CPU without AVX2 has no SIMD variant

// The reference itself, as ggml's CPU backend computes gelu: the input rounded to half precision, gelu of that
// rounded to half precision (ggml's table), x itself from 10 on and 0 up to -10.
TEST(GeluReference, IsTheHalfPrecisionTableOfTheTanhApproximation) {
  const float up = 1.5f;
  for (float x : {-9.99f, -3.0f, -0.5f, -1e-3f, 0.0f, 1e-3f, 0.3f, 1.0f, 2.718f, 7.5f, 9.99f}) {
    const float rounded = f16_to_f32(f32_to_f16(x));
    const float want = f16_to_f32(f32_to_f16(gelu(rounded))) * up;
    float got = 0;
    gelu_mul_reference(&x, &up, 1, &got);
    EXPECT_EQ(got, want) << x;
    EXPECT_NEAR(got / up, 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))), 2e-3f * (1.0f + std::fabs(x))) << x;
  }
  for (float x : {-10.0f, -25.0f}) {
    float got = 1;
    gelu_mul_reference(&x, &up, 1, &got);
    EXPECT_EQ(got, 0.0f) << x;
  }
  for (float x : {10.0f, 25.0f}) {
    float got = 0;
    gelu_mul_reference(&x, &up, 1, &got);
    EXPECT_EQ(got, x * up) << x;
  }
}

TEST(OpsRegistryTest, ForcedNamesSelectByPrefix) {
  const auto variants = compiled_ops_variants();
  const auto usable = available_ops_variants(variants);
  ASSERT_FALSE(usable.empty());
  EXPECT_EQ(usable.back().name, "scalar");
  EXPECT_EQ(choose_ops_kernels(variants, std::nullopt).variant, usable.front().name);
  EXPECT_EQ(choose_ops_kernels(variants, "scalar").variant, "scalar");
  EXPECT_EQ(choose_ops_kernels(variants, "no-such-isa").variant, usable.front().name);
  for (const OpsVariant& v : usable) {
    EXPECT_EQ(choose_ops_kernels(variants, v.name).variant, v.name);
    if (v.name == "avx512") {
      EXPECT_EQ(choose_ops_kernels(variants, "avx512vnni").variant, "avx512");
    }
  }
}

TEST(OpsRegistryTest, UnavailableVariantsAreNeverChosen) {
  const auto never = []() { return false; };
  const std::vector<OpsVariant> variants = {scalar_ops_variant(), {"fake", 100, never, scalar_ops_kernels}};
  EXPECT_EQ(available_ops_variants(variants).size(), 1u);
  EXPECT_EQ(choose_ops_kernels(variants, "fake").variant, "scalar");
}

TEST(OpsRegistryTest, ScopedVariantSwitchesThePublicOpsAndRestores) {
  const std::string_view before = ops_kernels().variant;
  {
    ScopedOpsVariant forced(std::string("scalar"));
    EXPECT_EQ(ops_kernels().variant, "scalar");
    const std::vector<float> x = {3.0f, 4.0f}, gain = {1.0f, 1.0f};
    std::vector<float> out(2);
    rms_norm(x, gain, 0.0f, out);
    EXPECT_FLOAT_EQ(out[0], 3.0f / std::sqrt(12.5f));
  }
  EXPECT_EQ(ops_kernels().variant, before);
}

}  // namespace
}  // namespace infertune
