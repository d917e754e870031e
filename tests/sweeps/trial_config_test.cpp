// A planned trial's config read back by the executor, and the trial settings' JSON: the planner's own
// configs parse, and every bad field gives an error that names it.
#include <gtest/gtest.h>

#include "sweeps/plan/trial_plan.h"
#include "sweeps/spec/config_fields.h"
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
  const PlacementOptions& p = c->settings.placement;
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.threads_batch, kAutoThreads);
  EXPECT_EQ(p.numa, NumaMode::none);
  EXPECT_EQ(p.cpu_mask, "");
  const ContextParams& x = c->settings.context;
  EXPECT_EQ(x.n_ctx, 64u);
  EXPECT_EQ(x.n_batch, 32u);
  EXPECT_EQ(x.n_ubatch, 16u);
  EXPECT_EQ(x.n_seq_max, 1u);
  EXPECT_EQ(x.type_k, GgmlType::F16);
  EXPECT_EQ(x.type_v, GgmlType::Q8_0);
  EXPECT_EQ(x.flash_attn, FlashAttention::Off);
  EXPECT_EQ(c->settings.n_gpu_layers, 0);
  EXPECT_TRUE(c->settings.use_mmap);
  EXPECT_EQ(c->workload.kind, WorkloadKind::PromptGenerate);
  EXPECT_EQ(c->workload.n_prompt, 16);
  EXPECT_EQ(c->workload.n_gen, 8);
  EXPECT_EQ(c->workload.depth, 4);
}

TEST(TrialConfig, ParsesEveryConfigThePlannerWrites) {
  SweepSpec spec;
  spec.models = {"m.gguf"};
  spec.settings["threads"] = {"0", "1"};
  spec.settings["numa"] = {"none", "distribute"};
  spec.settings["cache_type_k"] = {"f16", "q4_0"};
  spec.settings["flash_attn"] = {"on", "auto"};
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
      EXPECT_EQ(c->settings.context.n_seq_max, 4u);
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
      {"'n_gpu_layers'", [](auto& c) { c.erase("n_gpu_layers"); }},  // the planner writes every setting's field
      {"'mmap'", [](auto& c) { c["mmap"] = 1; }},
      {"'cpu_mask'", [](auto& c) { c["cpu_mask"] = "0xZZ"; }},
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

TEST(TrialConfig, ErrorsSayWhatIsAllowed) {
  nlohmann::json c = good_config();
  c["n_parallel"] = 1000;
  EXPECT_EQ(error_of(c), "config field 'n_parallel': 1000 is out of range; allowed: 1..256");
  c = good_config();
  c["n_batch"] = 1.5;
  EXPECT_EQ(error_of(c), "config field 'n_batch': expected an integer, got 1.5");
  c = good_config();
  c["n_ubatch"] = 64;
  EXPECT_EQ(error_of(c), "config field 'n_ubatch': 64 is above n_batch 32 (the engine splits a batch into ubatches)");
}

// The setting fields are written and read by the settings table: what is read writes back the same fields.
TEST(TrialConfig, SettingFieldsRoundTrip) {
  nlohmann::json c = good_config();
  c["cpu_mask"] = "0x3";
  c["numa"] = "distribute";
  c["mmap"] = false;
  c["n_gpu_layers"] = -1;
  auto parsed = parse_trial_config(c);
  ASSERT_TRUE(parsed) << parsed.error().message;
  const nlohmann::json fields = config_fields(parsed->settings);
  for (const auto& [key, value] : fields.items()) EXPECT_EQ(value, c[key]) << key;
  c.erase("model");
  c.erase("quant");
  c.erase("workload");
  EXPECT_EQ(fields, c) << "every setting field, nothing else";
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
