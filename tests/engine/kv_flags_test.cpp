// The batch / KV cache / attention settings of `run` (engine/settings): llama.cpp's names (-b, -ub, -ctk, -ctv,
// -fa through the command's alias rewrite) parse into the context's settings, absent flags keep llama.cpp's
// defaults (an f16 cache), bad values are refused naming the flag; and `infertune run` takes them end to end
// (a quantized or f32 cache and -fa off still generate the same greedy tokens on the F32 fixture).
#include "engine/settings/setting_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::string parse(ContextParams& params, std::vector<std::string> args) {
  CLI::App app("test");
  EngineSettings settings;
  add_setting_flags(app, Command::run, settings);
  rewrite_flag_aliases(args, setting_flag_aliases(Command::run));
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  params = settings.context;
  return "";
}

TEST(ContextFlags, ParsesLlamaCppNames) {
  ContextParams p;
  ASSERT_EQ(parse(p, {"-b", "256", "-ub", "64", "-ctk", "q8_0", "-ctv", "F16", "-fa", "off"}), "");
  EXPECT_EQ(p.n_batch, 256u);
  EXPECT_EQ(p.n_ubatch, 64u);
  EXPECT_EQ(p.type_k, GgmlType::Q8_0);
  EXPECT_EQ(p.type_v, GgmlType::F16);
  EXPECT_EQ(p.flash_attn, FlashAttention::Off);
  ContextParams long_names;
  ASSERT_EQ(parse(long_names, {"--batch-size=8", "--ubatch-size", "4", "--cache-type-k=bf16", "--flash-attn=on"}), "");
  EXPECT_EQ(long_names.n_batch, 8u);
  EXPECT_EQ(long_names.n_ubatch, 4u);
  EXPECT_EQ(long_names.type_k, GgmlType::BF16);
  EXPECT_EQ(long_names.flash_attn, FlashAttention::On);
}

TEST(ContextFlags, AbsentFlagsKeepTheDefaults) {
  ContextParams p;
  ASSERT_EQ(parse(p, {}), "");
  const ContextParams defaults;
  EXPECT_EQ(p.n_batch, defaults.n_batch);
  EXPECT_EQ(p.n_ubatch, defaults.n_ubatch);
  EXPECT_EQ(p.type_k, GgmlType::F16);  // llama.cpp's default (run's was f32 before the settings table)
  EXPECT_EQ(p.type_v, GgmlType::F16);
  EXPECT_EQ(p.flash_attn, FlashAttention::Auto);
}

TEST(ContextFlags, BadValuesNameTheFlag) {
  ContextParams p;
  EXPECT_THAT(parse(p, {"-ctk", "q4_k"}),
              HasSubstr("'q4_k' is not a KV cache type; allowed: f32, f16, bf16, q8_0, q4_0"));
  EXPECT_THAT(parse(p, {"-fa", "sometimes"}), HasSubstr("--flash-attn: 'sometimes' is not on, off or auto"));
  EXPECT_THAT(parse(p, {"-b", "0"}), HasSubstr("batch-size"));
  EXPECT_THAT(parse(p, {"-ub", "x"}), HasSubstr("ubatch-size"));
}

TEST(FlashAttentionMode, NamesRoundTrip) {
  for (FlashAttention m : {FlashAttention::On, FlashAttention::Off, FlashAttention::Auto}) {
    EXPECT_EQ(flash_attention_from_name(flash_attention_name(m)), m);
  }
  EXPECT_EQ(flash_attention_from_name("1"), FlashAttention::On);
  EXPECT_EQ(flash_attention_from_name("-1"), FlashAttention::Auto);
  EXPECT_EQ(flash_attention_from_name("true"), FlashAttention::On);
  EXPECT_FALSE(flash_attention_from_name("yes").has_value());
}

test::CommandResult run(const std::string& args) {
  return test::run_command(fmt::format("{} run -m {} {} 2>&1", test::infertune_binary(),
                                       test::fixture_path("models/fixture-llama-f32.gguf").string(), args));
}

// The last output line that is all digits and commas: the --print-ids line.
std::string ids_line(const std::string& output) {
  std::string last, line;
  for (char ch : output + "\n") {
    if (ch != '\n') {
      line += ch;
      continue;
    }
    if (!line.empty() && line.find_first_not_of("0123456789,") == std::string::npos) last = line;
    line.clear();
  }
  return last;
}

TEST(RunCommandKvFlags, QuantizedCacheAndEitherKernelGenerate) {
  const std::string common = "--prompt-tokens 1,50,60,70,80,90,100,110,120 -n 12 --temp 0 --print-ids";
  const auto base = run(common);
  ASSERT_EQ(base.exit_code, 0) << base.output;
  const std::string want = ids_line(base.output);
  ASSERT_FALSE(want.empty()) << base.output;
  for (const char* flags :
       {"-fa off", "-fa on -ctk f32 -ctv f32", "-fa true -ctk f16", "-ctk q8_0 -ctv q8_0 -b 4 -ub 2"}) {
    const auto got = run(common + " " + flags);
    ASSERT_EQ(got.exit_code, 0) << flags << "\n" << got.output;
    EXPECT_EQ(ids_line(got.output), want) << flags;
  }
  const auto bad = run(common + " -ctv q5_k");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("q5_k"));
}

}  // namespace
}  // namespace infertune
