// The tokenizers against llama.cpp's tokenizer test vectors (shared/fixtures/vocab): every
// ggml-vocab-NAME.gguf.inp/.out pair, tokenized without BOS and with special-token parsing off, must give
// exactly the reference ids (produced by the models' HF tokenizers). Also: decode(encode(s)) == s where
// the tokenizer is lossless, and the time to tokenize each whole input (printed, not asserted).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

fs::path vocab_dir() { return test::fixture_path("vocab"); }
fs::path vocab_file(const std::string& name) { return vocab_dir() / ("ggml-vocab-" + name + ".gguf"); }

// Every NAME with both ggml-vocab-NAME.gguf.inp and .out, sorted.
std::vector<std::string> vocab_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(vocab_dir(), ec)) {
    const std::string file = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-", suffix = ".gguf.inp";
    if (file.size() <= prefix.size() + suffix.size() || !file.starts_with(prefix) || !file.ends_with(suffix)) continue;
    const std::string name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    if (fs::exists(vocab_dir() / (prefix + name + ".gguf.out"))) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The .inp format: strings separated by lines "__ggml_vocab_test__" (the file ends with a separator).
std::vector<std::string> read_test_strings(const fs::path& path) {
  const std::string raw = read_text(path);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> strings;
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(separator, pos);
    if (next == std::string::npos) {
      strings.push_back(raw.substr(pos));
      break;
    }
    strings.push_back(raw.substr(pos, next - pos));
    pos = next + separator.size();
  }
  return strings;
}

// The .out format: one line of space-separated ids per string.
std::vector<std::vector<int32_t>> read_expected_ids(const fs::path& path, size_t n_strings) {
  std::istringstream in(read_text(path));
  std::vector<std::vector<int32_t>> expected;
  std::string line;
  while (expected.size() < n_strings && std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<int32_t> ids;
    for (int32_t id; words >> id;) ids.push_back(id);
    expected.push_back(std::move(ids));
  }
  return expected;
}

bool valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    if (next_code_point(s, pos) == kReplacementChar && s.substr(start, pos - start) != "\xEF\xBF\xBD") return false;
  }
  return true;
}

// Printable form of a test string for failure messages.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

const Tokenizer& load(const std::string& name) {
  static std::map<std::string, Tokenizer> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    auto file = GgufFile::open(vocab_file(name).string());
    if (!file) throw std::runtime_error(file.error().message);
    const auto start = std::chrono::steady_clock::now();
    auto tokenizer = Tokenizer::from_gguf(*file);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!tokenizer) throw std::runtime_error(tokenizer.error().message);
    std::printf("[ timing ] loading %s (%d tokens): %.1f ms\n", name.c_str(), tokenizer->n_vocab(), ms);
    it = cache.emplace(name, std::move(*tokenizer)).first;
  }
  return it->second;
}

class VocabFixture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    name_ = GetParam();
    if (!fs::exists(vocab_file(name_))) {
      GTEST_SKIP() << vocab_file(name_).filename().string()
                   << " is not in the fixtures (only its .inp/.out are); these vectors need a real " << name_
                   << " model file";
    }
    strings_ = read_test_strings(vocab_dir() / ("ggml-vocab-" + name_ + ".gguf.inp"));
    expected_ = read_expected_ids(vocab_dir() / ("ggml-vocab-" + name_ + ".gguf.out"), strings_.size());
    ASSERT_EQ(expected_.size(), strings_.size()) << "the .out file has fewer lines than the .inp has strings";
    ASSERT_GT(strings_.size(), 10u);
  }
  std::string name_;
  std::vector<std::string> strings_;
  std::vector<std::vector<int32_t>> expected_;
};

TEST_P(VocabFixture, MatchesReferenceIds) {
  const Tokenizer& tokenizer = load(name_);
  size_t failures = 0;
  for (size_t i = 0; i < strings_.size(); ++i) {
    const std::vector<int32_t> actual = tokenizer.encode(strings_[i], /*add_special=*/false, /*parse_special=*/false);
    EXPECT_EQ(actual, expected_[i]) << "string " << i << ": " << quoted(strings_[i])
                                    << "\n  expected: " << fmt::format("{}", fmt::join(expected_[i], " "))
                                    << "\n  actual:   " << fmt::format("{}", fmt::join(actual, " "));
    failures += actual != expected_[i];
  }
  EXPECT_EQ(failures, 0u) << "of " << strings_.size() << " strings";
}

TEST_P(VocabFixture, DecodeRoundTripsEncode) {
  const Tokenizer& tokenizer = load(name_);
  if (tokenizer.vocab().kind() == TokenizerKind::WordPiece) {
    GTEST_SKIP() << "WordPiece is lossy (lowercases, strips accents, drops whitespace)";
  }
  for (const std::string& s : strings_) {
    EXPECT_EQ(tokenizer.decode(tokenizer.encode(s, false, false)), s) << quoted(s);
  }
}

// Whether decode(encode(text)) must give `text` back: byte-level BPE when the vocabulary has a token for
// every byte of it (several lack the bytes that never occur in UTF-8, and falcon some control bytes: they
// are dropped, as by llama.cpp and HF) and the text is valid UTF-8 (a few vocabularies give those
// missing bytes user-defined tokens spelling their stand-in characters, which decode as those characters);
// SentencePiece with byte fallback without special-token parsing (a special token starts a new word, with
// its "▁"). WordPiece never (it lowercases and drops whitespace).
bool must_round_trip(const Tokenizer& tokenizer, const std::string& text, bool parse_special) {
  switch (tokenizer.vocab().kind()) {
    case TokenizerKind::WordPiece:
      return false;
    case TokenizerKind::Spm:
      return !parse_special && tokenizer.vocab().find("<0xFF>").has_value();
    case TokenizerKind::Bpe:
      for (unsigned char c : text) {
        if (!tokenizer.vocab().find_plain(byte_level_alphabet().utf8(c))) return false;
      }
      return valid_utf8(text);
  }
  return false;
}

// Arbitrary bytes (a seeded mix of ASCII, spaces, multi-byte characters, special-token texts and invalid
// UTF-8): encoding never fails or yields ids outside the vocabulary, and decodes back exactly wherever the
// tokenizer is lossless.
TEST_P(VocabFixture, ArbitraryBytesEncodeAndRoundTrip) {
  const Tokenizer& tokenizer = load(name_);
  // clang-format off
  const std::vector<std::string> atoms = {"a", "Z", "7", " ", "  ", "\n", "\t", "'s", "\xC3\xA9", "\xE4\xB8\xAD",
                                          "\xF0\x9F\xA6\x99", "<s>", "<|endoftext|>", std::string(1, '\0'),
                                          "\xFF", "\xC3", "\x80", "\xED\xA0\x80"};  // the last four are not UTF-8
  // clang-format on
  uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  size_t checked = 0;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const size_t n_atoms = round % 4 < 2 ? atoms.size() : atoms.size() - 4;
    for (uint64_t n = next() % 24; n > 0; --n) text += atoms[next() % n_atoms];
    for (bool parse_special : {false, true}) {
      const bool add_special = round % 2 == 0;
      const std::vector<int32_t> ids = tokenizer.encode(text, add_special, parse_special);
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tokenizer.n_vocab()) << quoted(text);
      if (!add_special && must_round_trip(tokenizer, text, parse_special)) {
        EXPECT_EQ(tokenizer.decode(ids), text) << quoted(text) << (parse_special ? " (parsing special tokens)" : "");
        ++checked;
      }
    }
  }
  std::printf("[ info   ] %s: %zu of 600 encodings checked for an exact round trip\n", name_.c_str(), checked);
}

TEST_P(VocabFixture, DecodingThePiecesOneByOneGivesTheSameText) {
  const Tokenizer& tokenizer = load(name_);
  for (const std::string& s : strings_) {
    const std::vector<int32_t> ids = tokenizer.encode(s, false, false);
    std::string streamed;
    for (int32_t id : ids) streamed += tokenizer.token_to_piece(id);
    std::string decoded = tokenizer.decode(ids);
    // decode only differs by dropping the first piece's leading space (SentencePiece, WordPiece).
    if (streamed.size() == decoded.size() + 1) streamed.erase(0, 1);
    EXPECT_EQ(streamed, decoded) << quoted(s);
  }
}

TEST_P(VocabFixture, TokenizesTheWholeInputInMilliseconds) {
  const Tokenizer& tokenizer = load(name_);
  const std::string whole = read_text(vocab_dir() / ("ggml-vocab-" + name_ + ".gguf.inp"));
  const auto start = std::chrono::steady_clock::now();
  size_t n_tokens = 0;
  for (const std::string& s : strings_) n_tokens += tokenizer.encode(s, false, false).size();
  n_tokens += tokenizer.encode(whole, false, false).size();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ timing ] %s: %zu strings + the whole %zu-byte input -> %zu tokens in %.2f ms\n", name_.c_str(),
              strings_.size(), whole.size(), n_tokens, ms);
  RecordProperty("tokenize_ms", fmt::format("{:.3f}", ms));
  EXPECT_GT(n_tokens, whole.size() / 8);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Vocab, VocabFixture, ::testing::ValuesIn(vocab_names()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VocabFixture);

}  // namespace
}  // namespace infertune
