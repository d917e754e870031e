// The tests a bench run expands to: llama-bench's loop order (model outermost, then -ngl, -mmp, -b, -ub,
// -ctk, -ctv, -fa, -t, -C, --cpu-strict, -d, --poll; inside: every -p, then every -n, then every -pg),
// its test names, and the flags (defaults, aliases, bad values) that fill the parameter lists.
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_devices.h"

#include <algorithm>

#include "bench/llama_bench/bench_flags.h"
#include "bench/llama_bench/context_setup.h"
#include "bench/llama_bench/test_matrix.h"

namespace infertune {
namespace {

using Values = std::vector<std::string>;

// bench's flags parsed from a command line (aliases rewritten as the dispatcher does).
Result<BenchParams> parse(std::vector<std::string> args) {
  CLI::App app;
  BenchFlagText text;
  add_bench_flags(app, text);
  rewrite_flag_aliases(args, bench_flag_aliases());
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return fail("CLI11: {}", e.what());
  }
  // -C masks against a fixed 64-CPU machine, so they mean the same on any test host.
  return resolve_bench_params(text, [] { return Result<CpuSet>(CpuSet::range(0, 63)); });
}

TEST(BenchMatrix, TestNamesAreLlamaBenchs) {
  BenchTest t;
  t.n_prompt = 512;
  EXPECT_EQ(test_name(t), "pp512");
  t.n_prompt = 0;
  t.n_gen = 128;
  EXPECT_EQ(test_name(t), "tg128");
  t.n_prompt = 512;
  EXPECT_EQ(test_name(t), "pp512+tg128");
  t.n_depth = 4096;
  EXPECT_EQ(test_name(t), "pp512+tg128 @ d4096");
  EXPECT_EQ(t.n_ctx(), 512 + 128 + 4096);
}

TEST(BenchMatrix, CartesianProductInLlamaBenchOrder) {
  BenchParams p;
  p.models = {"a.gguf", "b.gguf"};
  p.settings["threads"] = {"1", "2"};
  p.n_depth = {0, 64};
  p.n_prompt = {16, 0, 32};  // a 0 adds no test
  p.n_gen = {4};
  p.n_pg = {{8, 2}, {0, 0}};
  p.settings["cache_type_k"] = {"f16"};
  const std::vector<BenchTest> tests = expand_tests(p);

  // Written out independently: model, then threads, then depth, then the shapes.
  std::vector<std::string> expected;
  for (const char* model : {"a.gguf", "b.gguf"}) {
    for (int threads : {1, 2}) {
      for (const char* depth : {"", " @ d64"}) {
        for (const char* shape : {"pp16", "pp32", "tg4", "pp8+tg2"}) {
          expected.push_back(std::string(model) + " t" + std::to_string(threads) + " " + shape + depth);
        }
      }
    }
  }
  std::vector<std::string> got;
  for (const BenchTest& t : tests) got.push_back(t.model + " t" + t.value("threads") + " " + test_name(t));
  EXPECT_EQ(got, expected);
  for (const BenchTest& t : tests) {
    EXPECT_EQ(t.value("cache_type_k"), "f16");
    EXPECT_EQ(t.value("cache_type_v"), "f16");  // not given: llama-bench's default
  }
}

TEST(BenchMatrix, ModelLoadParametersAreOuterLoops) {
  BenchParams p;
  p.models = {"m.gguf"};
  p.n_prompt = {8};
  p.n_gen = {0};
  p.settings["mmap"] = {"1", "0"};
  p.settings["batch_size"] = {"64", "128"};
  p.settings["n_gpu_layers"] = {"0", "1"};
  const std::vector<BenchTest> tests = expand_tests(p);
  ASSERT_EQ(tests.size(), 8u);
  const int expected[8][3] = {{0, 1, 64}, {0, 1, 128}, {0, 0, 64}, {0, 0, 128},
                              {1, 1, 64}, {1, 1, 128}, {1, 0, 64}, {1, 0, 128}};
  for (size_t i = 0; i < tests.size(); ++i) {
    EXPECT_EQ(tests[i].settings.n_gpu_layers, expected[i][0]) << i;
    EXPECT_EQ(tests[i].settings.use_mmap, expected[i][1] == 1) << i;
    EXPECT_EQ(tests[i].n_batch(), expected[i][2]) << i;
  }
  EXPECT_TRUE(tests[0].same_model_load(tests[1]));
  EXPECT_FALSE(tests[1].same_model_load(tests[2]));  // -mmp changed
  EXPECT_FALSE(tests[3].same_model_load(tests[4]));  // -ngl changed
}

TEST(BenchMatrix, FlagDefaultsAreLlamaBenchs) {
  auto p = parse({"-m", "x.gguf"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->models, std::vector<std::string>({"x.gguf"}));
  EXPECT_EQ(p->n_prompt, std::vector<int>({512}));
  EXPECT_EQ(p->n_gen, std::vector<int>({128}));
  EXPECT_TRUE(p->n_pg.empty());
  EXPECT_EQ(p->n_depth, std::vector<int>({0}));
  EXPECT_EQ(p->values("batch_size"), Values({"2048"}));
  EXPECT_EQ(p->values("ubatch_size"), Values({"512"}));
  EXPECT_EQ(p->repetitions, 5);
  EXPECT_EQ(p->values("poll"), Values({"50"}));
  EXPECT_EQ(p->values("flash_attn"), Values({"auto"}));
  EXPECT_EQ(p->values("mmap"), Values({"1"}));
  EXPECT_EQ(p->values("threads"), Values({"0"}));  // the number of physical cores
  EXPECT_TRUE(p->warmup);
  EXPECT_EQ(p->output, OutputFormat::markdown);
  const std::vector<BenchTest> tests = expand_tests(*p);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(test_name(tests[0]), "pp512");
  EXPECT_EQ(test_name(tests[1]), "tg128");
  EXPECT_EQ(tests[0].settings.context.type_k, GgmlType::F16);
  EXPECT_EQ(tests[0].settings.placement.threads, kAutoThreads);
  EXPECT_EQ(tests[0].settings.placement.threads_batch, kAutoThreads);  // -t runs prompts too, as llama-bench
}

TEST(BenchMatrix, EveryFlagWithLlamaBenchsSpelling) {
  auto p = parse(
      {"-m",      "a.gguf,b.gguf", "-m",          "c.gguf", "-p",         "0",  "-n",          "16-64*2",      "-pg",
       "512,128", "-pg",           "64,8",        "-d",     "0,512",      "-r", "3",           "-t",           "1-4",
       "-b",      "256",           "-ub",         "64,128", "-ngl",       "0",  "-ctk",        "Q8_0,f32",     "-ctv",
       "q4_0",    "-fa",           "on,off,auto", "--numa", "distribute", "-C", "0x3,0-1",     "--cpu-strict", "0,1",
       "--poll",  "0,100",         "--prio",      "2",      "--delay",    "1",  "--no-warmup", "-mmp",         "0",
       "-o",      "jsonl"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->models, std::vector<std::string>({"a.gguf", "b.gguf", "c.gguf"}));
  EXPECT_EQ(p->n_prompt, std::vector<int>({0}));
  EXPECT_EQ(p->n_gen, std::vector<int>({16, 32, 64}));
  EXPECT_EQ(p->n_pg, (std::vector<std::pair<int, int>>{{512, 128}, {64, 8}}));
  EXPECT_EQ(p->n_depth, std::vector<int>({0, 512}));
  EXPECT_EQ(p->repetitions, 3);
  EXPECT_EQ(p->values("threads"), Values({"1", "2", "3", "4"}));
  EXPECT_EQ(p->values("batch_size"), Values({"256"}));
  EXPECT_EQ(p->values("ubatch_size"), Values({"64", "128"}));
  EXPECT_EQ(p->values("n_gpu_layers"), Values({"0"}));
  EXPECT_EQ(p->values("cache_type_k"), Values({"q8_0", "f32"}));
  EXPECT_EQ(p->values("cache_type_v"), Values({"q4_0"}));
  EXPECT_EQ(p->values("flash_attn"), Values({"on", "off", "auto"}));
  EXPECT_EQ(p->values("numa"), Values({"distribute"}));
  EXPECT_EQ(p->values("cpu_mask"), Values({"0x3", "0-1"}));
  EXPECT_EQ(p->values("cpu_strict"), Values({"0", "1"}));
  EXPECT_EQ(p->values("poll"), Values({"0", "100"}));
  EXPECT_EQ(p->values("prio"), Values({"2"}));
  EXPECT_EQ(p->delay_seconds, 1);
  EXPECT_FALSE(p->warmup);
  EXPECT_EQ(p->values("mmap"), Values({"0"}));
  EXPECT_EQ(p->output, OutputFormat::jsonl);
  // 3 models x 4 threads x 2 masks x 2 strict x 2 depths x 2 polls x 2 ub x 2 ctk x 3 fa, each 3 tg + 2 pg.
  const std::vector<BenchTest> tests = expand_tests(*p);
  EXPECT_EQ(tests.size(), 3u * 4 * 2 * 2 * 2 * 2 * 2 * 2 * 3 * 5);
  EXPECT_EQ(tests.front().settings.placement.numa, NumaMode::distribute);
  EXPECT_EQ(tests.front().settings.placement.priority, 2);
  EXPECT_EQ(tests.front().settings.context.flash_attn, FlashAttention::On);
}

TEST(BenchMatrix, FlashAttentionTakesLlamaCppsSpellings) {
  // bench took only on/off/auto/1/0/-1 while run also took true/false; both now take all of them.
  auto p = parse({"-m", "x.gguf", "-fa", "true,false,1,0,-1"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->values("flash_attn"), Values({"on", "off", "on", "off", "auto"}));
}

TEST(BenchMatrix, BadFlagValuesNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-p", "x"}, "-p: "},           {{"-b", "0"}, "-b: "},           {{"-ub", "0"}, "-ub: "},
      {{"--poll", "101"}, "--poll: "}, {{"-ctk", "q9_9"}, "-ctk: "},    {{"-fa", "maybe"}, "-fa: "},
      {{"-C", "zz"}, "-C: "},          {{"-o", "xml"}, "-o: "},         {{"--numa", "spread"}, "--numa: "},
      {{"-pg", "1"}, "-pg: "},         {{"-mmp", "2"}, "-mmp: "},       {{"-ngl", "-5"}, "-ngl: "},
      {{"-ctv", "q5_1"}, "-ctv: "},    {{"--prio", "1,2"}, "--prio: "},
  };
  for (const auto& [flags, prefix] : cases) {
    std::vector<std::string> args = {"-m", "x.gguf"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto p = parse(args);
    ASSERT_FALSE(p) << flags[0];
    EXPECT_NE(p.error().message.find(prefix), std::string::npos) << p.error().message;
  }
}

TEST(BenchMatrix, UnsupportedCombinationsAreRejectedPerTest) {
  BenchTest t;
  EXPECT_TRUE(check_engine_support(t));
  if (!cuda_devices().empty()) GTEST_SKIP() << "a CUDA GPU is visible: -ngl tests run";
  t.settings.n_gpu_layers = 1;
  // "no CUDA GPU is visible", or in a build without CUDA (the sanitizer presets) "this build has no CUDA backend"
  EXPECT_NE(check_engine_support(t).error().message.find("-ngl 1: " + no_cuda_gpu_reason()), std::string::npos);
  t.settings.n_gpu_layers = -1;  // every layer: a GPU test too
  EXPECT_FALSE(check_engine_support(t));
  // A KV type the engine lacks is refused with the flags, before any test (BadFlagValuesNameTheFlag).
}

TEST(BenchMatrix, AContextLargerThanMemoryIsAnError) {
  ModelConfig config;
  config.n_layers = 1000;
  config.n_head_kv = 64;
  config.head_dim = config.head_dim_v = 256;
  BenchTest t;
  t.settings.context.type_k = t.settings.context.type_v = GgmlType::F32;
  t.n_prompt = 1 << 20;
  // 1000 layers x (64 x 256 x 4 bytes) x 2 x 1Mi cells = 125 TiB.
  EXPECT_EQ(kv_cache_bytes(config, t), 1000ull * 64 * 256 * 4 * 2 * (1 << 20));
  Status s = check_context_fits(config, t);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("KV cache of 1048576 positions"), std::string::npos) << s.error().message;
  t.settings.context.type_k = t.settings.context.type_v = GgmlType::Q8_0;  // 34 bytes per 32 values
  EXPECT_EQ(kv_cache_bytes(config, t), 1000ull * (64 * 256 / 32 * 34) * 2 * (1 << 20));
  t.n_prompt = 1;
  config.n_layers = 1;
  EXPECT_TRUE(check_context_fits(config, t));
}

}  // namespace
}  // namespace infertune
