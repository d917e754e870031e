// Each sampling stage on fixed logits, against references computed here independently (double-precision
// softmax, explicit sorting): greedy, top_k, top_p, min_p, temperature, penalties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include "engine/sampling/candidates.h"
#include "engine/sampling/penalties_stage.h"
#include "engine/sampling/selection_stages.h"
#include "engine/sampling/temperature_stage.h"
#include "engine/sampling/truncation_stages.h"

namespace infertune {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Twelve distinct logits in no particular order.
const std::vector<float> kLogits{0.3f, -1.2f, 2.5f, 0.9f, -0.4f, 1.7f, 3.1f, -2.6f, 0.05f, 1.1f, -0.9f, 2.2f};

Candidates make(const std::vector<float>& logits) {
  Candidates c;
  c.assign(logits);
  return c;
}

std::set<int32_t> ids_of(const Candidates& c) {
  std::set<int32_t> ids;
  for (const Candidate& x : c.items()) ids.insert(x.id);
  return ids;
}

// Ids by descending logit, ties to the lower id.
std::vector<int32_t> ranked_ids(const std::vector<float>& logits) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  return ids;
}

std::vector<double> probabilities(const std::vector<float>& logits) {
  double max = -INFINITY;
  for (float l : logits) max = std::max(max, static_cast<double>(l));
  std::vector<double> p(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp(logits[i] - max);
  for (double& v : p) v /= sum;
  return p;
}

// --- greedy ---

TEST(SamplingGreedy, PicksArgmax) {
  Candidates c = make(kLogits);
  EXPECT_EQ(GreedyStage{}.select(c), 6);
}

TEST(SamplingGreedy, TiesGoToLowestIdSortedOrNot) {
  const std::vector<float> logits{1.0f, 5.0f, 2.0f, 5.0f, 5.0f};
  Candidates unsorted = make(logits);
  EXPECT_EQ(GreedyStage{}.select(unsorted), 1);
  Candidates sorted = make(logits);
  sorted.sort_descending();
  EXPECT_EQ(GreedyStage{}.select(sorted), 1);
}

TEST(SamplingGreedy, NeverPicksNanAndReportsNoToken) {
  Candidates c = make({kNaN, -3.0f, kNaN, -7.0f});
  EXPECT_EQ(GreedyStage{}.select(c), 1);
  Candidates all_nan = make({kNaN, kNaN});
  EXPECT_EQ(GreedyStage{}.select(all_nan), kNoToken);
  Candidates all_neg_inf = make({-kInf, -kInf});
  EXPECT_EQ(GreedyStage{}.select(all_neg_inf), kNoToken);
  Candidates empty = make({});
  EXPECT_EQ(GreedyStage{}.select(empty), kNoToken);
  Candidates plus_inf = make({1.0f, kInf, kNaN});
  EXPECT_EQ(GreedyStage{}.select(plus_inf), 1);
}

// --- top_k ---

TEST(SamplingTopK, LeavesExactlyTheKLargest) {
  const std::vector<int32_t> ranked = ranked_ids(kLogits);
  for (int32_t k = 1; k <= static_cast<int32_t>(kLogits.size()); ++k) {
    Candidates c = make(kLogits);
    TopKStage(k).apply(c);
    ASSERT_EQ(c.size(), static_cast<size_t>(k));
    EXPECT_EQ(ids_of(c), std::set<int32_t>(ranked.begin(), ranked.begin() + k)) << "k " << k;
  }
}

TEST(SamplingTopK, OffOrLargerThanVocabularyKeepsAll) {
  for (int32_t k : {0, -1, 12, 1000}) {
    Candidates c = make(kLogits);
    TopKStage(k).apply(c);
    EXPECT_EQ(c.size(), kLogits.size()) << "k " << k;
  }
}

TEST(SamplingTopK, TiesAtTheCutKeepTheLowerIds) {
  Candidates c = make({1.0f, 3.0f, 2.0f, 2.0f, 0.0f, 2.0f});
  TopKStage(2).apply(c);
  EXPECT_EQ(ids_of(c), (std::set<int32_t>{1, 2}));
}

// --- top_p ---

// Reference: smallest prefix (by descending probability, ties to the lower id) with sum >= top_p.
std::set<int32_t> top_p_reference(const std::vector<float>& logits, double top_p) {
  const std::vector<double> p = probabilities(logits);
  const std::vector<int32_t> ranked = ranked_ids(logits);
  std::set<int32_t> kept;
  double sum = 0.0;
  for (int32_t id : ranked) {
    kept.insert(id);
    sum += p[id];
    if (sum >= top_p) break;
  }
  return kept;
}

TEST(SamplingTopP, KeepsSmallestPrefixReachingP) {
  for (float top_p : {0.05f, 0.3f, 0.5f, 0.7f, 0.9f, 0.95f, 0.99f}) {
    Candidates c = make(kLogits);
    TopPStage(top_p).apply(c);
    EXPECT_EQ(ids_of(c), top_p_reference(kLogits, top_p)) << "top_p " << top_p;
    // Smallest: removing the last kept one would fall short of top_p.
    const std::vector<double> p = probabilities(kLogits);
    double without_last = 0.0;
    for (size_t i = 0; i + 1 < c.size(); ++i) without_last += p[c[i].id];
    EXPECT_LT(without_last, top_p);
  }
}

TEST(SamplingTopP, ExactBoundaryAndTies) {
  // Four equal logits: each p is exactly 0.25, so the sum reaches 0.5 exactly after two; the tie is cut
  // in favour of the lower ids.
  Candidates c = make({1.0f, 1.0f, 1.0f, 1.0f});
  TopPStage(0.5f).apply(c);
  EXPECT_EQ(ids_of(c), (std::set<int32_t>{0, 1}));
  Candidates just_over = make({1.0f, 1.0f, 1.0f, 1.0f});
  TopPStage(0.5000001f).apply(just_over);
  EXPECT_EQ(ids_of(just_over), (std::set<int32_t>{0, 1, 2}));
}

TEST(SamplingTopP, OneIsOffAndTinyKeepsOne) {
  Candidates all = make(kLogits);
  TopPStage(1.0f).apply(all);
  EXPECT_EQ(all.size(), kLogits.size());
  Candidates one = make(kLogits);
  TopPStage(1e-6f).apply(one);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].id, 6);
}

TEST(SamplingTopP, ImpossibleTokensAreCutWhenReachable) {
  Candidates c = make({0.0f, kNaN, 0.0f, -kInf});
  TopPStage(0.99f).apply(c);
  EXPECT_EQ(ids_of(c), (std::set<int32_t>{0, 2}));
}

// --- min_p ---

TEST(SamplingMinP, KeepsThoseWithinFactorOfMax) {
  // Logit steps of 0.5 give probability ratios exp(-0.5 k); none of the min_p values below is within
  // 0.4% of such a ratio, so float rounding cannot decide the outcome.
  const std::vector<float> logits{-1.5f, 0.0f, -4.0f, -0.5f, -3.0f, -2.5f, -1.0f, -5.0f, -2.0f, -3.5f};
  const std::vector<double> p = probabilities(logits);
  const double p_max = *std::max_element(p.begin(), p.end());
  for (float min_p : {0.05f, 0.1f, 0.3f, 0.5f, 0.9f}) {
    std::set<int32_t> expected;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] >= min_p * p_max) expected.insert(static_cast<int32_t>(i));
    }
    Candidates c = make(logits);
    MinPStage(min_p).apply(c);
    EXPECT_EQ(ids_of(c), expected) << "min_p " << min_p;
  }
}

TEST(SamplingMinP, ZeroIsOffAndOneKeepsTheMaxima) {
  Candidates off = make(kLogits);
  MinPStage(0.0f).apply(off);
  EXPECT_EQ(off.size(), kLogits.size());
  Candidates maxima = make({2.0f, 3.0f, 1.0f, 3.0f});
  MinPStage(1.0f).apply(maxima);
  EXPECT_EQ(ids_of(maxima), (std::set<int32_t>{1, 3}));
  Candidates impossible = make({kNaN, -kInf});
  MinPStage(0.5f).apply(impossible);
  EXPECT_EQ(impossible.size(), 2u);  // nothing to compare with; selection reports kNoToken
}

// --- temperature ---

TEST(SamplingTemperature, ScalesLogitsBeforeSoftmax) {
  for (float t : {0.25f, 0.8f, 1.0f, 1.7f, 10.0f}) {
    Candidates c = make(kLogits);
    TemperatureStage(t).apply(c);
    c.softmax();
    // Reference: softmax(logit / t) entirely in double.
    double max = -INFINITY;
    for (float l : kLogits) max = std::max(max, l / static_cast<double>(t));
    double sum = 0.0;
    std::vector<double> expected(kLogits.size());
    for (size_t i = 0; i < kLogits.size(); ++i)
      sum += expected[i] = std::exp(kLogits[i] / static_cast<double>(t) - max);
    for (size_t i = 0; i < c.size(); ++i) {
      const double want = expected[c[i].id] / sum;
      EXPECT_NEAR(c[i].p, want, 1e-7 + 2e-6 * want) << "t " << t << " id " << c[i].id;
    }
  }
}

TEST(SamplingTemperature, ZeroOrNegativeKeepsOnlyTheBest) {
  for (float t : {0.0f, -1.0f}) {
    Candidates c = make({1.0f, 4.0f, 4.0f, -2.0f});
    TemperatureStage(t).apply(c);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].id, 1);
  }
}

// --- penalties ---

TEST(SamplingPenalties, RepeatDividesPositiveAndMultipliesNegative) {
  const std::vector<float> logits{2.0f, -1.0f, 3.0f, 0.0f, -4.0f, 5.0f};
  PenaltiesStage penalties(1.5f, 64, 0.0f, 0.0f);
  for (int32_t token : {2, 4, 4, 3}) penalties.accept(token);
  Candidates c = make(logits);
  penalties.apply(c);
  EXPECT_FLOAT_EQ(c[0].logit, 2.0f);
  EXPECT_FLOAT_EQ(c[1].logit, -1.0f);
  EXPECT_FLOAT_EQ(c[2].logit, 3.0f / 1.5f);
  EXPECT_FLOAT_EQ(c[3].logit, 0.0f);
  EXPECT_FLOAT_EQ(c[4].logit, -4.0f * 1.5f);  // once, however often it was seen
  EXPECT_FLOAT_EQ(c[5].logit, 5.0f);
}

TEST(SamplingPenalties, FrequencyAndPresenceSubtractPerCount) {
  const std::vector<float> logits{1.0f, 1.0f, 1.0f, 1.0f};
  PenaltiesStage penalties(1.0f, 64, 0.5f, 0.25f);
  for (int32_t token : {1, 2, 2, 2}) penalties.accept(token);
  Candidates c = make(logits);
  penalties.apply(c);
  EXPECT_FLOAT_EQ(c[0].logit, 1.0f);
  EXPECT_FLOAT_EQ(c[1].logit, 1.0f - (1 * 0.5f + 0.25f));
  EXPECT_FLOAT_EQ(c[2].logit, 1.0f - (3 * 0.5f + 0.25f));
  EXPECT_FLOAT_EQ(c[3].logit, 1.0f);
}

TEST(SamplingPenalties, RepeatAppliesBeforeFrequencyAndPresence) {
  PenaltiesStage penalties(2.0f, 64, 0.5f, 1.0f);
  penalties.accept(0);
  penalties.accept(0);
  penalties.accept(1);
  Candidates c = make({4.0f, -4.0f});
  penalties.apply(c);
  EXPECT_FLOAT_EQ(c[0].logit, 4.0f / 2.0f - (2 * 0.5f + 1.0f));
  EXPECT_FLOAT_EQ(c[1].logit, -4.0f * 2.0f - (1 * 0.5f + 1.0f));
}

TEST(SamplingPenalties, OnlyTheWindowCounts) {
  PenaltiesStage penalties(1.0f, 3, 1.0f, 0.0f);
  for (int32_t token : {0, 0, 1, 2, 3}) penalties.accept(token);  // window: 1 2 3
  Candidates c = make({0.0f, 0.0f, 0.0f, 0.0f, 0.0f});
  penalties.apply(c);
  EXPECT_FLOAT_EQ(c[0].logit, 0.0f);
  EXPECT_FLOAT_EQ(c[1].logit, -1.0f);
  EXPECT_FLOAT_EQ(c[2].logit, -1.0f);
  EXPECT_FLOAT_EQ(c[3].logit, -1.0f);
  EXPECT_FLOAT_EQ(c[4].logit, 0.0f);

  PenaltiesStage everything(1.0f, -1, 1.0f, 0.0f);
  for (int32_t token : {0, 0, 1, 2, 3}) everything.accept(token);
  Candidates all = make({0.0f, 0.0f, 0.0f, 0.0f, 0.0f});
  everything.apply(all);
  EXPECT_FLOAT_EQ(all[0].logit, -2.0f);
  EXPECT_FLOAT_EQ(all[4].logit, 0.0f);

  PenaltiesStage off(1.0f, 0, 1.0f, 1.0f);
  off.accept(0);
  Candidates none = make({0.0f});
  off.apply(none);
  EXPECT_FLOAT_EQ(none[0].logit, 0.0f);
  EXPECT_EQ(off.describe(), "penalties(off)");
}

TEST(SamplingPenalties, ResetForgetsAndOutOfRangeTokensAreIgnored) {
  PenaltiesStage penalties(1.0f, 8, 0.0f, 1.0f);
  penalties.accept(1);
  penalties.accept(-1);
  penalties.accept(99);  // not in this vocabulary
  Candidates c = make({0.0f, 0.0f});
  penalties.apply(c);
  EXPECT_FLOAT_EQ(c[1].logit, -1.0f);
  penalties.reset();
  Candidates after = make({0.0f, 0.0f});
  penalties.apply(after);
  EXPECT_FLOAT_EQ(after[1].logit, 0.0f);
}

TEST(SamplingPenalties, SameResultOnReorderedCandidates) {
  PenaltiesStage penalties(1.3f, 64, 0.2f, 0.1f);
  for (int32_t token : {6, 2, 2, 7, 11}) penalties.accept(token);
  Candidates in_order = make(kLogits);
  penalties.apply(in_order);
  Candidates shuffled = make(kLogits);
  TopKStage(8).apply(shuffled);  // sorted, truncated: lookup by id, not index
  ASSERT_FALSE(shuffled.in_id_order());
  penalties.apply(shuffled);
  for (const Candidate& x : shuffled.items()) EXPECT_EQ(x.logit, in_order[x.id].logit) << "id " << x.id;
}

}  // namespace
}  // namespace infertune
