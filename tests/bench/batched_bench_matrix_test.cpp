// The combinations a batched-bench run expands to: llama-batched-bench's loop order (-npp outermost,
// then -ntg, then -npl), N_KV with and without a shared prompt, and the flags (defaults, aliases, lists
// and ranges, bad values) that fill the parameters.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/batched_bench/batched_matrix.h"
#include "bench/batched_bench/batched_params.h"

namespace infertune {
namespace {

// batched-bench's flags parsed from a command line (aliases rewritten as the dispatcher does).
Result<BatchedParams> parse(std::vector<std::string> args) {
  CLI::App app;
  BatchedFlagText text;
  BatchedParams params;
  add_batched_flags(app, text, params);
  rewrite_flag_aliases(args, batched_flag_aliases());
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return fail("CLI11: {}", e.what());
  }
  if (Status s = resolve_batched_params(text, params); !s) return s.error();
  return params;
}

TEST(BatchedBenchMatrix, DefaultsAreLlamaBatchedBenchs) {
  auto p = parse({"-m", "x.gguf"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->n_pp, (std::vector<int>{128, 256, 512}));
  EXPECT_EQ(p->n_tg, (std::vector<int>{128, 256}));
  EXPECT_EQ(p->n_pl, (std::vector<int>{1, 2, 4, 8, 16, 32}));
  EXPECT_FALSE(p->shared_prompt);
  EXPECT_EQ(p->settings.context.n_ctx, 0u);
  EXPECT_EQ(p->settings.context.type_k, GgmlType::F16);
  EXPECT_EQ(p->settings.context.type_v, GgmlType::F16);
  EXPECT_EQ(p->output, BatchedOutput::markdown);
  EXPECT_EQ(expand_cases(*p).size(), 3u * 2u * 6u);
}

TEST(BatchedBenchMatrix, LoopOrderAndNKv) {
  auto p = parse({"-m", "x.gguf", "-npp", "16,32", "-ntg", "4", "-npl", "1-4*2"});
  ASSERT_TRUE(p) << p.error().message;
  const auto cases = expand_cases(*p);
  ASSERT_EQ(cases.size(), 6u);
  const int expected[6][3] = {{16, 4, 1}, {16, 4, 2}, {16, 4, 4}, {32, 4, 1}, {32, 4, 2}, {32, 4, 4}};
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].n_pp, expected[i][0]) << i;
    EXPECT_EQ(cases[i].n_tg, expected[i][1]) << i;
    EXPECT_EQ(cases[i].n_pl, expected[i][2]) << i;
    // Every sequence holds its own prompt and its generated tokens.
    EXPECT_EQ(cases[i].n_kv(), int64_t(expected[i][2]) * (expected[i][0] + expected[i][1])) << i;
    EXPECT_EQ(cases[i].pp_tokens(), int64_t(expected[i][2]) * expected[i][0]) << i;
    EXPECT_EQ(cases[i].tg_tokens(), int64_t(expected[i][2]) * expected[i][1]) << i;
  }
  EXPECT_EQ(max_n_kv(cases), 4 * 36);
  EXPECT_EQ(max_n_pl(cases), 4);
}

TEST(BatchedBenchMatrix, SharedPromptIsStoredOnce) {
  auto p = parse({"-m", "x.gguf", "-npp", "100", "-ntg", "10", "-npl", "8", "--pps"});
  ASSERT_TRUE(p) << p.error().message;
  const auto cases = expand_cases(*p);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_TRUE(cases[0].shared_prompt);
  EXPECT_EQ(cases[0].n_kv(), 100 + 8 * 10);
  EXPECT_EQ(cases[0].pp_tokens(), 100);
  EXPECT_EQ(cases[0].tg_tokens(), 80);
}

TEST(BatchedBenchMatrix, ContextAndPlacementFlags) {
  auto p = parse({"-m",  "x.gguf", "-c", "2048", "-b", "256", "-ub", "64",     "-ctk", "q8_0", "-ctv",
                  "f32", "-fa",    "on", "-t",   "3",  "-tb", "5",   "--poll", "0",    "-o",   "jsonl"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->settings.context.n_ctx, 2048u);
  EXPECT_EQ(p->settings.context.n_batch, 256u);
  EXPECT_EQ(p->settings.context.n_ubatch, 64u);
  EXPECT_EQ(p->settings.context.type_k, GgmlType::Q8_0);
  EXPECT_EQ(p->settings.context.type_v, GgmlType::F32);
  EXPECT_EQ(p->settings.context.flash_attn, FlashAttention::On);
  EXPECT_EQ(p->settings.placement.threads, 3);
  EXPECT_EQ(p->settings.placement.threads_batch, 5);
  EXPECT_EQ(p->settings.placement.poll, 0);
  EXPECT_EQ(p->output, BatchedOutput::jsonl);
}

TEST(BatchedBenchMatrix, BadValuesNameTheFlag) {
  auto expect_error = [](std::vector<std::string> args, const std::string& needle) {
    args.insert(args.begin(), {"-m", "x.gguf"});
    auto p = parse(args);
    ASSERT_FALSE(p) << needle;
    EXPECT_NE(p.error().message.find(needle), std::string::npos) << p.error().message;
  };
  expect_error({"-npl", "0"}, "-npl");
  expect_error({"-npl", "300"}, "-npl");
  expect_error({"-npp", "0"}, "-npp");
  expect_error({"-ntg", "4,,8"}, "-ntg");
  expect_error({"-npp", "8-2"}, "-npp");
  expect_error({"-o", "sql"}, "-o");
  expect_error({"-ctk", "q9_9"}, "CLI11");
}

}  // namespace
}  // namespace infertune
