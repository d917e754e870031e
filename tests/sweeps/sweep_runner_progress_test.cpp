// The sweep runner's pure parts: the ETA from measured trial times, the progress bar and plain lines, the
// short config of a trial, and the records it writes (the spec as YAML read back, a model's content hash).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sweeps/run/sweep_progress.h"
#include "sweeps/run/sweep_records.h"
#include "sweeps/spec/spec_flags.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/spec/sweep_spec.h"
#include "test_support.h"

namespace infertune {
namespace {

TEST(SweepRunnerProgress, PredictionIsTheWorkloadMeanThenTheOverallMean) {
  TrialTimes times;
  EXPECT_FALSE(times.predict("pp8"));
  EXPECT_FALSE(times.eta_s({"pp8"}));
  times.add("pp8", 1.0);
  times.add("pp8", 3.0);
  EXPECT_DOUBLE_EQ(*times.predict("pp8"), 2.0);
  EXPECT_DOUBLE_EQ(*times.predict("tg4"), 2.0);  // nothing of tg4 yet: the mean of all
  times.add("tg4", 5.0);
  EXPECT_DOUBLE_EQ(*times.predict("tg4"), 5.0);
  EXPECT_DOUBLE_EQ(*times.predict("pp8+tg4"), 3.0);  // (1 + 3 + 5) / 3
  EXPECT_DOUBLE_EQ(*times.eta_s({"pp8", "tg4", "pp8+tg4", "pp8"}), 2.0 + 5.0 + 3.0 + 2.0);
  EXPECT_DOUBLE_EQ(*times.eta_s({}), 0.0);
  times.add("pp8", -1.0);  // a broken clock reading is ignored
  EXPECT_EQ(times.count(), 3u);
}

// A trial's time per run (warmup and repetitions); where its workload generates tokens, half of it scaled by its
// model's weight bytes; a thread count not measured yet scaled as the other workloads scaled between the counts.
TEST(SweepRunnerProgress, PredictionScalesByRunsWeightBytesAndThreads) {
  TrialTimes times;
  times.add({"tg32", 1000, 2}, 8.0, 4);                         // 2 s per run at 1000 bytes, 2 threads
  EXPECT_DOUBLE_EQ(*times.predict({"tg32", 2000, 2}), 12.0);    // 2 s x (0.5 + 0.5 x 2) x 4 runs
  EXPECT_DOUBLE_EQ(*times.predict({"tg32", 1000, 2}, 2), 4.0);  // at most 2 runs
  EXPECT_DOUBLE_EQ(*times.predict({"tg32", 1000, 2}, 9), 8.0);  // a cap above the mean runs changes nothing
  EXPECT_DOUBLE_EQ(*times.predict({"tg32", 0, 2}), 8.0);        // unknown size: not scaled
  times.add({"pp128", 0, 2}, 6.0, 3);                           // a prompt-only workload is not scaled
  EXPECT_DOUBLE_EQ(*times.predict({"pp128", 5000, 2}), 6.0);
  EXPECT_DOUBLE_EQ(*times.eta_s({{"tg32", 2000, 2}, {"pp128", 0, 2}}, 2), 6.0 + 4.0);
  // 1 thread: pp128 took 3x as long per run as at 2, so tg32 at 1 thread is predicted 3x its 2-thread time.
  times.add({"pp128", 0, 1}, 18.0, 3);
  EXPECT_DOUBLE_EQ(*times.predict({"tg32", 1000, 1}), 24.0);
  EXPECT_DOUBLE_EQ(*times.predict({"tg32", 1000, 4}), 8.0);  // 4 threads: no workload measured it, no ratio
}

TEST(SweepRunnerProgress, DurationsRead) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(3725), "1h02m");
}

TEST(SweepRunnerProgress, BarShowsCountsCurrentTrialAndEtaWithinTheWidth) {
  ProgressState s{.done = 3, .total = 6, .failed = 1, .current = "pp8 t 2", .elapsed_s = 12, .eta_s = 8};
  const std::string wide = format_progress_bar(s, 200);
  EXPECT_EQ(wide, "[##########----------] 3/6  1 failed  pp8 t 2  12s elapsed, ETA 8s");
  s.current = std::string(100, 'x');
  for (size_t width : {30u, 50u, 70u}) {
    const std::string narrow = format_progress_bar(s, width);
    EXPECT_LE(narrow.size(), width) << narrow;
    EXPECT_NE(narrow.find("3/6"), std::string::npos) << narrow;
  }
  s = ProgressState{};
  s.total = 4;
  EXPECT_EQ(format_progress_bar(s, 200), "[--------------------] 0/4  0s elapsed");  // no ETA before a time
}

TEST(SweepRunnerProgress, PlainLineHasStatusWorkloadMetricAndDuration) {
  FinishedTrialLine ok{.done = 2,
                       .total = 6,
                       .status = TrialStatus::ok,
                       .workload = "pp8",
                       .config = "t 2",
                       .metric = "pp_tps",
                       .value = 1234.567,
                       .reason = "",
                       .duration_s = 0.84};
  EXPECT_EQ(format_finished_line(ok), "[2/6] ok      pp8 t 2: pp_tps 1234.57 (0.8s)");
  FinishedTrialLine failed{.done = 3,
                           .total = 6,
                           .status = TrialStatus::timeout,
                           .workload = "tg4",
                           .config = "",
                           .metric = "",
                           .value = std::nullopt,
                           .reason = "timeout after 30 s\nmore",
                           .duration_s = 30};
  EXPECT_EQ(format_finished_line(failed), "[3/6] timeout tg4: timeout after 30 s (30.0s)");
}

TEST(SweepRunnerProgress, MeanOfMetricLeavesOutWarmups) {
  const std::vector<Sample> samples{
      {"pp_tps", 0, 100, true}, {"pp_tps", 1, 10, false}, {"pp_tps", 2, 20, false}, {"tg_tps", 1, 7, false}};
  EXPECT_DOUBLE_EQ(*mean_of_metric(samples, "pp_tps"), 15.0);
  EXPECT_FALSE(mean_of_metric(samples, "ttft_ms"));
}

TEST(SweepRunnerProgress, ShortConfigShowsOnlyWhatVaries) {
  SweepPlan plan;
  auto trial = [](int threads, int batch, bool skipped) {
    PlannedTrial t;
    t.config = {{"model", "/m/a.gguf"}, {"threads", threads}, {"n_batch", batch}, {"type_k", "f16"}};
    if (skipped) t.skip_reason = "too big";
    return t;
  };
  plan.trials = {trial(1, 64, false), trial(2, 64, false), trial(2, 128, true)};  // b varies only in a skip
  const auto keys = varying_config_keys(plan);
  EXPECT_EQ(keys, std::vector<std::string>{"threads"});
  EXPECT_EQ(short_config(plan.trials[1].config, keys), "t 2");
  EXPECT_EQ(short_config(plan.trials[1].config, {"model", "n_batch", "threads"}), "m a.gguf t 2 b 64");
}

TEST(SweepRunnerRecords, SpecYamlReadsBackToTheSameSpec) {
  CLI::App app;
  SpecFlagText flags;
  add_sweep_spec_flags(app, flags);
  app.parse("-t 1,2 -t 4 -C 0x0 --cache-type-k q8_0,f16 --flash-attn on -p 64", false);
  SpecText text = merge_spec_flags(SpecText{}, flags);
  text.entries["models"] = SpecEntry{.values = {"a.gguf"}, .where = "-m"};
  text.workloads.push_back({.fields = {{"np", "1,2"}, {"pp", "16"}, {"tg", "4"}}, .where = "x"});
  const std::string yaml = spec_text_yaml(text);
  auto back = parse_spec_yaml(yaml, "stored");
  ASSERT_TRUE(back) << back.error().message << "\n" << yaml;
  ASSERT_EQ(back->entries.size(), text.entries.size()) << yaml;
  for (const auto& [key, entry] : text.entries) EXPECT_EQ(back->entries.at(key).values, entry.values) << key;
  ASSERT_EQ(back->workloads.size(), 1u);
  EXPECT_EQ(back->workloads[0].fields, text.workloads[0].fields);
  auto a = resolve_spec(text);
  auto b = resolve_spec(*back);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(a->hash(), b->hash());
  EXPECT_EQ(a->settings.at("cpu_mask"), std::vector<std::string>{"0x0"});  // kept as text, not read as a number
}

TEST(SweepRunnerRecords, ResolvedSpecAsTextResolvesToTheSameSpec) {
  SweepSpec spec;
  spec.base_model = "/m/base.gguf";
  spec.quant_types = {"q4_0", "q8_0"};
  spec.settings["threads"] = {"1", "2", "4"};
  spec.settings["ubatch_size"] = {"32", "128"};
  spec.settings["cpu_mask"] = {"0x0", "0xff"};
  spec.settings["cache_type_k"] = {"f16", "q8_0"};
  spec.settings["flash_attn"] = {"on", "off"};
  spec.settings["mmap"] = {"1", "0"};
  spec.workloads = {{.kind = WorkloadKind::Prompt, .n_prompt = 128},
                    {.kind = WorkloadKind::Generate, .n_gen = 32, .depth = 256},
                    {.kind = WorkloadKind::PromptGenerate, .n_prompt = 16, .n_gen = 8},
                    {.kind = WorkloadKind::Batched, .n_prompt = 64, .n_gen = 16, .n_parallel = 4}};
  spec.max_mem_bytes = 3ull << 30;
  spec.min_ctx = 64;
  spec.time_budget_s = 90.5;
  spec.order = TrialOrder::Random;
  spec.seed = 7;
  // Through the stored YAML too, as --resume ID reads it.
  auto text = parse_spec_yaml(spec_text_yaml(spec_text_of(spec)), "stored");
  ASSERT_TRUE(text) << text.error().message;
  auto back = resolve_spec(*text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->to_json(), spec.to_json());
  EXPECT_EQ(back->hash(), spec.hash());
}

TEST(SweepRunnerRecords, ModelContentHashFollowsTheBytesNotThePath) {
  const auto fixture = test::fixture_path("models/fixture-llama-Q4_0.gguf");
  const auto dir = test::temp_dir();
  const auto copy = dir / "copy.gguf";
  std::filesystem::copy_file(fixture, copy);
  auto original = model_record(fixture.string());
  auto copied = model_record(copy.string());
  ASSERT_TRUE(original) << original.error().message;
  ASSERT_TRUE(copied) << copied.error().message;
  EXPECT_EQ(original->content_hash, copied->content_hash);
  EXPECT_EQ(original->content_hash.size(), 16u);
  EXPECT_EQ(original->arch, "llama");
  EXPECT_EQ(original->file_bytes, static_cast<int64_t>(std::filesystem::file_size(fixture)));
  const auto mix = nlohmann::json::parse(original->type_mix_json);
  EXPECT_TRUE(mix.contains("q4_0")) << original->type_mix_json;
  int64_t tensor_bytes = 0;
  for (const auto& [type, bytes] : mix.items()) tensor_bytes += bytes.get<int64_t>();
  EXPECT_GT(tensor_bytes, original->file_bytes / 2);
  EXPECT_LT(tensor_bytes, original->file_bytes);
  {  // one byte changed near the end (tensor data): another model
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-3, std::ios::end);
    const char c = static_cast<char>(f.get());
    f.seekp(-3, std::ios::end);
    f.put(static_cast<char>(c ^ 1));
  }
  auto changed = file_content_hash(copy.string());
  ASSERT_TRUE(changed);
  EXPECT_NE(*changed, original->content_hash);
  EXPECT_FALSE(model_record((dir / "missing.gguf").string()));
}

}  // namespace
}  // namespace infertune
