// Candidates: softmax against a direct double-precision computation, NaN/inf handling, and the one
// ordering (logit descending, ties to the lower id) every stage relies on.
#include "engine/sampling/candidates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace infertune {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<double> softmax_reference(const std::vector<float>& logits) {
  double max = -INFINITY;
  for (float l : logits) max = std::max(max, static_cast<double>(l));
  std::vector<double> p(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp(static_cast<double>(logits[i]) - max);
  for (double& v : p) v /= sum;
  return p;
}

TEST(SamplingCandidates, AssignKeepsIdOrderAndMakesNanImpossible) {
  Candidates c;
  c.assign(std::vector<float>{1.5f, kNaN, -2.0f});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(c.in_id_order());
  EXPECT_FALSE(c.sorted());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c[i].id, i);
  EXPECT_EQ(c[0].logit, 1.5f);
  EXPECT_EQ(c[1].logit, -kInf);
  EXPECT_EQ(c[2].logit, -2.0f);
  EXPECT_EQ(c.max_logit(), 1.5f);
}

TEST(SamplingCandidates, SoftmaxMatchesDoublePrecisionReference) {
  // Wide range of magnitudes, including values where a naive exp() would overflow.
  const std::vector<float> logits{0.0f, 1.0f, -1.0f, 3.25f, 88.0f, 89.5f, -100.0f, 87.9f, 12.0f, 89.5f};
  Candidates c;
  c.assign(logits);
  c.softmax();
  const std::vector<double> expected = softmax_reference(logits);
  double total = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    EXPECT_NEAR(c[i].p, expected[i], 1e-7 + 1e-6 * expected[i]) << "id " << i;
    total += c[i].p;
  }
  EXPECT_NEAR(total, 1.0, 1e-6);
}

TEST(SamplingCandidates, SoftmaxOfLargeVocabularySumsToOne) {
  std::vector<float> logits(150000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(std::sin(0.37 * i) * 4.0);
  Candidates c;
  c.assign(logits);
  c.softmax();
  const std::vector<double> expected = softmax_reference(logits);
  double total = 0.0;
  double worst = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    total += c[i].p;
    worst = std::max(worst, std::fabs(c[i].p - expected[i]) / expected[i]);
  }
  EXPECT_NEAR(total, 1.0, 1e-5);
  EXPECT_LT(worst, 1e-5);
}

TEST(SamplingCandidates, SoftmaxGivesPlusInfinityAllTheMass) {
  Candidates c;
  c.assign(std::vector<float>{kInf, 5.0f, kInf, -kInf});
  c.softmax();
  EXPECT_EQ(c[0].p, 0.5f);
  EXPECT_EQ(c[1].p, 0.0f);
  EXPECT_EQ(c[2].p, 0.5f);
  EXPECT_EQ(c[3].p, 0.0f);
}

TEST(SamplingCandidates, AllImpossibleHasNoMass) {
  Candidates c;
  c.assign(std::vector<float>{kNaN, -kInf, kNaN});
  EXPECT_FALSE(c.has_possible());
  c.softmax();
  for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i].p, 0.0f);

  Candidates empty;
  empty.assign({});
  EXPECT_FALSE(empty.has_possible());
  empty.softmax();
  EXPECT_TRUE(empty.empty());
}

TEST(SamplingCandidates, RanksBeforeIsLogitDescendingThenLowerId) {
  EXPECT_TRUE(ranks_before({3, 2.0f, 0}, {1, 1.0f, 0}));
  EXPECT_FALSE(ranks_before({1, 1.0f, 0}, {3, 2.0f, 0}));
  EXPECT_TRUE(ranks_before({1, 2.0f, 0}, {3, 2.0f, 0}));
  EXPECT_FALSE(ranks_before({3, 2.0f, 0}, {1, 2.0f, 0}));
  EXPECT_FALSE(ranks_before({1, 2.0f, 0}, {1, 2.0f, 0}));  // irreflexive
  // NaN ranks as -inf: below any number, and the order stays strict (ties between NaNs go by id).
  EXPECT_TRUE(ranks_before({9, -1e30f, 0}, {0, kNaN, 0}));
  EXPECT_TRUE(ranks_before({0, kNaN, 0}, {1, kNaN, 0}));
  EXPECT_FALSE(ranks_before({1, kNaN, 0}, {0, kNaN, 0}));
}

TEST(SamplingCandidates, KeepBestEqualsPrefixOfFullSort) {
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(static_cast<int>((i * 7919) % 97) - 40);
  // Reference: indices sorted by (logit desc, id asc) with a stable sort of an id-ordered list.
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });

  for (size_t k : {1u, 5u, 40u, 97u, 999u, 1000u, 5000u}) {
    Candidates c;
    c.assign(logits);
    c.keep_best(k);
    ASSERT_EQ(c.size(), std::min(k, logits.size()));
    EXPECT_TRUE(c.sorted());
    for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i].id, order[i]) << "k " << k << " rank " << i;
  }
}

TEST(SamplingCandidates, KeepIfPreservesOrderAndMutationClearsSorted) {
  Candidates c;
  c.assign(std::vector<float>{0.0f, 4.0f, 2.0f, 3.0f, 1.0f});
  c.sort_descending();
  c.keep_if([](const Candidate& x) { return x.id % 2 == 1; });
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].id, 1);
  EXPECT_EQ(c[1].id, 3);
  EXPECT_TRUE(c.sorted());
  EXPECT_FALSE(c.in_id_order());
  c.mutable_items()[0].logit = -5.0f;
  EXPECT_FALSE(c.sorted());
}

}  // namespace
}  // namespace infertune
