// A planned trial's config read back by the executor, and the trial settings' JSON: the planner's own
// configs parse, and every bad field gives an error that names it.
#include <gtest/gtest.h>

#include "sweeps/plan/trial_plan.h"
#include "sweeps/trial/trial_config.h"
#include "sweeps/trial/trial_executor.h"

namespace infertune {
namespace {

nlohmann::json good_config() {
  return {{"model", "m.gguf"},
          {"quant", ""},
          {"n_gpu_layers", 0},
          {"mmap", true},
          {"threads", 2},
          {"threads_batch", 0},
          {"numa", "none"},
          {"cpu_mask", "0x0"},
          {"n_ctx", 64},
          {"n_batch", 32},
          {"n_ubatch", 16},
          {"n_parallel", 1},
          {"type_k", "f16"},
          {"type_v", "q8_0"},
          {"flash_attn", "off"},
          {"workload", {{"kind", "pp+tg"}, {"n_prompt", 16}, {"n_gen", 8}, {"depth", 4}, {"n_parallel", 1}}}};
}

// The error message of parsing `config`, or "" when it parses.
std::string error_of(const nlohmann::json& config) {
  auto parsed = parse_trial_config(config);
  return parsed ? std::string() : parsed.error().message;
}

TEST(TrialConfig, ReadsEveryField) {
  auto c = parse_trial_config(good_config());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->placement.threads, 2);
  EXPECT_EQ(c->placement.threads_batch, kAutoThreads);
  EXPECT_EQ(c->placement.numa, NumaMode::none);
  EXPECT_EQ(c->placement.cpu_mask, "");
  EXPECT_EQ(c->n_ctx, 64u);
  EXPECT_EQ(c->n_batch, 32u);
  EXPECT_EQ(c->n_ubatch, 16u);
  EXPECT_EQ(c->type_k, GgmlType::F16);
  EXPECT_EQ(c->type_v, GgmlType::Q8_0);
  EXPECT_EQ(c->flash_attn, FlashAttention::Off);
  EXPECT_EQ(c->workload.kind, WorkloadKind::PromptGenerate);
  EXPECT_EQ(c->workload.n_prompt, 16);
  EXPECT_EQ(c->workload.n_gen, 8);
  EXPECT_EQ(c->workload.depth, 4);
}

TEST(TrialConfig, ParsesEveryConfigThePlannerWrites) {
  SweepSpec spec;
  spec.models = {"m.gguf"};
  spec.threads = {0, 1};
  spec.numa = {"none", "distribute"};
  spec.cache_type_k = {"f16", "q4_0"};
  spec.flash_attn = {"on", "auto"};
  spec.workloads = {{.kind = WorkloadKind::Prompt, .n_prompt = 32, .depth = 16},
                    {.kind = WorkloadKind::Generate, .n_gen = 8},
                    {.kind = WorkloadKind::PromptGenerate, .n_prompt = 8, .n_gen = 8},
                    {.kind = WorkloadKind::Batched, .n_prompt = 8, .n_gen = 4, .n_parallel = 4}};
  ModelShape shape;
  ModelConfig& m = shape.config;
  m.n_layers = 2;
  m.n_embd = 64;
  m.n_head = m.n_head_kv = 2;
  m.head_dim = m.head_dim_v = 32;
  m.n_ff = 128;
  m.n_vocab = 300;
  shape.tensor_bytes = shape.file_bytes = 1 << 20;
  auto plan = plan_sweep(spec, [&](const std::string&, const std::string&) -> Result<ModelShape> { return shape; });
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->trials.size(), 2u * 2 * 2 * 2 * 4);
  for (const PlannedTrial& t : plan->trials) {
    auto c = parse_trial_config(t.config);
    ASSERT_TRUE(c) << t.config.dump() << ": " << c.error().message;
    EXPECT_EQ(c->workload.name(), t.workload);
    if (c->workload.kind == WorkloadKind::Batched) {
      EXPECT_EQ(c->n_parallel, 4u);
    }
  }
}

TEST(TrialConfig, BadFieldsAreNamed) {
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> cases = {
      {"'threads'", [](auto& c) { c.erase("threads"); }},
      {"'threads'", [](auto& c) { c["threads"] = "two"; }},
      {"'threads_batch'", [](auto& c) { c["threads_batch"] = -3; }},
      {"'numa'", [](auto& c) { c["numa"] = "spread"; }},
      {"'n_ctx'", [](auto& c) { c["n_ctx"] = 0; }},
      {"'n_batch'", [](auto& c) { c["n_batch"] = 1.5; }},
      {"'n_ubatch'", [](auto& c) { c["n_ubatch"] = 64; }},  // above n_batch 32
      {"'n_parallel'", [](auto& c) { c["n_parallel"] = 1000; }},
      {"'type_k'", [](auto& c) { c["type_k"] = "q5_9"; }},
      {"'type_v'", [](auto& c) { c["type_v"] = 8; }},
      {"'flash_attn'", [](auto& c) { c["flash_attn"] = "maybe"; }},
      {"'n_gpu_layers'", [](auto& c) { c["n_gpu_layers"] = "all"; }},
      {"'workload'", [](auto& c) { c.erase("workload"); }},
      {"'workload.kind'", [](auto& c) { c["workload"]["kind"] = "chat"; }},
      {"'workload.n_gen'", [](auto& c) { c["workload"]["n_gen"] = 0; }},
      {"'workload.n_prompt'", [](auto& c) { c["workload"]["n_prompt"] = -1; }},
      {"'workload.depth'", [](auto& c) { c["workload"].erase("depth"); }},
      {"'workload.depth'",
       [](auto& c) {
         c["workload"] = {{"kind", "batched"}, {"n_prompt", 4}, {"n_gen", 4}, {"depth", 8}, {"n_parallel", 1}};
       }},
      {"'n_parallel'",
       [](auto& c) {
         c["workload"] = {{"kind", "batched"}, {"n_prompt", 4}, {"n_gen", 4}, {"depth", 0}, {"n_parallel", 4}};
       }},
  };
  for (const auto& [field, spoil] : cases) {
    nlohmann::json c = good_config();
    spoil(c);
    const std::string error = error_of(c);
    EXPECT_NE(error.find(field), std::string::npos) << c.dump() << " -> '" << error << "'";
  }
  EXPECT_EQ(error_of(good_config()), "");
}

TEST(TrialSettings, RoundTripsThroughJson) {
  TrialSettings s{.warmup = false, .min_reps = 2, .max_reps = 7, .ci_target = 0.05, .cooldown_s = 1.5};
  auto back = TrialSettings::from_json(s.to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->warmup, false);
  EXPECT_EQ(back->min_reps, 2);
  EXPECT_EQ(back->max_reps, 7);
  EXPECT_DOUBLE_EQ(back->ci_target, 0.05);
  EXPECT_DOUBLE_EQ(back->cooldown_s, 1.5);
  auto defaults = TrialSettings::from_json(nlohmann::json::object());
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->min_reps, TrialSettings{}.min_reps);
}

TEST(TrialSettings, BadKeysAreNamed) {
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"min_reps", 0}}, "'min_reps'"},
      {{{"max_reps", "ten"}}, "'max_reps'"},
      {{{"min_reps", 5}, {"max_reps", 3}}, "'max_reps'"},
      {{{"ci_target", -0.1}}, "'ci_target'"},
      {{{"cooldown_s", "1s"}}, "'cooldown_s'"},
      {{{"warmup", 1}}, "'warmup'"},
      {{{"repetitions", 5}}, "'repetitions'"},
  };
  for (const auto& [j, key] : cases) {
    auto s = TrialSettings::from_json(j);
    ASSERT_FALSE(s) << j.dump();
    EXPECT_NE(s.error().message.find(key), std::string::npos) << s.error().message;
  }
}

}  // namespace
}  // namespace infertune
