// The Pareto front over (throughput up, reply time down, peak RSS down, and for measured quantization variants
// KL divergence down) against a brute-force check of its definition on many random candidate sets with ties,
// and on hand examples.
#include <gtest/gtest.h>

#include <random>

#include "sweeps/recommend/pareto_front.h"

namespace infertune {
namespace {

Candidate point(double tps, double latency, int64_t rss) {
  Candidate c;
  c.throughput_tps = Estimate{tps, std::nullopt};
  c.latency_ms = Estimate{latency, std::nullopt};
  c.peak_rss_bytes = rss;
  return c;
}

Candidate variant(double tps, double latency, int64_t rss, double kld) {
  Candidate c = point(tps, latency, rss);
  c.quality = VariantQualityRecord{};
  c.quality->status = QualityStatus::measured;
  c.quality->kld_mean = kld;
  return c;
}

// Written from the definition, independently of pareto_front.cpp: i is on the front unless some j is at
// least as good on every objective and strictly better on one.
std::vector<size_t> brute_force_front(const std::vector<Candidate>& cs) {
  std::vector<size_t> front;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].excluded_reason.empty()) continue;
    const double ti = cs[i].throughput_tps->value, li = cs[i].latency_ms->value;
    const int64_t mi = *cs[i].peak_rss_bytes;
    const bool qi = cs[i].quality.has_value();
    bool beaten = false;
    for (size_t j = 0; j < cs.size(); ++j) {
      if (!cs[j].excluded_reason.empty()) continue;
      if (cs[j].quality.has_value() != qi) continue;  // quality known on one side only: incomparable
      const double tj = cs[j].throughput_tps->value, lj = cs[j].latency_ms->value;
      const int64_t mj = *cs[j].peak_rss_bytes;
      int better = (tj > ti) + (lj < li) + (mj < mi);
      int worse = (tj < ti) + (lj > li) + (mj > mi);
      if (qi) {
        better += *cs[j].quality->kld_mean < *cs[i].quality->kld_mean;
        worse += *cs[j].quality->kld_mean > *cs[i].quality->kld_mean;
      }
      if (better > 0 && worse == 0) beaten = true;
    }
    if (!beaten) front.push_back(i);
  }
  return front;
}

TEST(RecommendPareto, HandExample) {
  std::vector<Candidate> cs{point(100, 50, 4000),  // fast and big: on the front
                            point(60, 40, 2000),   // on: lowest latency
                            point(50, 45, 2000),   // beaten by the second on every count
                            point(10, 90, 1000),   // on: smallest
                            point(60, 40, 2000)};  // a tie with the second: neither beats the other
  EXPECT_EQ(pareto_front(cs), (std::vector<size_t>{0, 1, 3, 4}));
}

TEST(RecommendPareto, MatchesBruteForceOnRandomSets) {
  std::mt19937 rng(20250601);
  std::uniform_int_distribution<int> small(1, 5);  // few values: many ties
  for (int round = 0; round < 300; ++round) {
    std::vector<Candidate> cs;
    const int n = 1 + round % 12;
    for (int i = 0; i < n; ++i) {
      const int quality = small(rng);  // 1..5: a fifth of the candidates have no quality figures
      if (quality == 1) {
        cs.push_back(point(small(rng) * 10.0, small(rng) * 3.0, small(rng) * 100));
      } else {
        cs.push_back(variant(small(rng) * 10.0, small(rng) * 3.0, small(rng) * 100, quality * 0.01));
      }
      if (small(rng) == 1) cs.back().excluded_reason = "excluded";
    }
    ASSERT_EQ(pareto_front(cs), brute_force_front(cs)) << "round " << round;
  }
}

TEST(RecommendPareto, QualityKeepsASlowerButBetterVariant) {
  std::vector<Candidate> cs{variant(100, 50, 4000, 0.08),  // q4_0: fast, lossy
                            variant(80, 60, 5000, 0.01),   // q8_0: slower and bigger, but closer to the base
                            variant(70, 60, 5000, 0.02),   // worse than q8_0 on everything
                            point(200, 10, 1000)};         // a model file of unknown quality: beats no variant
  EXPECT_EQ(pareto_front(cs), (std::vector<size_t>{0, 1, 3}));
  // Without the quality figures, q4_0 would beat the other two variants.
  for (Candidate& c : cs) c.quality.reset();
  EXPECT_EQ(pareto_front(cs), (std::vector<size_t>{3}));
}

TEST(RecommendPareto, UnmeasuredQualityIsUnknown) {
  std::vector<Candidate> cs{variant(100, 50, 4000, 0.08), variant(200, 10, 1000, 0.01)};
  cs[1].quality->status = QualityStatus::not_meaningful;  // a synthetic variant: no figures to compare
  cs[1].quality->kld_mean.reset();
  EXPECT_EQ(pareto_front(cs), (std::vector<size_t>{0, 1}));
}

TEST(RecommendPareto, CandidatesMissingAnObjectiveAreNotOnIt) {
  std::vector<Candidate> cs{point(100, 50, 4000), point(200, 10, 100)};
  cs[1].latency_ms.reset();
  EXPECT_EQ(pareto_front(cs), (std::vector<size_t>{0}));
}

}  // namespace
}  // namespace infertune
