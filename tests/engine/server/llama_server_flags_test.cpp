// llama-server's flags in `infertune serve`: those that ask for what infertune always does are taken (a
// llama-server command line runs), the others are refused before the model loads, naming the flag and what it
// asks for, and no short form is misread as another flag (-sp as -s p, -md as -m d).
#include "engine/server/llama_server_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>

#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kMissingModel = "/nonexistent/never-loaded.gguf";

test::CommandResult serve_with(const std::string& flags) {
  return test::run_command(fmt::format("{} serve -m {} --port 0 {}", test::infertune_binary(), kMissingModel, flags));
}

TEST(LlamaServerFlags, WhatInfertuneAlwaysDoesIsTaken) {
  ForeignFlagText text;
  for (const char* flag : {"--cont-batching", "--kv-unified", "--swa-full", "--no-context-shift", "--no-warmup",
                           "--no-webui", "--jinja", "--no-jinja"}) {
    text.switches[flag] = true;
  }
  EXPECT_TRUE(check_foreign_flags(llama_server_flags(), text));
}

TEST(LlamaServerFlags, OtherFeaturesAreRefusedByName) {
  ForeignFlagText text;
  text.switches["--special"] = true;
  const Status s = check_foreign_flags(llama_server_flags(), text);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "-sp (--special): infertune serve does not support special tokens in the replies' text");
  ForeignFlagText lora;
  lora.values["--lora"] = {"adapter.gguf"};
  ASSERT_FALSE(check_foreign_flags(llama_server_flags(), lora));
  EXPECT_THAT(check_foreign_flags(llama_server_flags(), lora).error().message, HasSubstr("--lora adapter.gguf: infertune serve does not support LoRA adapters"));
}

// The flags pass the parse: the run then stops at the missing model, not at a flag.
TEST(LlamaServerFlags, ALlamaServerCommandLineGetsPastTheFlags) {
  if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
  const auto result = serve_with(
      "-cb -kvu --jinja --no-webui --swa-full --no-context-shift -to 30 --slots "
      "--log-disable -np 2 -c 512 -fa on");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr(kMissingModel));
  EXPECT_THAT(result.output, Not(HasSubstr("listening on"))) << "--log-disable still printed the log";
}

TEST(LlamaServerFlags, RefusedBeforeTheModelIsOpened) {
  if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-sp", "-sp (--special):"},
      {"-nocb", "-nocb (--no-cont-batching):"},
      {"-no-kvu", "-no-kvu (--no-kv-unified):"},
      {"-md draft.gguf", "-md (--model-draft) draft.gguf:"},
      {"-hf ggml-org/x", "-hf (--hf-repo) ggml-org/x:"},
      {"--rerank", "--rerank:"},
      {"--context-shift", "--context-shift:"},
      {"-lv 3", "-lv (--log-verbosity) 3:"},
  };
  for (const auto& [flags, says] : cases) {
    const auto result = serve_with(flags);
    EXPECT_EQ(result.exit_code, 1) << flags << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr(says)) << flags;
    EXPECT_THAT(result.output, Not(HasSubstr(kMissingModel))) << flags << ": the model was opened first";
  }
}

}  // namespace
}  // namespace infertune
