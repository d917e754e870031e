// `infertune tokenize` end to end: output formats, stdin, --no-bos, --parse-special, and the errors.
// Expected ids are llama-spm's reference tokenization of "Hello world" (fixtures/vocab .inp/.out:
// 15043 3186) with its BOS (1).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/gguf/gguf_writer.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;
using test::fixture_path;
using test::infertune_binary;
using test::run_command;

std::string spm_vocab() { return fixture_path("vocab/ggml-vocab-llama-spm.gguf").string(); }

test::CommandResult tokenize(const std::string& args) { return run_command(infertune_binary() + " tokenize " + args); }

class TokenizeCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(spm_vocab())) GTEST_SKIP() << spm_vocab() << " is not in the fixtures";
  }
};

TEST_F(TokenizeCommand, PrintsOneLinePerTokenWithItsPiece) {
  const auto r = tokenize("-m " + spm_vocab() + " -p 'Hello world'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "1 '<s>'\n15043 ' Hello'\n3186 ' world'\n");
}

TEST_F(TokenizeCommand, IdsOnlyIsOneCommaSeparatedLine) {
  auto r = tokenize("-m " + spm_vocab() + " -p 'Hello world' --ids");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "1,15043,3186\n");
  r = tokenize("-m " + spm_vocab() + " -p 'Hello world' --ids --no-bos");
  EXPECT_EQ(r.output, "15043,3186\n");
}

TEST_F(TokenizeCommand, ReadsStdinWithoutPrompt) {
  const auto r = run_command("printf 'Hello world' | " + infertune_binary() + " tokenize --ids -m " + spm_vocab());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "1,15043,3186\n");
}

TEST_F(TokenizeCommand, JsonLinesTokenizeManyTextsInOrder) {
  // One JSON string per line (the second holds a newline); blank lines are skipped.
  const auto r = run_command("printf '%s\\n\\n%s\\n' '\"Hello world\"' '\"Hello\\nworld\"' | " + infertune_binary() +
                             " tokenize --jsonl -m " + spm_vocab());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto single =
      run_command("printf 'Hello\\nworld' | " + infertune_binary() + " tokenize --ids -m " + spm_vocab());
  std::string ids = single.output.substr(0, single.output.find('\n'));
  EXPECT_EQ(r.output, "[1,15043,3186]\n[" + ids + "]\n");
}

TEST_F(TokenizeCommand, JsonLinesNameTheLineThatIsNotAString) {
  const auto r = run_command("printf '%s\\n%s\\n' '\"ok\"' '[1, 2]' | " + infertune_binary() + " tokenize --jsonl -m " +
                             spm_vocab() + " 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("stdin line 2: expected a JSON string"), std::string::npos) << r.output;
}

TEST_F(TokenizeCommand, ParseSpecialRecognisesControlTokens) {
  auto r = tokenize("-m " + spm_vocab() + " --ids --no-bos --parse-special -p '<s>Hello world'");
  EXPECT_EQ(r.output, "1,15043,3186\n");
  r = tokenize("-m " + spm_vocab() + " --ids --no-bos -p '<s>Hello world'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream ids(r.output);
  size_t n = 0;
  for (std::string id; std::getline(ids, id, ',');) {
    EXPECT_NE(std::stoi(id), 1) << r.output;  // "<s>" is plain text now
    ++n;
  }
  EXPECT_GT(n, 3u) << r.output;
}

TEST_F(TokenizeCommand, EscapesNewlinesQuotesAndPartialCharacters) {
  const auto r = tokenize("-m " + spm_vocab() + " --no-bos -p \"$(printf \"a\\n'\")\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("13 '\\n'\n"), std::string::npos) << r.output;  // <0x0A>
  EXPECT_NE(r.output.find(" '\\''\n"), std::string::npos) << r.output;
}

TEST(TokenizeCommandErrors, MissingOrBadFilesExitWithOneAndAMessage) {
  auto r = tokenize("-m /no/such/model.gguf -p x");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("infertune tokenize: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/no/such/model.gguf"), std::string::npos) << r.output;

  const fs::path dir = test::temp_dir();
  const fs::path garbage = dir / "garbage.gguf";
  std::ofstream(garbage) << "this is not a GGUF file at all";
  r = tokenize("-m " + garbage.string() + " -p x");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("garbage.gguf"), std::string::npos) << r.output;

  GgufWriter writer;  // a valid GGUF without any tokenizer keys
  writer.set("general.architecture", GgufValue{std::string("llama")});
  const fs::path bare = dir / "bare.gguf";
  ASSERT_TRUE(
      writer.write_file(bare.string(), [](size_t, const GgufTensorInfo&, std::span<std::byte>) { return Status{}; }));
  r = tokenize("-m " + bare.string() + " -p x");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no tokenizer"), std::string::npos) << r.output;

  r = tokenize("-p x");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--model is required"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace infertune
