// Quality budgets in recommend: each candidate carries its variant's perplexity and KL divergence against the
// sweep's base; --max-quality-loss and --max-kld drop the variants beyond the budget (saying which and why) and
// keep those within it; variants of a synthetic base have no figures, and the budget is not applied to them.
#include <gtest/gtest.h>

#include <string>

#include "quality_test_data.h"
#include "sweeps/recommend/candidates.h"
#include "sweeps/recommend/recommend.h"
#include "test_support.h"

namespace infertune {
namespace {

using test::make_quality_sweep;
using test::QualitySweep;

const Candidate* candidate_of(const RecommendationReport& r, const std::string& quant) {
  for (const Candidate& c : r.candidates)
    if (config_text(c.config, "quant") == quant) return &c;
  return nullptr;
}

std::string throughput_winner(const RecommendationReport& r) {
  for (const ScenarioRecommendation& s : r.scenarios) {
    if (s.scenario == Scenario::throughput && s.winner) return config_text(r.candidates[*s.winner].config, "quant");
  }
  return "";
}

RecommendationReport recommend(const QualitySweep& s, RecommendOptions options) {
  auto store = ResultsStore::open_read_only(s.path);
  EXPECT_TRUE(store) << store.error().message;
  options.store_recommendations = false;
  auto report = recommend_sweep(*store, s.sweep, options);
  EXPECT_TRUE(report) << report.error().message;
  return std::move(*report);
}

TEST(RecommendQuality, WithoutABudgetEveryCandidateShowsItsFigures) {
  const QualitySweep s = make_quality_sweep(false);
  const RecommendationReport r = recommend(s, {});
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_TRUE(r.has_quality());
  EXPECT_EQ(throughput_winner(r), "q4_0");
  const Candidate* q4 = candidate_of(r, "q4_0");
  ASSERT_TRUE(q4 && q4->quality);
  EXPECT_NEAR(*q4->quality->ppl_increase_pct(), 4.0, 1e-9);
  EXPECT_TRUE(q4->excluded_reason.empty());
  const std::string text = format_recommendation_text(r);
  EXPECT_NE(text.find("PPL vs base"), std::string::npos) << text;
  EXPECT_NE(text.find("+4.00%"), std::string::npos) << text;
  EXPECT_NE(text.find("0.03000"), std::string::npos) << text;
  EXPECT_NE(text.find("Quality against the base model"), std::string::npos) << text;
  const nlohmann::json json = recommendation_json(r);
  bool seen = false;
  for (const auto& c : json["candidates"]) {
    if (c["config"]["quant"] != "q4_0") continue;
    seen = true;
    EXPECT_EQ(c["quality"]["status"], "measured");
    EXPECT_NEAR(c["quality"]["ppl_increase_pct"].get<double>(), 4.0, 1e-9);
    EXPECT_EQ(c["quality"]["kld_mean"], 0.03);
  }
  EXPECT_TRUE(seen) << json.dump(2);
}

TEST(RecommendQuality, MaxQualityLossDropsTheVariantBeyondItAndKeepsTheOneWithin) {
  const QualitySweep s = make_quality_sweep(false);
  RecommendOptions options;
  options.max_quality_loss_pct = 1.0;
  const RecommendationReport r = recommend(s, options);
  const Candidate* q4 = candidate_of(r, "q4_0");
  const Candidate* q8 = candidate_of(r, "q8_0");
  ASSERT_TRUE(q4 && q8);
  EXPECT_NE(q4->excluded_reason.find("perplexity +4.00% over the base exceeds --max-quality-loss 1%"),
            std::string::npos)
      << q4->excluded_reason;
  EXPECT_TRUE(q8->excluded_reason.empty()) << q8->excluded_reason;
  EXPECT_EQ(throughput_winner(r), "q8_0");
  const std::string text = format_recommendation_text(r);
  EXPECT_NE(text.find("--max-quality-loss 1%"), std::string::npos) << text;
  EXPECT_NE(text.find("Excluded (1)"), std::string::npos) << text;
  EXPECT_EQ(recommendation_json(r)["constraints"]["max_quality_loss_pct"], 1.0);
}

TEST(RecommendQuality, MaxKldDropsTheVariantBeyondIt) {
  const QualitySweep s = make_quality_sweep(false);
  RecommendOptions options;
  options.max_kld = 0.01;
  const RecommendationReport r = recommend(s, options);
  EXPECT_NE(candidate_of(r, "q4_0")->excluded_reason.find("exceeds --max-kld 0.01"), std::string::npos);
  EXPECT_TRUE(candidate_of(r, "q8_0")->excluded_reason.empty());
  EXPECT_EQ(throughput_winner(r), "q8_0");
  options.max_kld = 0.05;  // both within
  EXPECT_EQ(throughput_winner(recommend(s, options)), "q4_0");
}

TEST(RecommendQuality, ASyntheticBaseIsNotJudgedAndTheReportSaysWhy) {
  const QualitySweep s = make_quality_sweep(true);
  RecommendOptions options;
  options.max_quality_loss_pct = 1.0;
  const RecommendationReport r = recommend(s, options);
  for (const Candidate& c : r.candidates) {
    EXPECT_TRUE(c.excluded_reason.empty()) << c.excluded_reason;
    EXPECT_NE(c.quality_note.find("quality budget not applied"), std::string::npos) << c.quality_note;
    EXPECT_NE(c.quality_note.find("synthetic"), std::string::npos) << c.quality_note;
  }
  EXPECT_EQ(throughput_winner(r), "q4_0");
  ASSERT_EQ(r.quality_notes.size(), 1u);
  EXPECT_NE(r.quality_notes[0].find("--max-quality-loss 1% not applied to 2 configurations"), std::string::npos)
      << r.quality_notes[0];
  const std::string text = format_recommendation_text(r);
  EXPECT_NE(text.find("random weights"), std::string::npos) << text;
}

TEST(RecommendQuality, CommandLineTakesTheBudgets) {
  const QualitySweep s = make_quality_sweep(false);
  const std::string db = s.path.string();
  auto r = test::run_command(test::infertune_binary() + " recommend --db " + db + " --max-quality-loss 1% 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("exceeds --max-quality-loss 1%"), std::string::npos) << r.output;
  r = test::run_command(test::infertune_binary() + " recommend --db " + db + " --max-quality-loss 2% -o json 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"ppl_increase_pct\""), std::string::npos) << r.output;
  r = test::run_command(test::infertune_binary() + " recommend --db " + db + " --max-quality-loss lots 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--max-quality-loss 'lots'"), std::string::npos) << r.output;
  r = test::run_command(test::infertune_binary() + " recommend --db " + db + " --max-kld -1 2>&1");
  EXPECT_NE(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace infertune
