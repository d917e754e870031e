// The Pareto front over (throughput up, reply time down, peak RSS down) against a brute-force check of its
// definition on many random candidate sets with ties, and on a hand example.
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

// Written from the definition, independently of pareto_front.cpp: i is on the front unless some j is at
// least as good on every objective and strictly better on one.
std::vector<size_t> brute_force_front(const std::vector<Candidate>& cs) {
  std::vector<size_t> front;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].excluded_reason.empty()) continue;
    const double ti = cs[i].throughput_tps->value, li = cs[i].latency_ms->value;
    const int64_t mi = *cs[i].peak_rss_bytes;
    bool beaten = false;
    for (size_t j = 0; j < cs.size(); ++j) {
      if (!cs[j].excluded_reason.empty()) continue;
      const double tj = cs[j].throughput_tps->value, lj = cs[j].latency_ms->value;
      const int64_t mj = *cs[j].peak_rss_bytes;
      const int better = (tj > ti) + (lj < li) + (mj < mi);
      const int worse = (tj < ti) + (lj > li) + (mj > mi);
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
      cs.push_back(point(small(rng) * 10.0, small(rng) * 3.0, small(rng) * 100));
      if (small(rng) == 1) cs.back().excluded_reason = "excluded";
    }
    ASSERT_EQ(pareto_front(cs), brute_force_front(cs)) << "round " << round;
  }
}

TEST(RecommendPareto, CandidatesMissingAnObjectiveAreNotOnIt) {
  std::vector<Candidate> cs{point(100, 50, 4000), point(200, 10, 100)};
  cs[1].latency_ms.reset();
  EXPECT_EQ(pareto_front(cs), (std::vector<size_t>{0}));
}

}  // namespace
}  // namespace infertune
