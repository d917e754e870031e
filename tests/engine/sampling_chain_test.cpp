// SamplerChain end to end on fixed logits: seeded reproducibility, the sampled frequencies against the
// distribution the settings imply (chi-square), NaN/empty input, from_spec parsing, describe(), and
// validate()'s range checks.
#include "engine/sampling/sampler_chain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace infertune {
namespace {

using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// All filters off, temperature 1: the chain must sample softmax(logits) itself.
SamplingParams plain(uint64_t seed) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

std::vector<float> wavy_logits(size_t n) {
  std::vector<float> logits(n);
  for (size_t i = 0; i < n; ++i) logits[i] = static_cast<float>(2.0 * std::sin(1.3 * static_cast<double>(i)));
  return logits;
}

std::vector<int32_t> run(SamplerChain& chain, const std::vector<float>& logits, int steps) {
  std::vector<int32_t> tokens;
  for (int i = 0; i < steps; ++i) {
    tokens.push_back(chain.sample(logits));
    chain.accept(tokens.back());
  }
  return tokens;
}

// --- reproducibility ---

TEST(SamplingChain, SameSeedSameSequenceDifferentSeedDifferent) {
  const std::vector<float> logits = wavy_logits(64);
  SamplingParams params;
  params.repeat_penalty = 1.1f;  // history matters, so accept() is part of what must replay
  params.seed = 42;
  SamplerChain a(params);
  SamplerChain b(params);
  params.seed = 43;
  SamplerChain c(params);
  const std::vector<int32_t> run_a = run(a, logits, 1000);
  const std::vector<int32_t> run_b = run(b, logits, 1000);
  const std::vector<int32_t> run_c = run(c, logits, 1000);
  EXPECT_EQ(run_a, run_b);
  int differing = 0;
  for (size_t i = 0; i < run_a.size(); ++i) differing += run_a[i] != run_c[i];
  EXPECT_GT(differing, 300);
  for (int32_t token : run_a) ASSERT_TRUE(token >= 0 && token < 64);

  a.reset();
  EXPECT_EQ(run(a, logits, 1000), run_a);
}

TEST(SamplingChain, RandomSeedIsDrawnShownAndReproducible) {
  const std::vector<float> logits = wavy_logits(32);
  SamplingParams params;
  params.seed = kRandomSeed;
  SamplerChain random(params);
  EXPECT_NE(random.seed(), kRandomSeed);
  EXPECT_THAT(random.describe(), HasSubstr(fmt::format("dist(seed {})", random.seed())));
  params.seed = random.seed();
  SamplerChain replay(params);
  EXPECT_EQ(run(random, logits, 200), run(replay, logits, 200));
}

// --- distribution correctness ---

// Pearson's chi-square statistic of observed counts against expected probabilities (zero-probability
// entries must not be observed at all).
double chi_square(const std::vector<int>& counts, const std::vector<double>& expected, int n) {
  double statistic = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] == 0.0) {
      EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0";
      continue;
    }
    const double e = expected[i] * n;
    statistic += (counts[i] - e) * (counts[i] - e) / e;
  }
  return statistic;
}

std::vector<int> histogram(SamplerChain& chain, const std::vector<float>& logits, int n) {
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < n; ++i) {
    const int32_t token = chain.sample(logits);
    EXPECT_TRUE(token >= 0 && static_cast<size_t>(token) < logits.size());
    if (token >= 0 && static_cast<size_t>(token) < logits.size()) ++counts[token];
  }
  return counts;
}

std::vector<double> normalized(std::vector<double> weights) {
  double sum = 0.0;
  for (double w : weights) sum += w;
  for (double& w : weights) w /= sum;
  return weights;
}

const std::vector<double> kProbabilities{0.5, 0.25, 0.125, 0.0625, 0.0625};

std::vector<float> log_of(const std::vector<double>& p) {
  std::vector<float> logits;
  for (double v : p) logits.push_back(static_cast<float>(std::log(v)));
  return logits;
}

// 99.9% quantiles of chi-square with 2 and 4 degrees of freedom: with the fixed seeds the tests are
// deterministic, and a sampler off by even a percent of the mass at n = 200k exceeds them many times over.
constexpr double kChi2Dof2 = 13.82;
constexpr double kChi2Dof4 = 18.47;
constexpr int kDraws = 200000;

TEST(SamplingChainDistribution, PlainSoftmax) {
  SamplerChain chain(plain(1234));
  const std::vector<int> counts = histogram(chain, log_of(kProbabilities), kDraws);
  EXPECT_LT(chi_square(counts, kProbabilities, kDraws), kChi2Dof4);
}

TEST(SamplingChainDistribution, TemperatureHalfSquaresProbabilities) {
  SamplingParams params = plain(99);
  params.temperature = 0.5f;
  SamplerChain chain(params);
  std::vector<double> expected;
  for (double p : kProbabilities) expected.push_back(p * p);
  const std::vector<int> counts = histogram(chain, log_of(kProbabilities), kDraws);
  EXPECT_LT(chi_square(counts, normalized(expected), kDraws), kChi2Dof4);
}

TEST(SamplingChainDistribution, TopKRenormalizesTheSurvivors) {
  SamplingParams params = plain(7);
  params.top_k = 3;
  SamplerChain chain(params);
  const std::vector<int> counts = histogram(chain, log_of(kProbabilities), kDraws);
  EXPECT_LT(chi_square(counts, normalized({0.5, 0.25, 0.125, 0.0, 0.0}), kDraws), kChi2Dof2);
}

TEST(SamplingChainDistribution, DefaultChain) {
  // Defaults: top_p 0.95 keeps all five (cumulative 0.9375 < 0.95 after four), min_p 0.05 keeps all
  // (0.0625 >= 0.025), temperature 0.8 raises each p to the power 1 / 0.8.
  SamplingParams params;
  params.seed = 2024;
  SamplerChain chain(params);
  std::vector<double> expected;
  for (double p : kProbabilities) expected.push_back(std::pow(p, 1.0 / 0.8));
  const std::vector<int> counts = histogram(chain, log_of(kProbabilities), kDraws);
  EXPECT_LT(chi_square(counts, normalized(expected), kDraws), kChi2Dof4);
}

// --- greedy, NaN, empty ---

TEST(SamplingChain, GreedyWhenTemperatureIsNotPositive) {
  for (float t : {0.0f, -1.0f}) {
    SamplingParams params;
    params.temperature = t;
    params.repeat_penalty = 2.0f;
    params.seed = 5;
    SamplerChain chain(params);
    EXPECT_EQ(chain.describe(), "penalties(2.00,64) -> greedy");
    const std::vector<float> logits{1.0f, 3.0f, 2.9f, 3.0f};
    EXPECT_EQ(chain.sample(logits), 1);  // tie with 3 goes to the lower id
    chain.accept(1);
    EXPECT_EQ(chain.sample(logits), 3);  // 1 penalized to 1.5
    chain.accept(3);
    EXPECT_EQ(chain.sample(logits), 2);
  }
}

TEST(SamplingChain, NanIsNeverSampled) {
  std::vector<float> logits = wavy_logits(16);
  for (size_t i = 0; i < logits.size(); i += 3) logits[i] = kNaN;
  SamplerChain chain(plain(11));
  for (int i = 0; i < 2000; ++i) {
    const int32_t token = chain.sample(logits);
    ASSERT_TRUE(token >= 0 && token < 16);
    ASSERT_NE(token % 3, 0) << "sampled a NaN logit";
  }
}

TEST(SamplingChain, NothingToChooseFromIsReported) {
  for (const SamplingParams& params : {plain(1), SamplingParams{.temperature = 0.0f}}) {
    SamplerChain chain(params);
    EXPECT_EQ(chain.sample(std::vector<float>{kNaN, kNaN, kNaN}), kNoToken);
    EXPECT_EQ(chain.sample(std::vector<float>{}), kNoToken);
    Result<int32_t> all_nan = chain.try_sample(std::vector<float>{kNaN, -INFINITY});
    ASSERT_FALSE(all_nan.ok());
    EXPECT_THAT(all_nan.error().message, HasSubstr("NaN or -inf"));
    Result<int32_t> empty = chain.try_sample(std::vector<float>{});
    ASSERT_FALSE(empty.ok());
    EXPECT_THAT(empty.error().message, HasSubstr("empty"));
    Result<int32_t> fine = chain.try_sample(std::vector<float>{kNaN, 1.0f});
    ASSERT_TRUE(fine.ok());
    EXPECT_EQ(*fine, 1);
  }
}

// --- from_spec ---

TEST(SamplingChainSpec, DefaultOrderMatchesConstructor) {
  SamplingParams params;
  params.seed = 42;
  params.repeat_penalty = 1.1f;
  Result<SamplerChain> spec = SamplerChain::from_spec(params, "penalties,top_k,top_p,min_p,temperature,dist");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const std::string expected =
      "penalties(1.10,64) -> top_k(40) -> top_p(0.95) -> min_p(0.05) -> temperature(0.80) -> dist(seed 42)";
  EXPECT_EQ(spec->describe(), expected);
  EXPECT_EQ(SamplerChain(params).describe(), expected);
  const std::vector<float> logits = wavy_logits(50);
  SamplerChain direct(params);
  EXPECT_EQ(run(*spec, logits, 300), run(direct, logits, 300));
}

TEST(SamplingChainSpec, SeparatorsSpacesAliasesAndImpliedSelection) {
  SamplingParams params;
  params.seed = 3;
  Result<SamplerChain> chain = SamplerChain::from_spec(params, " temp ; top_k, min_p ");
  ASSERT_TRUE(chain.ok()) << chain.error().message;
  EXPECT_EQ(chain->describe(), "temperature(0.80) -> top_k(40) -> min_p(0.05) -> dist(seed 3)");

  params.temperature = 0.0f;
  Result<SamplerChain> greedy = SamplerChain::from_spec(params, "top_k");
  ASSERT_TRUE(greedy.ok()) << greedy.error().message;
  EXPECT_EQ(greedy->describe(), "top_k(40) -> greedy");

  Result<SamplerChain> only_dist = SamplerChain::from_spec(plain(8), "dist");
  ASSERT_TRUE(only_dist.ok());
  EXPECT_EQ(only_dist->describe(), "dist(seed 8)");
}

TEST(SamplingChainSpec, OrderChangesTheResult) {
  // Token 0 leads by a little; once seen, a repeat penalty of 2 halves it. Penalizing first lets token 1
  // win the top_k(1) cut; cutting first leaves token 0 alone, penalized or not.
  SamplingParams params;
  params.repeat_penalty = 2.0f;
  params.top_k = 1;
  const std::vector<float> logits{3.0f, 2.9f, 1.0f};
  Result<SamplerChain> penalize_first = SamplerChain::from_spec(params, "penalties,top_k,greedy");
  Result<SamplerChain> cut_first = SamplerChain::from_spec(params, "top_k,penalties,greedy");
  ASSERT_TRUE(penalize_first.ok() && cut_first.ok());
  penalize_first->accept(0);
  cut_first->accept(0);
  EXPECT_EQ(penalize_first->sample(logits), 1);
  EXPECT_EQ(cut_first->sample(logits), 0);
}

TEST(SamplingChainSpec, Errors) {
  const SamplingParams params;
  struct Case {
    std::string order;
    std::string message_part;
  };
  const std::vector<Case> cases{
      {"", "empty"},
      {"  ", "empty"},
      {"top_k,,dist", "stage 2 is empty"},
      {"top_k,", "stage 2 is empty"},
      {"top_k,top_q,dist", "unknown stage 'top_q' at position 2"},
      {"Top_K", "unknown stage 'Top_K'"},
      {"top_k,min_p,top_k", "'top_k' at position 3 is already listed"},
      {"temp,temperature", "'temperature' at position 2 is already listed"},
      {"dist,top_k", "'top_k' at position 2 follows 'dist'"},
      {"greedy,dist", "'dist' at position 2 follows 'greedy'"},
  };
  for (const Case& c : cases) {
    Result<SamplerChain> chain = SamplerChain::from_spec(params, c.order);
    ASSERT_FALSE(chain.ok()) << "'" << c.order << "'";
    EXPECT_THAT(chain.error().message, HasSubstr(c.message_part)) << "'" << c.order << "'";
  }
  SamplingParams bad;
  bad.top_p = 0.0f;
  Result<SamplerChain> invalid = SamplerChain::from_spec(bad, "top_p,dist");
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(invalid.error().message, HasSubstr("--top-p"));
  EXPECT_FALSE(SamplerChain::create(bad).ok());
  EXPECT_TRUE(SamplerChain::create(SamplingParams{}).ok());
}

// --- describe ---

TEST(SamplingChain, DescribeShowsDisabledStagesAndExactValues) {
  SamplingParams params = plain(0);
  EXPECT_EQ(SamplerChain(params).describe(),
            "penalties(off) -> top_k(off) -> top_p(off) -> min_p(off) -> temperature(1.00) -> dist(seed 0)");
  params.min_p = 0.025f;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = -0.25f;
  params.repeat_last_n = -1;
  params.top_k = 7;
  params.top_p = 0.9f;
  params.seed = 18446744073709551615ull;
  EXPECT_EQ(SamplerChain(params).describe(),
            "penalties(1.00,-1,freq 0.50,presence -0.25) -> top_k(7) -> top_p(0.90) -> min_p(0.025) -> "
            "temperature(1.00) -> dist(seed 18446744073709551615)");
}

// --- validate ---

TEST(SamplingParamsValidate, AcceptsDefaultsAndEdges) {
  EXPECT_TRUE(validate(SamplingParams{}).ok());
  SamplingParams p;
  p.temperature = -0.5f;
  p.top_p = 1.0f;
  p.min_p = 1.0f;
  p.repeat_last_n = -1;
  p.top_k = -5;
  p.frequency_penalty = -2.0f;
  EXPECT_TRUE(validate(p).ok());
  p.min_p = 0.0f;
  p.top_p = 1e-6f;
  EXPECT_TRUE(validate(p).ok());
}

TEST(SamplingParamsValidate, RejectsOutOfRangeNamingTheFlag) {
  struct Case {
    SamplingParams params;
    std::string flag;
  };
  const float nan = kNaN;
  const float inf = INFINITY;
  const std::vector<Case> cases{
      {{.temperature = nan}, "--temp"},
      {{.temperature = inf}, "--temp"},
      {{.top_p = 0.0f}, "--top-p"},
      {{.top_p = -0.1f}, "--top-p"},
      {{.top_p = 1.01f}, "--top-p"},
      {{.top_p = nan}, "--top-p"},
      {{.min_p = -0.01f}, "--min-p"},
      {{.min_p = 1.5f}, "--min-p"},
      {{.min_p = nan}, "--min-p"},
      {{.repeat_penalty = 0.0f}, "--repeat-penalty"},
      {{.repeat_penalty = -1.0f}, "--repeat-penalty"},
      {{.repeat_penalty = inf}, "--repeat-penalty"},
      {{.repeat_last_n = -2}, "--repeat-last-n"},
      {{.frequency_penalty = nan}, "--frequency-penalty"},
      {{.presence_penalty = -inf}, "--presence-penalty"},
  };
  for (const Case& c : cases) {
    Status status = validate(c.params);
    ASSERT_FALSE(status.ok()) << c.flag;
    EXPECT_THAT(status.error().message, HasSubstr(c.flag));
  }
}

}  // namespace
}  // namespace infertune
