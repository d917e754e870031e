// Special tokens, add_special, end-of-generation and pieces on the real fixture vocabularies. Expected
// ids come from the reference vectors: the ids of "Hello world" etc. are looked up in the .inp/.out pair,
// so these tests only add what the special-token rules say on top of independently known tokenizations.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<int32_t>;

fs::path vocab_path(const std::string& name, const std::string& ext = "") {
  return test::fixture_path("vocab/ggml-vocab-" + name + ".gguf" + ext);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The reference ids of `text` in NAME's test vectors (the string must be one of them).
Ids reference_ids(const std::string& name, const std::string& text) {
  const std::string inp = read_text(vocab_path(name, ".inp"));
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::istringstream out(read_text(vocab_path(name, ".out")));
  std::string line;
  for (size_t pos = 0; pos < inp.size() && std::getline(out, line);) {
    const size_t next = inp.find(separator, pos);
    const std::string s = inp.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (s == text) {
      std::istringstream words(line);
      Ids ids;
      for (int32_t id; words >> id;) ids.push_back(id);
      return ids;
    }
    if (next == std::string::npos) break;
    pos = next + separator.size();
  }
  throw std::runtime_error("'" + text + "' is not a test string of " + name);
}

Ids concat(std::initializer_list<Ids> parts) {
  Ids out;
  for (const Ids& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

class FixtureVocab : public ::testing::Test {
 protected:
  const Tokenizer& load(const std::string& name) {
    static std::map<std::string, Tokenizer> cache;
    if (!fs::exists(vocab_path(name))) {
      skipped_ = true;
      throw std::runtime_error("missing");
    }
    auto it = cache.find(name);
    if (it == cache.end()) {
      auto file = GgufFile::open(vocab_path(name).string());
      if (!file) throw std::runtime_error(file.error().message);
      auto t = Tokenizer::from_gguf(*file);
      if (!t) throw std::runtime_error(t.error().message);
      it = cache.emplace(name, std::move(*t)).first;
    }
    return it->second;
  }
  int32_t id_of(const Tokenizer& t, const std::string& text) {
    auto id = t.vocab().find(text);
    if (!id) throw std::runtime_error("no token '" + text + "'");
    return *id;
  }
  bool skipped_ = false;
};

#define REQUIRE_VOCAB(name)                                                            \
  if (!fs::exists(vocab_path(name))) {                                                 \
    GTEST_SKIP() << vocab_path(name).filename().string() << " is not in the fixtures"; \
  }

TEST_F(FixtureVocab, SentencePieceParsesControlTokensOnlyWhenAsked) {
  REQUIRE_VOCAB("llama-spm");
  const Tokenizer& t = load("llama-spm");
  const Ids hello = reference_ids("llama-spm", "Hello world");
  // After a special token SentencePiece starts a new word, so "Hello world" gets its leading "▁" again.
  EXPECT_EQ(t.encode("<s>Hello world</s>", false, true), concat({{1}, hello, {2}}));
  const Ids plain = t.encode("<s>Hello world</s>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  EXPECT_EQ(t.decode(plain), "<s>Hello world</s>");
}

TEST_F(FixtureVocab, ByteLevelBpeParsesControlTokensOnlyWhenAsked) {
  REQUIRE_VOCAB("gpt-2");
  const Tokenizer& t = load("gpt-2");
  const Ids hello = reference_ids("gpt-2", "Hello world");
  EXPECT_EQ(t.encode("Hello world<|endoftext|>", false, true), concat({hello, {50256}}));
  const Ids plain = t.encode("Hello world<|endoftext|>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 50256), 0);
  EXPECT_EQ(t.decode(plain), "Hello world<|endoftext|>");
  EXPECT_EQ(t.decode(t.encode("Hello world<|endoftext|>", false, true)), "Hello world<|endoftext|>");
}

TEST_F(FixtureVocab, AddSpecialFollowsEachModelsFlags) {
  REQUIRE_VOCAB("llama-spm");
  REQUIRE_VOCAB("gpt-2");
  REQUIRE_VOCAB("deepseek-coder");
  REQUIRE_VOCAB("bert-bge");
  // llama-spm and deepseek-coder: add_bos_token true, add_eos_token false.
  EXPECT_EQ(load("llama-spm").encode("Hello world", true, false),
            concat({{1}, reference_ids("llama-spm", "Hello world")}));
  EXPECT_EQ(load("deepseek-coder").encode("Hello world", true, false),
            concat({{32013}, reference_ids("deepseek-coder", "Hello world")}));
  // gpt-2 says nothing, and byte-level BPE adds no BOS by default.
  EXPECT_EQ(load("gpt-2").encode("Hello world", true, false), reference_ids("gpt-2", "Hello world"));
  // BERT: [CLS] ... [SEP].
  EXPECT_EQ(load("bert-bge").encode("Hello world", true, false),
            concat({{101}, reference_ids("bert-bge", "Hello world"), {102}}));
}

TEST_F(FixtureVocab, SpecialIdsComeFromTheMetadata) {
  REQUIRE_VOCAB("llama-spm");
  REQUIRE_VOCAB("bert-bge");
  REQUIRE_VOCAB("falcon");
  EXPECT_EQ(load("llama-spm").bos(), 1);
  EXPECT_EQ(load("llama-spm").eos(), 2);
  EXPECT_EQ(load("llama-spm").n_vocab(), 32000);
  EXPECT_EQ(load("bert-bge").bos(), 101);
  EXPECT_EQ(load("bert-bge").eos(), std::nullopt);
  EXPECT_EQ(load("falcon").bos(), 11);
  EXPECT_EQ(load("falcon").eos(), 11);
}

TEST_F(FixtureVocab, EndOfGenerationCoversEosAndChatEndMarkers) {
  REQUIRE_VOCAB("phi-3");
  REQUIRE_VOCAB("gpt-2");
  const Tokenizer& phi = load("phi-3");
  EXPECT_TRUE(phi.is_end_of_generation(32000));                  // eos, <|endoftext|>
  EXPECT_TRUE(phi.is_end_of_generation(id_of(phi, "<|end|>")));  // the end of a chat turn
  EXPECT_FALSE(phi.is_end_of_generation(1));
  EXPECT_FALSE(phi.is_end_of_generation(id_of(phi, "<|user|>")));
  EXPECT_TRUE(load("gpt-2").is_end_of_generation(50256));
  EXPECT_FALSE(load("gpt-2").is_end_of_generation(id_of(load("gpt-2"), "Hello")));
}

TEST_F(FixtureVocab, Phi3ChatTokensSwallowTheWhitespaceAfterThem) {
  REQUIRE_VOCAB("phi-3");
  const Tokenizer& t = load("phi-3");
  const int32_t user = id_of(t, "<|user|>"), end = id_of(t, "<|end|>");
  EXPECT_EQ(t.encode("<|user|>\nHello<|end|>\n", false, true),
            concat({{user}, reference_ids("phi-3", "Hello"), {end}}));
}

TEST_F(FixtureVocab, UserDefinedTokensAreMatchedWithoutSpecialParsing) {
  REQUIRE_VOCAB("mpt");
  const Tokenizer& t = load("mpt");
  const std::string spaces(24, ' ');
  const int32_t run = id_of(t, spaces);  // mpt's added "24 spaces" token (user-defined)
  const Ids ids = t.encode("a" + spaces + "b", false, false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), run), 1);
  EXPECT_EQ(t.decode(ids), "a" + spaces + "b");
}

TEST_F(FixtureVocab, PiecesAreTheBytesATokenStandsFor) {
  REQUIRE_VOCAB("llama-spm");
  REQUIRE_VOCAB("gpt-2");
  REQUIRE_VOCAB("bert-bge");
  const Tokenizer& spm = load("llama-spm");
  EXPECT_EQ(spm.token_to_piece(13), "\n");  // <0x0A>
  EXPECT_EQ(spm.token_to_piece(reference_ids("llama-spm", "Hello")[0]), " Hello");
  EXPECT_EQ(spm.token_to_piece(1), "<s>");
  const Tokenizer& gpt2 = load("gpt-2");
  EXPECT_EQ(gpt2.token_to_piece(id_of(gpt2, "\xC4\xA0world")), " world");  // "Ġworld"
  EXPECT_EQ(gpt2.token_to_piece(id_of(gpt2, "\xC4\x8A")), "\n");           // "Ċ"
  EXPECT_EQ(gpt2.token_to_piece(50256), "<|endoftext|>");
  EXPECT_EQ(load("bert-bge").decode(reference_ids("bert-bge", "Hello world")), "hello world");
}

TEST_F(FixtureVocab, DecodeOfAnEmojiSplitAcrossTokensIsExact) {
  REQUIRE_VOCAB("gpt-2");
  const Tokenizer& t = load("gpt-2");
  const std::string text = " this is \xF0\x9F\xA6\x99.cpp";  // a llama emoji, split into byte tokens
  const Ids ids = t.encode(text, false, false);
  std::string streamed;
  for (int32_t id : ids) streamed += t.token_to_piece(id);
  EXPECT_EQ(streamed, text);
}

}  // namespace
}  // namespace infertune
