// The K-quant search helpers: rounding, scale packing, and the lane-parallel fits against plain scalar
// transcriptions of ggml's sequential algorithms (make_qkx2_quants, make_qx_quants with rmse_type 1) on
// many more, and more varied, groups than the fixtures hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/half.h"
#include "kernels/quant/kquant_search.h"

namespace infertune {
namespace {

// ---- Scalar references: one group at a time, one step at a time, as ggml's loops are written. ----

int ref_round(float v) { return static_cast<int>(std::nearbyint(v)); }  // ties to even (default mode)

float ref_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* the_min, float rmin,
                    float rdelta, int nstep, bool use_mad) {
  auto error_of = [&](float diff, float weight) { return weight * (use_mad ? std::fabs(diff) : diff * diff); };
  float min = x[0], max = x[0], sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(std::clamp(ref_round(iscale * (x[i] - min)), 0, nmax));
    best += error_of(scale * L[i] + min - x[i], w[i]);
  }
  for (int step = 0; step <= nstep; ++step) {
    iscale = (rmin + rdelta * step + nmax) / (max - min);
    uint8_t c[32];
    float sl = 0, sl2 = 0, sxl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(ref_round(iscale * (x[i] - min)), 0, nmax);
      c[i] = static_cast<uint8_t>(l);
      sl += w[i] * l;
      sl2 += w[i] * l * l;
      sxl += w[i] * l * x[i];
    }
    const float D = sum_w * sl2 - sl * sl;
    if (!(D > 0)) continue;
    float s = (sum_w * sxl - sum_x * sl) / D;
    float m = (sl2 * sum_x - sl * sxl) / D;
    if (m > 0) {
      m = 0;
      s = sxl / sl2;
    }
    float e = 0;
    for (int i = 0; i < n; ++i) e += error_of(s * c[i] + m - x[i], w[i]);
    if (e < best) {
      best = e;
      scale = s;
      min = m;
      std::memcpy(L, c, static_cast<size_t>(n));
    }
  }
  *the_min = -min;
  return scale;
}

float ref_symmetric(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax < kquant::kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  auto sums = [&](float iscale, int8_t* codes, float& slx, float& sl2) {
    slx = sl2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(ref_round(iscale * x[i]), -nmax, nmax - 1);
      codes[i] = static_cast<int8_t>(l + nmax);
      const float w = x[i] * x[i];
      slx += w * x[i] * l;
      sl2 += w * l * l;
    }
  };
  float slx, sl2;
  sums(-nmax / max, L, slx, sl2);
  float scale = sl2 ? slx / sl2 : 0.f;
  float best = scale * slx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    int8_t c[32];
    sums(-(nmax + 0.1f * is) / max, c, slx, sl2);
    if (sl2 > 0 && slx * slx > best * sl2) {
      std::memcpy(L, c, static_cast<size_t>(n));
      scale = slx / sl2;
      best = scale * slx;
    }
  }
  return scale;
}

// Groups of varied shape: Gaussian, one-signed, constant, zero, outliers, half-integers (rounding ties),
// tiny and huge magnitudes.
void fill_group(std::mt19937& rng, int kind, float* x, int n) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> small_int(-8, 8);
  for (int i = 0; i < n; ++i) {
    switch (kind % 9) {
      case 0:
        x[i] = normal(rng);
        break;
      case 1:
        x[i] = std::fabs(normal(rng)) + 0.5f;
        break;
      case 2:
        x[i] = -std::fabs(normal(rng));
        break;
      case 3:
        x[i] = 1.25f;
        break;
      case 4:
        x[i] = 0.f;
        break;
      case 5:
        x[i] = i == 3 ? 40.f : normal(rng);
        break;
      case 6:
        x[i] = small_int(rng) * 0.5f;
        break;
      case 7:
        x[i] = normal(rng) * 1e-7f;
        break;
      default:
        x[i] = normal(rng) * 3e4f;
        break;
    }
  }
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

struct ScaleMinCase {
  int groups, n, nmax;
  kquant::ScaleMinSearch search;
};

TEST(KQuantSearch, ScaleMinGroupsMatchScalarReference) {
  // q2_K's and q4_K's / q5_K's searches, and counts that leave lanes unused.
  const ScaleMinCase cases[] = {{16, 16, 3, {-0.5f, 0.1f, 15, true}},
                                {8, 32, 15, {-1.f, 0.1f, 20, false}},
                                {8, 32, 31, {-0.5f, 0.1f, 15, false}},
                                {5, 32, 15, {-1.f, 0.1f, 20, false}},
                                {11, 16, 3, {-0.5f, 0.1f, 15, true}}};
  std::mt19937 rng(5);
  for (const auto& c : cases) {
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<float> x(static_cast<size_t>(c.groups * c.n)), w(x.size());
      for (int g = 0; g < c.groups; ++g) fill_group(rng, trial + g * (trial % 3), &x[g * c.n], c.n);
      for (size_t i = 0; i < x.size(); ++i) w[i] = c.search.use_mad ? std::fabs(x[i]) : 0.3f + std::fabs(x[i]);
      std::vector<uint8_t> L(x.size());
      std::vector<float> scales(c.groups), mins(c.groups);
      kquant::fit_scale_min_groups(c.groups, c.n, c.nmax, x.data(), w.data(), L.data(), scales.data(), mins.data(),
                                   c.search);
      for (int g = 0; g < c.groups; ++g) {
        uint8_t ref_L[32];
        float ref_min;
        const float ref = ref_scale_min(c.n, c.nmax, &x[g * c.n], &w[g * c.n], ref_L, &ref_min, c.search.rmin,
                                        c.search.rdelta, c.search.nstep, c.search.use_mad);
        ASSERT_TRUE(same_bits(scales[g], ref)) << "nmax " << c.nmax << " trial " << trial << " group " << g;
        ASSERT_TRUE(same_bits(mins[g], ref_min)) << "nmax " << c.nmax << " trial " << trial << " group " << g;
        ASSERT_EQ(std::memcmp(&L[g * c.n], ref_L, static_cast<size_t>(c.n)), 0) << "trial " << trial << " group " << g;
      }
    }
  }
}

TEST(KQuantSearch, SymmetricGroupsMatchScalarReference) {
  std::mt19937 rng(6);
  for (int groups : {16, 3, 9}) {
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<float> x(static_cast<size_t>(groups * 16));
      for (int g = 0; g < groups; ++g) fill_group(rng, trial + 2 * g, &x[g * 16], 16);
      std::vector<int8_t> L(x.size());
      std::vector<float> scales(groups);
      kquant::fit_symmetric_scale_groups(groups, 16, 32, x.data(), nullptr, L.data(), scales.data());
      for (int g = 0; g < groups; ++g) {
        int8_t ref_L[16];
        const float ref = ref_symmetric(16, 32, &x[g * 16], ref_L);
        ASSERT_TRUE(same_bits(scales[g], ref)) << "trial " << trial << " group " << g;
        ASSERT_EQ(std::memcmp(&L[g * 16], ref_L, 16), 0) << "trial " << trial << " group " << g;
      }
    }
  }
}

TEST(KQuantSearch, NearestIntRoundsHalfToEvenAndSaturates) {
  for (float v : {0.f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.49f, -7.51f, 1000.5f, 4194302.5f, -4194303.f}) {
    EXPECT_EQ(kquant::nearest_int(v), static_cast<int>(std::nearbyint(v))) << v;
  }
  EXPECT_EQ(kquant::nearest_int(1e30f), 4194303);
  EXPECT_EQ(kquant::nearest_int(-std::numeric_limits<float>::infinity()), -4194303);
  const int nan_code = kquant::nearest_int(std::numeric_limits<float>::quiet_NaN());
  EXPECT_LE(std::abs(nan_code), 4194304);
}

TEST(KQuantSearch, SixBitScalesRoundTripEverySlot) {
  for (int slot = 0; slot < 8; ++slot) {
    for (int v = 0; v < 64; ++v) {
      uint8_t scales[8], mins[8];
      for (int j = 0; j < 8; ++j) {
        scales[j] = static_cast<uint8_t>((j * 13 + 5) % 64);  // neighbours with all bits in use
        mins[j] = static_cast<uint8_t>((j * 29 + 63) % 64);
      }
      scales[slot] = static_cast<uint8_t>(v);
      mins[slot] = static_cast<uint8_t>(63 - v);
      uint8_t packed[12];
      kquant::pack_scales_mins_6bit(scales, mins, packed);
      for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        kquant::unpack_scale_min_6bit(j, packed, &sc, &m);
        ASSERT_EQ(sc, scales[j]) << "slot " << slot << " value " << v << " pair " << j;
        ASSERT_EQ(m, mins[j]) << "slot " << slot << " value " << v << " pair " << j;
      }
    }
  }
}

TEST(KQuantSearch, HalfScaleSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(f16_to_f32(kquant::to_half_scale(1e9f)), 65504.f);
  EXPECT_EQ(f16_to_f32(kquant::to_half_scale(-1e9f)), -65504.f);
  EXPECT_EQ(kquant::to_half_scale(0.1f).bits, f32_to_f16(0.1f).bits);
}

}  // namespace
}  // namespace infertune
