// The JSON document parses and carries the report's key fields; the text names the rule and the margin.
#include <gtest/gtest.h>

#include "recommend_test_data.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

RecommendationReport two_configurations() {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  record(store, sweep, {trial_config(1, 1, batched_workload(1)), batched_metrics(20, 50, 10)});
  record(store, sweep, {trial_config(2, 4, batched_workload(4)), batched_metrics(60, 80, 13)});
  auto r = recommend_sweep(store, sweep, no_store_options());
  EXPECT_TRUE(r) << r.error().message;
  return *r;
}

TEST(RecommendJson, RoundTripsTheKeyFields) {
  const RecommendationReport report = two_configurations();
  // By hand: reply times 50 + 63 x 10 = 680 and 80 + 63 x 13 = 899; mixed admits up to 850, so only np1.
  ASSERT_EQ(report.scenarios.size(), 3u);
  EXPECT_FALSE(report.scenarios[2].margin.has_value());
  EXPECT_TRUE(report.scenarios[0].margin.has_value());
  const nlohmann::json doc = nlohmann::json::parse(recommendation_json(report).dump(2));
  EXPECT_EQ(doc["format"], "infertune-recommendation");
  EXPECT_EQ(doc["sweep_id"], report.sweep_id);
  EXPECT_EQ(doc["trials"]["ok"], 2);
  ASSERT_EQ(doc["scenarios"].size(), 3u);
  for (const ScenarioRecommendation& s : report.scenarios) {
    const nlohmann::json& j = doc["scenarios"][std::string(to_string(s.scenario))];
    ASSERT_TRUE(s.winner);
    const Candidate& winner = report.candidates[*s.winner];
    EXPECT_EQ(j["winner"]["config"], winner.config);
    EXPECT_EQ(j["winner"]["config"]["threads"], winner.config["threads"]);
    EXPECT_EQ(j["trial_id"], *s.trial_id);
    EXPECT_DOUBLE_EQ(j["winner_score"]["value"].get<double>(), s.winner_score->value);
    if (s.margin) {
      EXPECT_DOUBLE_EQ(j["margin"]["percent"].get<double>(), s.margin->percent);
      EXPECT_EQ(j["margin"]["within_noise"], *s.margin->within_noise);
      EXPECT_EQ(j["runner_up"]["candidate"], *s.runner_up);
    } else {
      EXPECT_TRUE(j["margin"].is_null());
      EXPECT_TRUE(j["runner_up"].is_null());
    }
    EXPECT_EQ(j["commands"]["infertune"], s.commands.infertune);
    EXPECT_EQ(j["commands"]["llama_cpp"], s.commands.llama_cpp);
    EXPECT_EQ(j["rule"], s.rule);
    EXPECT_EQ(j["basis"]["description"], s.basis->description);
  }
  EXPECT_EQ(doc["pareto_front"].size(), report.pareto_front.size());
  EXPECT_EQ(doc["candidates"].size(), report.candidates.size());
}

TEST(RecommendJson, TextShowsRuleMarginAndCommands) {
  const RecommendationReport report = two_configurations();
  const std::string text = format_recommendation_text(report);
  for (const ScenarioRecommendation& s : report.scenarios) {
    EXPECT_NE(text.find(s.rule), std::string::npos) << s.rule << "\n" << text;
    const std::string margin = s.margin ? s.margin->text() : "no runner-up";
    EXPECT_NE(text.find(margin), std::string::npos) << margin << "\n" << text;
    EXPECT_NE(text.find(s.commands.infertune), std::string::npos) << text;
    EXPECT_NE(text.find(s.commands.llama_cpp), std::string::npos) << text;
  }
  EXPECT_NE(text.find("Pareto front"), std::string::npos) << text;
  EXPECT_NE(text.find("within noise when"), std::string::npos) << text;
}

}  // namespace
}  // namespace infertune
