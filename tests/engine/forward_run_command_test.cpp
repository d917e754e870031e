// `infertune run` end to end: --logits-out reproduces the in-process logits, --print-ids with --temp 0
// reproduces llama.cpp's greedy tokens, a text prompt generates on a synthesized model (tokenizer and
// sampler wired in), and bad input (no prompt, a bad id list, a prompt longer than the context, a bad
// sampling value) fails with a message that says what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <regex>

#include "engine/run/token_list.h"
#include "forward_test_models.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::string model_path(const char* name) { return test::fixture_path(std::string("models/") + name).string(); }

std::string read_text(const std::string& relative) {
  std::ifstream in(test::fixture_path(relative));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

test::CommandResult run(const std::string& args) {
  return test::run_command(fmt::format("{} run {}", test::infertune_binary(), args));
}

TEST(RunCommandTest, LogitsOutReproducesInProcessLogits) {
  const auto out = test::temp_dir() / "logits.f32";
  const std::string ids = read_text("ref/seqB.txt");
  // An f32 cache, as the in-process Context below (run's default is llama.cpp's f16).
  const auto result = run(fmt::format("-m {} --prompt-tokens {} -n 0 -t 2 -ctk f32 -ctv f32 --logits-out {}",
                                      model_path("fixture-llama-f32.gguf"), ids, out.string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::vector<float> written = test::read_f32_file(out);

  auto model = Model::load(model_path("fixture-llama-f32.gguf"));
  ASSERT_TRUE(model.ok());
  auto tokens = parse_token_list(ids);
  ASSERT_TRUE(tokens.ok());
  auto in_process = test::logits_all(*model, *tokens);
  ASSERT_TRUE(in_process.ok());
  EXPECT_EQ(written, *in_process);
  const std::vector<float> ref = test::read_f32_file(test::fixture_path("ref/fixture-llama-f32.seqB.logits.f32"));
  ASSERT_EQ(written.size(), ref.size());
  EXPECT_LE(test::logits_diff(written, ref).max_over_std, 1e-4);
}

TEST(RunCommandTest, GreedyIdsMatchLlamaCpp) {
  for (const char* name : {"fixture-qwen2-f32", "stories260K"}) {
    const auto result = run(fmt::format("-m {} --prompt-tokens {} -n 32 --temp 0 --print-ids -t 2",
                                        model_path(fmt::format("{}.gguf", name).c_str()), read_text("ref/seqA.txt")));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_THAT(result.output, HasSubstr(read_text(fmt::format("ref/{}.seqA.greedy.txt", name)) + "\n")) << name;
    EXPECT_THAT(result.output, HasSubstr("generated 32 tokens"));
  }
}

// ctest runs every test in its own process, possibly in parallel: each writes its own model file.
class RunTextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto bytes = test::synth_tiny(ModelArch::Llama, "q8_0");
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    path_ = (test::temp_dir() / "tiny-llama-q8_0.gguf").string();
    std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  }
  std::string path_;
};

TEST_F(RunTextTest, TextPromptGeneratesDeterministically) {
  const std::string args = fmt::format("-m {} -p \"Once upon a time\" -n 16 --temp 0 -t 2", path_);
  const auto first = run(args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(std::regex_search(
      first.output,
      std::regex(R"(load [0-9.]+ ms \| prompt [0-9]+ tokens in [0-9.]+ ms, [0-9.]+ t/s \| generated [0-9]+ tokens)")))
      << first.output;
  // Temperature 0 is greedy: the same text again, timing aside.
  const auto strip_timing = [](const std::string& s) { return s.substr(0, s.find("run: load")); };
  const auto second = run(args);
  ASSERT_EQ(second.exit_code, 0);
  EXPECT_EQ(strip_timing(first.output), strip_timing(second.output));

  const auto ids = run(args + " --print-ids --no-mmap --mlock");
  ASSERT_EQ(ids.exit_code, 0) << ids.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ids.output, m, std::regex(R"((^|\n)([0-9]+(,[0-9]+)*)\n)"))) << ids.output;
}

// At temperature 3 the tiny model's random weights sample its end token now and then: the first seed whose run
// stops early generates all -n tokens with --ignore-eos.
TEST_F(RunTextTest, IgnoreEosGeneratesEveryRequestedToken) {
  const auto generated = [](const std::string& output) {
    std::smatch m;
    return std::regex_search(output, m, std::regex(R"(generated ([0-9]+) tokens)")) ? std::stoi(m[1]) : -1;
  };
  for (int seed = 1; seed <= 16; ++seed) {
    const std::string args =
        fmt::format("-m {} -p \"Once upon a time\" -n 400 --temp 3 -s {} -t 2 --print-ids", path_, seed);
    const auto plain = run(args);
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    if (generated(plain.output) == 400) continue;
    const auto ignoring = run(args + " --ignore-eos");
    ASSERT_EQ(ignoring.exit_code, 0) << ignoring.output;
    EXPECT_EQ(generated(ignoring.output), 400) << "seed " << seed << ": " << ignoring.output;
    return;
  }
  FAIL() << "no seed of 16 sampled an end token in 400 steps at temperature 3";
}

TEST_F(RunTextTest, EvaluateOnly) {
  const auto result = run(fmt::format("-m {} -p \"Once upon a time\" -n 0 --print-ids", path_));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("generated 0 tokens"));
}

TEST(RunCommandTest, PromptLongerThanContextFails) {
  const auto result =
      run(fmt::format("-m {} --prompt-tokens {} -c 4", model_path("stories260K.gguf"), read_text("ref/seqA.txt")));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("12 tokens, more than the context size 4"));
}

TEST(RunCommandTest, APromptPastTheTrainedContextRunsWithAWarningAsInLlamaCpp) {
  // stories260K was trained on 128 tokens; without -c the context is llama.cpp's 4096, so 200 tokens run.
  std::string ids;
  for (int i = 0; i < 200; ++i) ids += (i ? "," : "") + std::to_string(1 + i % 100);
  const auto result = run(fmt::format("-m {} --prompt-tokens {} -n 1 --temp 0", model_path("stories260K.gguf"), ids));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("the context of 4096 tokens is longer than the 128 the model was trained on"));
}

TEST(RunCommandTest, BadInputIsReported) {
  const std::string m = model_path("stories260K.gguf");
  const std::pair<std::string, std::string> cases[] = {
      {fmt::format("-m {}", m), "exactly one of -p"},
      {fmt::format("-m {} --prompt-tokens 1,x,3", m), "item 2 ('x')"},
      {fmt::format("-m {} --prompt-tokens 1,,3", m), "item 2 is empty"},
      {fmt::format("-m {} --prompt-tokens 1,9999", m), "outside the vocabulary"},
      {fmt::format("-m {} --prompt-tokens 1,2 --top-p 1.5", m), "--top-p"},
      {"-m /nonexistent.gguf --prompt-tokens 1", "/nonexistent.gguf"},
      {fmt::format("-m {} --prompt-tokens 1 --logits-out /nonexistent/dir/x.f32", m), "--logits-out"},
  };
  for (const auto& [args, message] : cases) {
    const auto result = run(args);
    EXPECT_NE(result.exit_code, 0) << args;
    EXPECT_THAT(result.output, HasSubstr(message)) << args;
  }
}

TEST(RunCommandTest, KernelVariantCanBeForced) {
  const std::string args = fmt::format("run -m {} --prompt-tokens {} -n 8 --temp 0 --print-ids",
                                       model_path("stories260K.gguf"), read_text("ref/seqA.txt"));
  const auto scalar = test::run_command(fmt::format("INFERTUNE_KERNEL=scalar {} {}", test::infertune_binary(), args));
  ASSERT_EQ(scalar.exit_code, 0) << scalar.output;
  const std::string greedy = read_text("ref/stories260K.seqA.greedy.txt");
  EXPECT_THAT(scalar.output, HasSubstr(greedy.substr(0, greedy.find(',', greedy.find(',') + 1))));
  const auto bogus = test::run_command(fmt::format("INFERTUNE_KERNEL=bogus {} {}", test::infertune_binary(), args));
  EXPECT_NE(bogus.exit_code, 0);
  EXPECT_THAT(bogus.output, HasSubstr("INFERTUNE_KERNEL=bogus: no such kernel variant"));
}

}  // namespace
}  // namespace infertune
