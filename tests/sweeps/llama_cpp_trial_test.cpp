// The llama.cpp engine's pieces that need no llama.cpp: a trial's settings and workload as llama-bench's,
// llama-batched-bench's and llama-server's flags (what they cannot express said, not dropped), the tools a sweep
// needs checked before it starts, and their outputs as samples (log
// lines before the result tolerated, a missing result an error naming what is missing).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sweeps/run/llama_cpp_trial.h"
#include "sweeps/store/metric_names.h"
#include "test_support.h"

namespace infertune {
namespace {

TrialConfig trial_of(WorkloadKind kind) {
  TrialConfig t;
  t.workload.kind = kind;
  t.workload.n_prompt = 64;
  t.workload.n_gen = 16;
  t.workload.depth = kind == WorkloadKind::Prompt ? 512 : 0;
  t.workload.n_parallel = kind == WorkloadKind::Batched ? 4 : 1;
  t.settings.placement.threads = 2;
  t.settings.placement.threads_batch = 4;
  t.settings.context.n_batch = 1024;
  t.settings.context.n_ubatch = 256;
  t.settings.context.type_k = GgmlType::Q8_0;
  t.settings.context.flash_attn = FlashAttention::On;
  return t;
}

// The value after `flag` in argv, "" when absent.
std::string value_of(const std::vector<std::string>& argv, const std::string& flag) {
  const auto it = std::ranges::find(argv, flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

TEST(LlamaCppTrial, PromptWorkloadIsALlamaBenchRun) {
  auto inv = llama_cpp_invocation("/opt/llama", "m.gguf", trial_of(WorkloadKind::Prompt), 3, false);
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->argv.front(), "/opt/llama/llama-bench");
  EXPECT_EQ(value_of(inv->argv, "-m"), "m.gguf");
  EXPECT_EQ(value_of(inv->argv, "-o"), "json");
  EXPECT_EQ(value_of(inv->argv, "-r"), "3");
  EXPECT_EQ(value_of(inv->argv, "-p"), "64");
  EXPECT_EQ(value_of(inv->argv, "-n"), "0");
  EXPECT_EQ(value_of(inv->argv, "-d"), "512");
  EXPECT_EQ(value_of(inv->argv, "-t"), "2");
  EXPECT_EQ(value_of(inv->argv, "-b"), "1024");
  EXPECT_EQ(value_of(inv->argv, "-ub"), "256");
  EXPECT_EQ(value_of(inv->argv, "-ctk"), "q8_0");
  EXPECT_EQ(value_of(inv->argv, "-fa"), "on");
  EXPECT_NE(std::ranges::find(inv->argv, "--no-warmup"), inv->argv.end());
  // llama-bench has no -tb: said, not dropped.
  ASSERT_EQ(inv->warnings.size(), 1u);
  EXPECT_NE(inv->warnings[0].find("-tb"), std::string::npos);
}

TEST(LlamaCppTrial, BatchedWorkloadIsALlamaBatchedBenchRun) {
  auto inv = llama_cpp_invocation("/opt/llama", "m.gguf", trial_of(WorkloadKind::Batched), 1, true);
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->argv.front(), "/opt/llama/llama-batched-bench");
  // A one-token generation follows, so that the measured row is printed before the tool exits.
  EXPECT_EQ(value_of(inv->argv, "-npp"), "64");
  EXPECT_EQ(value_of(inv->argv, "-ntg"), "16,1");
  EXPECT_EQ(value_of(inv->argv, "-npl"), "4");
  EXPECT_EQ(value_of(inv->argv, "-tb"), "4");
  EXPECT_EQ(value_of(inv->argv, "-c"), "320");  // 4 sequences of 64 + 16 tokens
  EXPECT_EQ(value_of(inv->argv, "--output-format"), "jsonl");
}

TEST(LlamaCppTrial, ServedWorkloadIsALlamaServerWithTheTrialsSlots) {
  TrialConfig t = trial_of(WorkloadKind::Serve);
  t.workload.clients = 3;
  t.settings.context.n_ctx = 640;
  t.settings.context.n_seq_max = 4;
  t.settings.repack = false;
  auto inv = llama_cpp_invocation("/opt/llama", "m.gguf", t, 1, true);
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->argv.front(), "/opt/llama/llama-server");
  EXPECT_EQ(value_of(inv->argv, "-m"), "m.gguf");
  EXPECT_EQ(value_of(inv->argv, "-c"), "640");
  EXPECT_EQ(value_of(inv->argv, "-np"), "4");
  EXPECT_EQ(value_of(inv->argv, "-t"), "2");
  EXPECT_EQ(value_of(inv->argv, "-tb"), "4");
  EXPECT_EQ(value_of(inv->argv, "-ctk"), "q8_0");
  EXPECT_EQ(value_of(inv->argv, "--alias"), "trial");
  for (const char* flag : {"-kvu", "--no-webui", "--no-repack"}) {
    EXPECT_NE(std::ranges::find(inv->argv, flag), inv->argv.end()) << flag;
  }
  // The server picks its own address: the runner adds them.
  EXPECT_EQ(std::ranges::find(inv->argv, "--port"), inv->argv.end());
  EXPECT_TRUE(inv->warnings.empty());
}

TEST(LlamaCppTrial, MissingToolsAreNamedBeforeTheSweep) {
  const auto dir = test::temp_dir() / "llama-bin";
  std::filesystem::create_directories(dir);
  for (const char* tool : {"llama-bench", "llama-batched-bench"}) {
    const auto path = dir / tool;
    std::ofstream(path) << "#!/bin/sh\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  }
  Workload serve;
  serve.kind = WorkloadKind::Serve;
  Workload batched;
  batched.kind = WorkloadKind::Batched;
  EXPECT_TRUE(check_llama_cpp_tools(dir, {batched}));
  const Status missing = check_llama_cpp_tools(dir, {batched, serve});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("llama-server"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("scripts/build-llama-cpp llama-server"), std::string::npos);
}

TEST(LlamaCppTrial, ABatchedRunEndsWithItsCheaperTrailingItem) {
  TrialConfig t = trial_of(WorkloadKind::Batched);
  t.workload.n_prompt = 512;  // 4 x 512 prompt tokens cost more than 16 generation steps
  auto inv = llama_cpp_invocation("/opt/llama", "m.gguf", t, 1, true);
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(value_of(inv->argv, "-npp"), "512,1");
  EXPECT_EQ(value_of(inv->argv, "-ntg"), "16");
}

TEST(LlamaCppTrial, PromptThenGenerationIsRefusedWithTheReason) {
  auto inv = llama_cpp_invocation("/opt/llama", "m.gguf", trial_of(WorkloadKind::PromptGenerate), 3, true);
  ASSERT_FALSE(inv);
  EXPECT_NE(inv.error().message.find("one combined rate"), std::string::npos) << inv.error().message;
}

TEST(LlamaCppTrial, LlamaBenchJsonGivesOneSamplePerRepetition) {
  const std::string output = R"(some log line
[
  {"n_prompt": 64, "n_gen": 0, "samples_ns": [2000000, 4000000], "samples_ts": [32000.0, 16000.0]}
]
)";
  auto samples = llama_bench_samples(output, trial_of(WorkloadKind::Prompt).workload, 5);
  ASSERT_TRUE(samples) << samples.error().message;
  ASSERT_EQ(samples->size(), 4u);
  EXPECT_EQ((*samples)[0], (Sample{metric::kPromptTokensPerSecond, 5, 32000.0, false}));
  EXPECT_EQ((*samples)[1], (Sample{metric::kTimeToFirstTokenMs, 5, 2.0, false}));
  EXPECT_EQ((*samples)[2], (Sample{metric::kPromptTokensPerSecond, 6, 16000.0, false}));
  auto tg = llama_bench_samples(output, trial_of(WorkloadKind::Generate).workload, 0);
  ASSERT_TRUE(tg);
  ASSERT_EQ(tg->size(), 2u);
  EXPECT_EQ((*tg)[1].metric, metric::kGenTokensPerSecond);
  EXPECT_FALSE(llama_bench_samples("no json here", trial_of(WorkloadKind::Prompt).workload, 0));
  EXPECT_FALSE(llama_bench_samples("[{\"samples_ts\": [1.0]}]", trial_of(WorkloadKind::Prompt).workload, 0));
}

TEST(LlamaCppTrial, BatchedBenchRowIsFoundAfterALogPrefix) {
  const Workload w = trial_of(WorkloadKind::Batched).workload;
  const std::string row = R"({"pp": 64, "tg": 16, "pl": 4, "speed_pp": 900.5, "speed": 400.25})";
  auto samples = batched_bench_samples("warning: something" + row + "\n", w, 2);
  ASSERT_TRUE(samples) << samples.error().message;
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0], (Sample{metric::kAggregateTokensPerSecond, 2, 400.25, false}));
  EXPECT_EQ((*samples)[1], (Sample{metric::kPromptTokensPerSecond, 2, 900.5, false}));
  auto other = batched_bench_samples(R"({"pp": 64, "tg": 16, "pl": 2, "speed_pp": 1, "speed": 1})", w, 0);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("pp 64 tg 16 pl 4"), std::string::npos) << other.error().message;
}

}  // namespace
}  // namespace infertune
