// ChatTemplate::from_vocabulary: a model file without tokenizer.chat_template gets the family whose turn markers
// are tokens of its vocabulary, or none. Checked on sets of tokens, on the vocabulary fixtures (phi-3's has
// <|user|> and <|end|>; llama-spm's and gpt-2's have no markers), and on Gemma 3 270M, whose file carries no
// template (skipped when the model cache lacks it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/server/chat_template.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

std::optional<ChatFamily> family_of(const std::set<std::string, std::less<>>& tokens) {
  const auto found = ChatTemplate::from_vocabulary([&](std::string_view t) { return tokens.contains(t); });
  return found ? std::optional(found->family()) : std::nullopt;
}

std::optional<ChatFamily> family_of_file(const fs::path& path) {
  auto file = GgufFile::open(path.string());
  EXPECT_TRUE(file) << file.error().message;
  if (!file) return std::nullopt;
  auto tokenizer = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(tokenizer) << tokenizer.error().message;
  if (!tokenizer) return std::nullopt;
  const auto found =
      ChatTemplate::from_vocabulary([&](std::string_view t) { return tokenizer->vocab().find(t).has_value(); });
  return found ? std::optional(found->family()) : std::nullopt;
}

TEST(ChatFamilyFromVocabulary, BothMarkersOfAFamilyMustBeTokens) {
  EXPECT_EQ(family_of({"<start_of_turn>", "<end_of_turn>", "<eos>"}), ChatFamily::gemma);
  EXPECT_EQ(family_of({"<|im_start|>", "<|im_end|>"}), ChatFamily::chatml);
  EXPECT_EQ(family_of({"<|im_start|>", "<|im_sep|>", "<|im_end|>"}), ChatFamily::phi4);
  EXPECT_EQ(family_of({"<|start_header_id|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>"}), ChatFamily::llama3);
  EXPECT_EQ(family_of({"<|user|>", "<|end|>", "<|assistant|>"}), ChatFamily::phi3);
  EXPECT_EQ(family_of({"<start_of_turn>"}), std::nullopt);
  EXPECT_EQ(family_of({"<s>", "</s>", "[INST]"}), std::nullopt);
  EXPECT_EQ(ChatTemplate::from_name("gemma")->turn_marker(), "<start_of_turn>");
  EXPECT_EQ(ChatTemplate::from_name("mistral")->turn_marker(), "");
}

TEST(ChatFamilyFromVocabulary, TheVocabularyFixtures) {
  EXPECT_EQ(family_of_file(test::fixture_path("vocab/ggml-vocab-phi-3.gguf")), ChatFamily::phi3);
  EXPECT_EQ(family_of_file(test::fixture_path("vocab/ggml-vocab-llama-spm.gguf")), std::nullopt);
  EXPECT_EQ(family_of_file(test::fixture_path("vocab/ggml-vocab-gpt-2.gguf")), std::nullopt);
}

TEST(ChatFamilyFromVocabulary, Gemma3WithoutATemplateIsGemma) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path cache = xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : "/") / ".cache";
  const fs::path model = cache / "infertune" / "models" / "gemma-3-270m-q4_k_m.gguf";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is absent (scripts/setup installs it)";
  auto file = GgufFile::open(model.string());
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->find("tokenizer.chat_template"), nullptr) << "this Gemma file now carries a template";
  EXPECT_EQ(family_of_file(model), ChatFamily::gemma);
}

}  // namespace
}  // namespace infertune
