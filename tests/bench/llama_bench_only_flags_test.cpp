// llama-bench's flags of features infertune does not have: taken at llama-bench's default (a script that spells
// the defaults out runs unchanged), refused otherwise with the flag, the value and what to use instead, and
// never misread as another flag (-nopo as -n opo, -hf as -h). End to end through the binary, and the checker.
#include "bench/llama_bench/llama_bench_only_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>

#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LlamaBenchOnlyFlags, DefaultsAreTakenAndOtherValuesRefusedByName) {
  ForeignFlagText text;
  text.values["--n-cpu-moe"] = {"0", "0,0"};
  text.values["--device"] = {"auto"};
  text.values["--lazy-mode"] = {"auto"};
  text.values["--embeddings"] = {"0"};
  text.values["--no-op-offload"] = {"0"};
  text.values["--no-host"] = {"0"};
  EXPECT_TRUE(check_foreign_flags(llama_bench_only_flags(), text));

  text.values["--n-cpu-moe"] = {"0,8"};
  const Status moe = check_foreign_flags(llama_bench_only_flags(), text);
  ASSERT_FALSE(moe);
  EXPECT_EQ(moe.error().message,
            "-ncmoe (--n-cpu-moe) 8: infertune bench does not support keeping MoE experts on the CPU (infertune runs "
            "dense models: llama, qwen2, qwen3, gemma3); only llama-bench's default, 0, is taken");
}

TEST(LlamaBenchOnlyFlags, FlagsWithoutADefaultValueAreRefusedWhateverTheValue) {
  for (const char* flag : {"--override-tensor", "--fit-target", "--fit-ctx", "--hf-repo", "--hf-file", "--hf-token"}) {
    ForeignFlagText text;
    text.values[flag] = {"0"};
    const Status s = check_foreign_flags(llama_bench_only_flags(), text);
    ASSERT_FALSE(s) << flag;
    EXPECT_THAT(s.error().message, HasSubstr(fmt::format("({}) 0:", flag)));
    EXPECT_THAT(s.error().message, Not(HasSubstr("default"))) << "there is no default to offer";
  }
}

TEST(LlamaBenchOnlyFlags, EveryShortFormRewritesToItsLongForm) {
  const auto aliases = foreign_flag_aliases(llama_bench_only_flags());
  auto long_form = [&](std::string_view from) {
    for (const FlagAlias& a : aliases) {
      if (a.from == from) return std::string(a.to);
    }
    return std::string("(none)");
  };
  EXPECT_EQ(long_form("-ncmoe"), "--n-cpu-moe");
  EXPECT_EQ(long_form("-dev"), "--device");
  EXPECT_EQ(long_form("-lzm"), "--lazy-mode");
  EXPECT_EQ(long_form("-embd"), "--embeddings");
  EXPECT_EQ(long_form("-ot"), "--override-tensor");
  EXPECT_EQ(long_form("-nopo"), "--no-op-offload");
  EXPECT_EQ(long_form("-fitt"), "--fit-target");
  EXPECT_EQ(long_form("-fitc"), "--fit-ctx");
  EXPECT_EQ(long_form("-hf"), "--hf-repo");
  EXPECT_EQ(long_form("-hfr"), "--hf-repo");
  EXPECT_EQ(long_form("-hff"), "--hf-file");
  EXPECT_EQ(long_form("-hft"), "--hf-token");
}

// Before any model is opened (the model does not exist), with the flag in the message.
TEST(LlamaBenchOnlyFlags, TheBinaryRefusesThemBeforeLoadingAnything) {
  if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-nopo 1", "-nopo (--no-op-offload) 1:"},
      {"-ncmoe 2", "-ncmoe (--n-cpu-moe) 2:"},
      {"-dev CUDA0/CUDA1", "-dev (--device) CUDA0/CUDA1:"},
      {"-embd 0,1", "-embd (--embeddings) 1:"},
      {"-ot blk.0=CPU", "-ot (--override-tensor) blk.0=CPU:"},
      {"-hf ggml-org/x-GGUF", "download the GGUF file and give it with -m"},
      {"--no-host 1", "--no-host 1:"},
      {"-lzm on", "-lzm (--lazy-mode) on:"},
  };
  for (const auto& [flags, says] : cases) {
    const auto result = test::run_command(
        fmt::format("({} bench -m /nonexistent/never.gguf {} > /dev/null)", test::infertune_binary(), flags));
    EXPECT_EQ(result.exit_code, 1) << flags << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr(says)) << flags;
    EXPECT_THAT(result.output, Not(HasSubstr("never.gguf"))) << flags << ": the model was opened first";
  }
}

}  // namespace
}  // namespace infertune
