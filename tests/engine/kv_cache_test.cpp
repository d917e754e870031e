// The KV cache with its storage: memory accounting per K/V type, rows round-tripping through each type
// within the type's precision, placing ubatches (cells, which keys each token sees: its own sequence's,
// causally, across earlier batches and within the ubatch), the full-cache error, sequence-id checks,
// and the position shift re-rotating cached keys so that they equal keys computed at the new positions
// (plain rope and YaRN, whose magnitude factor must not be applied twice).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/kv/kv_cache.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kLayers = 2, kHeads = 2, kHeadDim = 64;

KvCacheParams params(uint32_t n_cells, GgmlType type_k = GgmlType::F32, GgmlType type_v = GgmlType::F32,
                     uint32_t n_seq_max = 4) {
  KvCacheParams p;
  p.layout = {kLayers, n_cells, kHeads, kHeadDim, kHeadDim, type_k, type_v};
  p.n_seq_max = n_seq_max;
  p.rope.n_rot = kHeadDim;
  p.rope.freq_base = 10000.0f;
  return p;
}

KvCache make(const KvCacheParams& p) {
  auto cache = KvCache::create(p);
  EXPECT_TRUE(cache.ok()) << cache.error().message;
  return std::move(*cache);
}

std::vector<float> random_row(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> row(n);
  for (float& x : row) x = dist(rng);
  return row;
}

TEST(KvCache, BytesPerTokenFollowTheTypes) {
  const size_t row = size_t{kHeads} * kHeadDim;
  struct Expect {
    GgmlType k, v;
    size_t per_token;
  };
  for (const Expect& e : {Expect{GgmlType::F32, GgmlType::F32, kLayers * row * 8},
                          Expect{GgmlType::F16, GgmlType::F16, kLayers * row * 4},
                          Expect{GgmlType::BF16, GgmlType::F32, kLayers * row * 6},
                          Expect{GgmlType::Q8_0, GgmlType::Q8_0, kLayers * (row / 32) * 34 * 2},
                          Expect{GgmlType::Q4_0, GgmlType::F16, kLayers * ((row / 32) * 18 + row * 2)}}) {
    KvCache cache = make(params(100, e.k, e.v));
    EXPECT_EQ(cache.bytes_per_token(), e.per_token) << ggml_type_name(e.k) << "/" << ggml_type_name(e.v);
    EXPECT_EQ(cache.bytes(), 100 * e.per_token);
    EXPECT_EQ(cache.bytes_used(), 0u);
  }
}

TEST(KvCache, BadTypesSizesAndSequenceCountsAreErrors) {
  EXPECT_THAT(KvCache::create(params(10, GgmlType::Q4_K)).error().message, HasSubstr("q4_K"));
  KvCacheParams odd = params(10, GgmlType::F32, GgmlType::Q8_0);
  odd.layout.head_dim_v = 48;  // not whole 32-value blocks
  EXPECT_THAT(KvCache::create(odd).error().message, HasSubstr("multiple of 32"));
  odd.layout.type_v = GgmlType::F16;
  EXPECT_TRUE(KvCache::create(odd).ok());  // any size in a float type
  EXPECT_FALSE(KvCache::create(params(10, GgmlType::F32, GgmlType::F32, 0)).ok());
  EXPECT_FALSE(KvCache::create(params(10, GgmlType::F32, GgmlType::F32, kMaxSequences + 1)).ok());
  EXPECT_FALSE(KvCache::create(params(0)).ok());
  EXPECT_TRUE(kv_type_from_name("Q8_0").ok());
  EXPECT_THAT(kv_type_from_name("q4_k").error().message, HasSubstr("f32, f16, bf16, q8_0, q4_0"));
}

// Relative RMSE of each type's round trip, against the fixtures README's reference codec figures (with
// room: those are over 8 kinds of rows).
TEST(KvCache, RowsRoundTripWithinTheTypePrecision) {
  struct Expect {
    GgmlType type;
    double max_rel_rmse;
  };
  for (const Expect& e : {Expect{GgmlType::F32, 0.0}, Expect{GgmlType::F16, 5e-4}, Expect{GgmlType::BF16, 4e-3},
                          Expect{GgmlType::Q8_0, 0.01}, Expect{GgmlType::Q4_0, 0.12}}) {
    KvCache cache = make(params(4, e.type, e.type));
    const std::vector<float> k = random_row(size_t{kHeads} * kHeadDim, 3);
    cache.storage().write_k(1, 2, k);
    std::vector<float> back(k.size());
    cache.storage().read_k(1, 2, back);
    double err = 0, norm = 0;
    for (size_t i = 0; i < k.size(); ++i) {
      err += (back[i] - k[i]) * (back[i] - k[i]);
      norm += k[i] * k[i];
    }
    EXPECT_LE(std::sqrt(err / norm), e.max_rel_rmse) << ggml_type_name(e.type);
  }
}

TEST(KvCache, PlacedTokensSeeTheirOwnSequenceCausally) {
  KvCache cache = make(params(16));
  KvUbatch ub;
  // Batch 1: a prompt of 3 tokens shared by sequences 0 and 1.
  const std::vector<int32_t> pos1 = {0, 1, 2};
  SeqSet both = SeqSet::of(0);
  both.insert(1);
  const std::vector<SeqSet> seqs1(3, both);
  ASSERT_TRUE(cache.place(pos1, seqs1, ub).ok());
  EXPECT_EQ(ub.cells, (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_EQ(ub.n_groups, 1u);  // grouped by the first id
  EXPECT_EQ(ub.groups[0].n_keys, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(cache.bytes_used(), 3 * cache.bytes_per_token());

  // Batch 2: sequence 1, 0, 1 interleaved, then sequence 2 alone.
  const std::vector<int32_t> pos2 = {3, 3, 4, 0};
  const std::vector<SeqSet> seqs2 = {SeqSet::of(1), SeqSet::of(0), SeqSet::of(1), SeqSet::of(2)};
  ASSERT_TRUE(cache.place(pos2, seqs2, ub).ok());
  EXPECT_EQ(ub.cells, (std::vector<uint32_t>{3, 4, 5, 6}));
  ASSERT_EQ(ub.n_groups, 3u);
  const KvAttentionGroup& g1 = ub.groups[0];
  EXPECT_EQ(g1.seq, 1);
  EXPECT_EQ(g1.rows, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(g1.key_cells, (std::vector<uint32_t>{0, 1, 2, 3, 5}));  // not sequence 0's cell 4
  EXPECT_EQ(g1.n_keys, (std::vector<uint32_t>{4, 5}));
  const KvAttentionGroup& g0 = ub.groups[1];
  EXPECT_EQ(g0.seq, 0);
  EXPECT_EQ(g0.key_cells, (std::vector<uint32_t>{0, 1, 2, 4}));
  EXPECT_EQ(g0.n_keys, (std::vector<uint32_t>{4}));
  const KvAttentionGroup& g2 = ub.groups[2];
  EXPECT_EQ(g2.key_cells, (std::vector<uint32_t>{6}));
  EXPECT_EQ(g2.n_keys, (std::vector<uint32_t>{1}));
}

TEST(KvCache, FullCacheIsAnErrorThatChangesNothing) {
  KvCache cache = make(params(4));
  KvUbatch ub;
  const std::vector<int32_t> pos = {0, 1, 2};
  const std::vector<SeqSet> seqs(3, SeqSet::of(0));
  ASSERT_TRUE(cache.place(pos, seqs, ub).ok());
  const std::vector<int32_t> more = {3, 4};
  const std::vector<SeqSet> seqs2(2, SeqSet::of(0));
  auto full = cache.place(more, seqs2, ub);
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(full.error().message, HasSubstr("KV cache full"));
  EXPECT_EQ(cache.n_used(), 3u);
  ASSERT_TRUE(cache.seq_rm(0, 2, -1).ok());  // the caller frees room, and then it fits
  EXPECT_TRUE(cache.place(more, seqs2, ub).ok());
}

TEST(KvCache, SequenceIdsAreChecked) {
  KvCache cache = make(params(4, GgmlType::F32, GgmlType::F32, 2));
  EXPECT_TRUE(cache.seq_rm(-1, -1, -1).ok());
  EXPECT_THAT(cache.seq_rm(2, 0, 1).error().message, HasSubstr("outside 0..1"));
  EXPECT_FALSE(cache.seq_cp(0, 2, -1, -1).ok());
  EXPECT_FALSE(cache.seq_cp(-1, 1, -1, -1).ok());
  EXPECT_FALSE(cache.seq_keep(-1).ok());
  EXPECT_FALSE(cache.seq_add(5, 0, 1, 1).ok());
}

// Keys stored rotated to position p, shifted by delta, equal the same keys rotated to p + delta.
void expect_shift_matches_fresh_rotation(const RopeParams& rope) {
  KvCacheParams p = params(8);
  p.rope = rope;
  KvCache cache = make(p);
  const size_t row = size_t{kHeads} * kHeadDim;
  const std::vector<int32_t> pos = {0, 5, 40};
  const std::vector<SeqSet> seqs(3, SeqSet::of(0));
  KvUbatch ub;
  ASSERT_TRUE(cache.place(pos, seqs, ub).ok());
  std::vector<float> cos(rope.n_rot / 2), sin(rope.n_rot / 2);
  auto rotated = [&](std::vector<float> k, int64_t at) {
    rope_angles(rope, at, cos, sin);
    for (uint32_t h = 0; h < kHeads; ++h) rope_rotate(rope, cos, sin, std::span(k).subspan(h * kHeadDim, kHeadDim));
    return k;
  };
  std::vector<std::vector<float>> raw;
  for (uint32_t t = 0; t < 3; ++t) {
    raw.push_back(random_row(row, 20 + t));
    for (uint32_t layer = 0; layer < kLayers; ++layer)
      cache.storage().write_k(layer, ub.cells[t], rotated(raw[t], pos[t]));
  }
  constexpr int32_t kDelta = 1000;
  ASSERT_TRUE(cache.seq_add(0, 5, -1, kDelta).ok());  // positions 5 and 40 move, 0 stays
  EXPECT_EQ(cache.seq_pos_max(0), 40 + kDelta);
  std::vector<float> back(row);
  for (uint32_t t = 0; t < 3; ++t) {
    const int64_t now = pos[t] + (pos[t] >= 5 ? kDelta : 0);
    const std::vector<float> want = rotated(raw[t], now);
    for (uint32_t layer = 0; layer < kLayers; ++layer) {
      cache.storage().read_k(layer, ub.cells[t], back);
      double worst = 0;
      for (size_t i = 0; i < row; ++i) worst = std::max(worst, std::fabs(double(back[i]) - want[i]));
      EXPECT_LE(worst, 2e-4) << "token " << t << " layer " << layer;
    }
  }
}

TEST(KvCache, ShiftReRotatesKeys) {
  RopeParams rope;
  rope.n_rot = kHeadDim;
  rope.freq_base = 10000.0f;
  expect_shift_matches_fresh_rotation(rope);
  rope.layout = RopeLayout::Neox;
  rope.n_rot = kHeadDim / 2;  // partial rotation
  expect_shift_matches_fresh_rotation(rope);
}

TEST(KvCache, ShiftUnderYarnIsAPureRotation) {
  RopeParams rope;
  rope.n_rot = kHeadDim;
  rope.freq_base = 10000.0f;
  rope.freq_scale = 0.25f;
  rope.ext_factor = 1.0f;
  rope.n_ctx_orig = 2048;
  ASSERT_GT(rope_mscale(rope), 1.1f);  // the factor the keys carry once
  expect_shift_matches_fresh_rotation(rope);
}

}  // namespace
}  // namespace infertune
