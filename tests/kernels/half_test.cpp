// kernels/half.h against independent references: the CPU's F16C conversions (vcvtps2ph with round to
// nearest even, vcvtph2ps) for f16, and a nearest-value computation in double for bf16. Sampled so that
// every exponent, sign, NaN payload class and rounding case (exact, just below / at / just above a tie) is
// covered in a fraction of a second; INFERTUNE_EXHAUSTIVE_HALF=1 runs all 2^32 floats as well.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>

#include "kernels/half.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define INFERTUNE_TEST_F16C 1
#endif

namespace infertune {
namespace {

#ifdef INFERTUNE_TEST_F16C
__attribute__((target("f16c"))) uint16_t f16c_from_f32(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
__attribute__((target("f16c"))) float f16c_to_f32(uint16_t h) { return _cvtsh_ss(h); }
bool have_f16c() { return __builtin_cpu_supports("f16c"); }
#else
uint16_t f16c_from_f32(float) { return 0; }
float f16c_to_f32(uint16_t) { return 0; }
bool have_f16c() { return false; }
#endif

#define REQUIRE_F16C() \
  if (!have_f16c()) GTEST_SKIP() << "needs an x86 CPU with F16C for the reference conversion"

bool exhaustive() {
  const char* v = std::getenv("INFERTUNE_EXHAUSTIVE_HALF");
  return v && std::string_view(v) == "1";
}

// Calls check on a sample of float bit patterns: every pattern whose `low_bits` low bits are one of the
// rounding-relevant values (0, 1, just below / at / just above half, all ones), for all upper bits, plus
// `random` uniformly random patterns. check returns false to stop early (after a failure).
void for_sampled_floats(int low_bits, uint32_t random, const std::function<bool(uint32_t)>& check) {
  const uint32_t half = 1u << (low_bits - 1);
  const uint32_t lows[] = {0, 1, half - 1, half, half + 1, (1u << low_bits) - 1};
  for (uint64_t high = 0; high < (uint64_t{1} << (32 - low_bits)); ++high) {
    for (uint32_t low : lows) {
      if (!check(static_cast<uint32_t>(high << low_bits) | low)) return;
    }
  }
  std::mt19937 rng(42);
  for (uint32_t i = 0; i < random; ++i) {
    if (!check(static_cast<uint32_t>(rng()))) return;
  }
}

void for_all_floats(const std::function<bool(uint32_t)>& check) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; ++bits) {
    if (!check(static_cast<uint32_t>(bits))) return;
  }
}

// ---- f32 -> f16

bool f16_matches_f16c(uint32_t bits) {
  const float f = std::bit_cast<float>(bits);
  const uint16_t ours = f32_to_f16(f).bits;
  const uint16_t ref = f16c_from_f32(f);
  if (std::isnan(f)) {
    // F16C keeps the payload, ggml's scalar code (and ours) gives the canonical quiet NaN; both keep the sign.
    const bool ok = (ours & 0x7fffu) == 0x7e00u && (ours & 0x8000u) == (ref & 0x8000u);
    EXPECT_TRUE(ok) << std::hex << "f32 0x" << bits << " -> 0x" << ours;
    return ok;
  }
  EXPECT_EQ(ours, ref) << std::hex << "f32 0x" << bits << " (" << f << ")";
  return ours == ref;
}

TEST(HalfTest, F32ToF16MatchesF16cOnSample) {
  REQUIRE_F16C();
  // 13 bits are dropped for normal halves; half subnormals drop 14..24 bits, covered by the next pass.
  for_sampled_floats(13, 1u << 24, f16_matches_f16c);
  for (uint32_t drop = 14; drop <= 24; ++drop) for_sampled_floats(drop, 0, f16_matches_f16c);
}

TEST(HalfTest, F32ToF16MatchesF16cInTheSubnormalRange) {
  REQUIRE_F16C();
  // Every positive float from half the smallest half subnormal (2^-25) up to the smallest normal (2^-14),
  // and every 16th negative one (the sign is handled apart from the rounding).
  for (uint32_t bits = 0x33000000u; bits <= 0x38800000u; ++bits) {
    if (!f16_matches_f16c(bits)) return;
    if (bits % 16 == 0 && !f16_matches_f16c(bits | 0x80000000u)) return;
  }
}

TEST(HalfTest, F32ToF16SpecialValues) {
  EXPECT_EQ(f32_to_f16(0.0f).bits, 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f).bits, 0x8000);
  EXPECT_EQ(f32_to_f16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.996f).bits, 0x7bff);  // below the tie with 65536
  EXPECT_EQ(f32_to_f16(65520.0f).bits, 0x7c00);    // the tie rounds to even = inf
  EXPECT_EQ(f32_to_f16(INFINITY).bits, 0x7c00);
  EXPECT_EQ(f32_to_f16(-INFINITY).bits, 0xfc00);
  EXPECT_EQ(f32_to_f16(0x1p-24f).bits, 0x0001);         // smallest subnormal
  EXPECT_EQ(f32_to_f16(0x1p-25f).bits, 0x0000);         // tie between 0 and it: even
  EXPECT_EQ(f32_to_f16(0x1.8p-24f).bits, 0x0002);       // tie between 1 and 2 units: even
  EXPECT_EQ(f32_to_f16(0x1.ffcp-15f).bits, 0x0400);     // tie with the smallest normal: even
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f).bits, 0x3c00);  // tie: even
  EXPECT_EQ(f32_to_f16(1.0f + 0x1.8p-10f).bits, 0x3c02);
  EXPECT_EQ(f32_to_f16(-NAN).bits & 0xfe00, 0xfe00);
}

TEST(HalfTest, F32ToF16MatchesF16cOnAllFloats) {
  REQUIRE_F16C();
  if (!exhaustive()) GTEST_SKIP() << "set INFERTUNE_EXHAUSTIVE_HALF=1 to check all 2^32 floats (1-2 min)";
  for_all_floats(f16_matches_f16c);
}

// ---- f16 -> f32

TEST(HalfTest, F16ToF32MatchesF16cForAllHalves) {
  REQUIRE_F16C();
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint32_t ours = std::bit_cast<uint32_t>(f16_to_f32({static_cast<uint16_t>(h)}));
    const uint32_t ref = std::bit_cast<uint32_t>(f16c_to_f32(static_cast<uint16_t>(h)));
    ASSERT_EQ(ours, ref) << std::hex << "half 0x" << h;
  }
}

TEST(HalfTest, F16RoundTripsThroughF32) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = f16_to_f32({static_cast<uint16_t>(h)});
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f).bits, h) << std::hex << "half 0x" << h;
  }
}

// ---- bf16

// Round to nearest even by comparing distances in double (exact for floats). The candidate above is the
// truncation plus one bf16 unit, whose value is computed rather than decoded so that the step past the
// largest finite bf16 is 2^128 (overflow to inf follows the usual rule).
uint16_t reference_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = bits & 0x80000000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  const uint32_t below = magnitude & 0xffff0000u;
  const int exponent = static_cast<int>(below >> 23);
  const double unit = std::ldexp(1.0, (exponent == 0 ? 1 : exponent) - 127 - 7);
  const double lo = std::bit_cast<float>(below);
  const double x = std::bit_cast<float>(magnitude);
  const double to_lo = x - lo;
  const double to_hi = lo + unit - x;
  const bool up = to_hi < to_lo || (to_hi == to_lo && ((below >> 16) & 1u));
  return static_cast<uint16_t>((sign | (below + (up ? 0x10000u : 0))) >> 16);
}

bool bf16_matches_reference(uint32_t bits) {
  const float f = std::bit_cast<float>(bits);
  const uint16_t ours = f32_to_bf16(f).bits;
  if (std::isnan(f)) {
    const bool ok = std::isnan(bf16_to_f32({ours})) && (ours & 0x8040u) == ((bits >> 16) & 0x8000u) + 0x40u;
    EXPECT_TRUE(ok) << std::hex << "f32 0x" << bits << " -> 0x" << ours << " (want a quiet NaN, same sign)";
    return ok;
  }
  const uint16_t ref = reference_bf16(f);
  EXPECT_EQ(ours, ref) << std::hex << "f32 0x" << bits << " (" << f << ")";
  return ours == ref;
}

TEST(HalfTest, F32ToBf16MatchesReferenceOnSample) { for_sampled_floats(16, 1u << 24, bf16_matches_reference); }

TEST(HalfTest, F32ToBf16SpecialValues) {
  EXPECT_EQ(f32_to_bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80);  // tie: even
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82);  // tie: even (up)
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f7f8000u)).bits, 0x7f80);  // tie past the max: inf
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f7f7fffu)).bits, 0x7f7f);
  EXPECT_EQ(f32_to_bf16(INFINITY).bits, 0x7f80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x00008000u)).bits, 0x0000);  // subnormal tie: even
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x00018000u)).bits, 0x0002);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f800001u)).bits, 0x7fc0);  // signalling NaN -> quiet
}

TEST(HalfTest, F32ToBf16MatchesReferenceOnAllFloats) {
  if (!exhaustive()) GTEST_SKIP() << "set INFERTUNE_EXHAUSTIVE_HALF=1 to check all 2^32 floats (1-2 min)";
  for_all_floats(bf16_matches_reference);
}

TEST(HalfTest, Bf16RoundTripsThroughF32) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = bf16_to_f32({static_cast<uint16_t>(b)});
    ASSERT_EQ(std::bit_cast<uint32_t>(f), b << 16);
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_bf16(f).bits, b) << std::hex << "bf16 0x" << b;
  }
}

}  // namespace
}  // namespace infertune
