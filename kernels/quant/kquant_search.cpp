#include "kernels/quant/kquant_search.h"

#include <cmath>
#include <cstring>

namespace infertune::kquant {
namespace {

constexpr int kMaxGroup = 32;

// The searches over candidate scales run eight groups (sub-blocks) side by side, one per SIMD lane. Every
// lane performs exactly the scalar operations of ggml's sequential loop for its group, in the same order,
// so the results are bit-identical; what the lanes buy is that eight independent float sums advance
// together instead of one serial chain at a time.
//
// F8 holds the eight lanes as two 16-byte generic vectors, which GCC and Clang map to SSE on baseline
// x86-64 (and to NEON elsewhere); a single 32-byte vector would be split up poorly where AVX is absent.
// Every lane operation is one IEEE single-precision operation, exactly as in scalar code.
constexpr int kLanes = 8;
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));

struct F8 {
  F4 lo, hi;
  float get(int s) const { return s < 4 ? lo[s] : hi[s - 4]; }
  void set(int s, float v) {
    if (s < 4) {
      lo[s] = v;
    } else {
      hi[s - 4] = v;
    }
  }
};
struct M8 {  // lane masks: -1 (true) or 0
  I4 lo, hi;
  bool get(int s) const { return (s < 4 ? lo[s] : hi[s - 4]) != 0; }
};

inline F8 splat(float v) { return {F4{} + v, F4{} + v}; }
inline F8 operator+(const F8& a, const F8& b) { return {a.lo + b.lo, a.hi + b.hi}; }
inline F8 operator-(const F8& a, const F8& b) { return {a.lo - b.lo, a.hi - b.hi}; }
inline F8 operator*(const F8& a, const F8& b) { return {a.lo * b.lo, a.hi * b.hi}; }
inline F8 operator/(const F8& a, const F8& b) { return {a.lo / b.lo, a.hi / b.hi}; }
inline F8 operator-(const F8& a) { return {-a.lo, -a.hi}; }
inline F8& operator+=(F8& a, const F8& b) { return a = a + b; }
inline M8 operator<(const F8& a, const F8& b) { return {a.lo < b.lo, a.hi < b.hi}; }
inline M8 operator!=(const F8& a, const F8& b) { return {a.lo != b.lo, a.hi != b.hi}; }
inline M8 operator&(const M8& a, const M8& b) { return {a.lo & b.lo, a.hi & b.hi}; }
inline M8 operator~(const M8& a) { return {~a.lo, ~a.hi}; }
inline F8 select(const M8& m, const F8& a, const F8& b) { return {m.lo ? a.lo : b.lo, m.hi ? a.hi : b.hi}; }

constexpr float kRoundMagic = 12582912.f;  // 1.5 * 2^23: v + this has a unit ulp for |v| <= 2^22

// The code of each lane: v clamped to [lo, hi], then rounded to nearest even (kept as a float: codes are
// small integers, exact in float). Clamping first gives the same codes as ggml's clamp of the rounded
// value for every finite v; NaN lanes become lo.
inline F8 to_code(const F8& v, float lo, float hi) {
  const F8 lo8 = splat(lo);
  const F8 hi8 = splat(hi);
  F8 c = select(lo8 < v, v, lo8);
  c = select(c < hi8, c, hi8);
  return (c + splat(kRoundMagic)) - splat(kRoundMagic);
}

// |v|, except that -0 stays -0: harmless here, since these only feed sums that start at +0 and
// +0 + -0 = +0.
inline F8 magnitude(const F8& v) { return select(v < F8{}, -v, v); }

// ---- fit_scale_min_groups (ggml's make_qkx2_quants), lane by lane. Arrays are [element] of lanes. ----

struct ScaleMinLanes {
  F8 x[kMaxGroup];
  F8 w[kMaxGroup];
  F8 best_codes[kMaxGroup];
  F8 max, min, sum_w, sum_x;  // min is the offset of the best fit so far (ggml maps x - min with it)
  F8 scale, best_error;
  M8 live;  // false for a constant group (and for unused lanes): its result is fixed
};

// Transposes `count` groups into lanes (unused lanes get constant zeros) and starts each lane as ggml
// does: statistics in element order, then the plain min/max mapping, whose error candidates must beat.
void start_scale_min(int count, int n, int nmax, const float* x, const float* weights, bool use_mad, ScaleMinLanes& f) {
  for (int i = 0; i < n; ++i) {
    for (int s = 0; s < kLanes; ++s) {
      f.x[i].set(s, s < count ? x[s * n + i] : 0.f);
      f.w[i].set(s, s < count ? weights[s * n + i] : 0.f);
    }
  }
  f.min = f.max = f.x[0];
  f.sum_w = f.w[0];
  f.sum_x = f.sum_w * f.x[0];
  for (int i = 1; i < n; ++i) {
    f.min = select(f.x[i] < f.min, f.x[i], f.min);
    f.max = select(f.max < f.x[i], f.x[i], f.max);
    f.sum_w += f.w[i];
    f.sum_x += f.w[i] * f.x[i];
  }
  const F8 zero{};
  f.min = select(zero < f.min, zero, f.min);
  f.live = f.max != f.min;
  const F8 iscale = splat(static_cast<float>(nmax)) / (f.max - f.min);
  f.scale = splat(1.f) / iscale;
  f.best_error = zero;
  for (int i = 0; i < n; ++i) {
    const F8 l = to_code(iscale * (f.x[i] - f.min), 0.f, static_cast<float>(nmax));
    f.best_codes[i] = l;
    const F8 diff = f.scale * l + f.min - f.x[i];
    f.best_error += f.w[i] * (use_mad ? magnitude(diff) : diff * diff);
  }
}

// One step of the search in every lane: codes for iscale = (rmin + rdelta * step + nmax) / (max - min),
// their weighted least-squares scale and offset, and acceptance where the error is strictly lower.
template <bool kAbsolute>
void scale_min_step(int n, int nmax, const ScaleMinSearch& search, int step, ScaleMinLanes& f) {
  const float numerator = search.rmin + search.rdelta * step + nmax;
  const F8 iscale = splat(numerator) / (f.max - f.min);
  F8 codes[kMaxGroup];
  F8 sum_l{}, sum_l2{}, sum_xl{};
  for (int i = 0; i < n; ++i) {
    const F8 l = to_code(iscale * (f.x[i] - f.min), 0.f, static_cast<float>(nmax));
    codes[i] = l;
    const F8 wl = f.w[i] * l;
    sum_l += wl;
    sum_l2 += wl * l;
    sum_xl += wl * f.x[i];
  }
  const F8 zero{};
  const F8 D = f.sum_w * sum_l2 - sum_l * sum_l;
  F8 this_scale = (f.sum_w * sum_xl - f.sum_x * sum_l) / D;
  F8 this_min = (sum_l2 * f.sum_x - sum_l * sum_xl) / D;
  // An offset may only lower values: where the fit wants to raise them, refit the scale alone.
  const M8 raises = zero < this_min;
  this_scale = select(raises, sum_xl / sum_l2, this_scale);
  this_min = select(raises, zero, this_min);

  F8 error{};
  for (int i = 0; i < n; ++i) {
    const F8 diff = this_scale * codes[i] + this_min - f.x[i];
    error += f.w[i] * (kAbsolute ? magnitude(diff) : diff * diff);
  }
  const M8 take = f.live & (zero < D) & (error < f.best_error);
  f.best_error = select(take, error, f.best_error);
  f.scale = select(take, this_scale, f.scale);
  f.min = select(take, this_min, f.min);
  for (int i = 0; i < n; ++i) f.best_codes[i] = select(take, codes[i], f.best_codes[i]);
}

void fit_scale_min_lanes(int count, int n, int nmax, const float* x, const float* weights, uint8_t* L, float* scales,
                         float* mins, const ScaleMinSearch& search) {
  ScaleMinLanes f{};  // (n > 0 always; this only keeps the compiler from doubting it)
  start_scale_min(count, n, nmax, x, weights, search.use_mad, f);
  for (int step = 0; step <= search.nstep; ++step) {
    if (search.use_mad) {
      scale_min_step<true>(n, nmax, search, step, f);
    } else {
      scale_min_step<false>(n, nmax, search, step, f);
    }
  }
  for (int s = 0; s < count; ++s) {
    const bool live = f.live.get(s);
    for (int i = 0; i < n; ++i) L[s * n + i] = live ? static_cast<uint8_t>(f.best_codes[i].get(s)) : 0;
    scales[s] = live ? f.scale.get(s) : 0.f;
    mins[s] = -f.min.get(s);
  }
}

// ---- fit_symmetric_scale_groups (ggml's make_qx_quants, rmse_type 1), lane by lane. ----

struct SymmetricLanes {
  F8 x[kMaxGroup];
  F8 w[kMaxGroup];   // the importance weight, or x^2
  F8 wx[kMaxGroup];  // w * x (ggml's w*x[i]*l groups the same way)
  F8 max;            // the value of largest magnitude (first one on ties)
  F8 best_codes[kMaxGroup];
  F8 scale, best;
  M8 live;  // false for an all-zero group
};

// Codes l in [-nmax, nmax - 1] for one inverse scale per lane, with sum w x l and sum w l^2.
void symmetric_candidate(int n, int nmax, const SymmetricLanes& f, const F8& iscale, F8* codes, F8& sumlx, F8& suml2) {
  sumlx = suml2 = F8{};
  for (int i = 0; i < n; ++i) {
    const F8 l = to_code(iscale * f.x[i], static_cast<float>(-nmax), static_cast<float>(nmax - 1));
    codes[i] = l;
    sumlx += f.wx[i] * l;
    suml2 += f.w[i] * l * l;
  }
}

void fit_symmetric_lanes(int count, int n, int nmax, const float* x, const float* weights, int8_t* L, float* scales) {
  SymmetricLanes f{};
  F8 amax{};
  f.max = F8{};
  for (int i = 0; i < n; ++i) {
    for (int s = 0; s < kLanes; ++s) f.x[i].set(s, s < count ? x[s * n + i] : 0.f);
    if (weights) {
      for (int s = 0; s < kLanes; ++s) f.w[i].set(s, s < count ? weights[s * n + i] : 0.f);
    } else {
      f.w[i] = f.x[i] * f.x[i];
    }
    f.wx[i] = f.w[i] * f.x[i];
    const F8 ax = magnitude(f.x[i]);
    const M8 larger = amax < ax;
    amax = select(larger, ax, amax);
    f.max = select(larger, f.x[i], f.max);
  }
  f.live = ~(amax < splat(kGroupMaxEps));
  // Dead lanes divide by a stand-in so that no lane computes inf or NaN; their results are discarded.
  const F8 max = select(f.live, f.max, splat(1.f));

  // Candidate 0, iscale = -nmax / max, is the starting point; then -(nmax + 0.1 is) / max, is = -9..9.
  F8 codes[kMaxGroup];
  F8 sumlx, suml2;
  const F8 zero{};
  symmetric_candidate(n, nmax, f, splat(static_cast<float>(-nmax)) / max, f.best_codes, sumlx, suml2);
  f.scale = select(suml2 != zero, sumlx / suml2, zero);
  f.best = f.scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    symmetric_candidate(n, nmax, f, splat(-(nmax + 0.1f * is)) / max, codes, sumlx, suml2);
    // sumlx^2 / suml2 is the error reduction of the least-squares scale; compare without dividing.
    const M8 take = (zero < suml2) & (f.best * suml2 < sumlx * sumlx);
    f.scale = select(take, sumlx / suml2, f.scale);
    f.best = select(take, f.scale * sumlx, f.best);
    for (int i = 0; i < n; ++i) f.best_codes[i] = select(take, codes[i], f.best_codes[i]);
  }
  for (int s = 0; s < count; ++s) {
    const bool live = f.live.get(s);
    for (int i = 0; i < n; ++i) {
      L[s * n + i] = live ? static_cast<int8_t>(static_cast<int>(f.best_codes[i].get(s)) + nmax) : 0;
    }
    scales[s] = live ? f.scale.get(s) : 0.f;
  }
}

}  // namespace

void fit_scale_min_groups(int groups, int n, int nmax, const float* x, const float* weights, uint8_t* L, float* scales,
                          float* mins, const ScaleMinSearch& search) {
  for (int g = 0; g < groups; g += kLanes) {
    const int count = std::min(kLanes, groups - g);
    fit_scale_min_lanes(count, n, nmax, x + g * n, weights + g * n, L + g * n, scales + g, mins + g, search);
  }
}

void fit_symmetric_scale_groups(int groups, int n, int nmax, const float* x, const float* weights, int8_t* L,
                                float* scales) {
  for (int g = 0; g < groups; g += kLanes) {
    const int count = std::min(kLanes, groups - g);
    fit_symmetric_lanes(count, n, nmax, x + g * n, weights ? weights + g * n : nullptr, L + g * n, scales + g);
  }
}

float fit_q3_scale(int n, int nmax, const float* x, int8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.f;
  }
  const float iscale = -nmax / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  // Coordinate descent: re-derive each code from the fit of all the others; keep a move only when the
  // figure of merit sumlx^2 / suml2 grows.
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (!(slx > 0)) continue;
      float sl2 = suml2 - w * L[i] * L[i];
      const int new_l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
      if (new_l == L[i]) continue;
      slx += w * x[i] * new_l;
      sl2 += w * new_l * new_l;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<int8_t>(new_l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

void pack_scales_mins_6bit(const uint8_t* scales, const uint8_t* mins, uint8_t* packed) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(scales[j] | ((scales[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>(mins[j] | ((mins[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((scales[j + 4] & 0xF) | ((mins[j + 4] & 0xF) << 4));
  }
}

void encode_scale_min_superblock(const float* x, int nmax, const ScaleMinSearch& search, ScaleMinCodes* out) {
  constexpr int kSub = 32;
  constexpr int kGroups = 8;
  float weights[kSub * kGroups];
  for (int j = 0; j < kGroups; ++j) {
    const float* xs = x + kSub * j;
    float sum_x2 = 0;
    for (int l = 0; l < kSub; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / kSub);
    for (int l = 0; l < kSub; ++l) weights[kSub * j + l] = av_x + std::fabs(xs[l]);
  }
  float scales[kGroups];
  float mins[kGroups];
  fit_scale_min_groups(kGroups, kSub, nmax, x, weights, out->L, scales, mins, search);
  float max_scale = 0;  // the min is subtracted, so scales are positive
  float max_min = 0;
  for (int j = 0; j < kGroups; ++j) {
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t q_scales[kGroups];
  uint8_t q_mins[kGroups];
  for (int j = 0; j < kGroups; ++j) {
    // Truncation to 8 bits before the clamp is ggml's (it only matters for a negative fitted scale).
    q_scales[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
    q_mins[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
  }
  pack_scales_mins_6bit(q_scales, q_mins, out->scales);
  out->d = to_half_scale(max_scale / 63.f);
  out->dmin = to_half_scale(max_min / 63.f);

  requantize_scale_min_codes(x, nmax, out);
}

void requantize_scale_min_codes(const float* x, int nmax, ScaleMinCodes* out) {
  constexpr int kSub = 32;
  constexpr int kGroups = 8;
  const float d_all = f16_to_f32(out->d);
  const float dmin_all = f16_to_f32(out->dmin);
  for (int j = 0; j < kGroups; ++j) {
    uint8_t sc, m;
    unpack_scale_min_6bit(j, out->scales, &sc, &m);
    const float d = d_all * sc;
    if (!d) continue;
    const float dm = dmin_all * m;
    for (int i = 0; i < kSub; ++i) {
      const int l = nearest_int((x[kSub * j + i] + dm) / d);
      out->L[kSub * j + i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    }
  }
}

}  // namespace infertune::kquant
