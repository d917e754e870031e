// The tokenizers on small vocabularies built in memory, where the expected tokens follow by hand from
// the algorithms' rules (SentencePiece: highest score first; BPE: lowest merge rank first; both: leftmost
// on ties), plus malformed metadata, special-token handling and the load time of 150k / 128k vocabularies.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/synth/synthetic_vocab.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf_builder.h"

namespace infertune {
namespace {

constexpr int32_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6;

// A vocabulary as the GGUF keys hold it; build() writes it and parses it back.
struct VocabSpec {
  std::string model = "llama";
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  std::vector<std::string> merges;
  std::vector<GgufKeyValue> extra;

  int32_t add(std::string text, float score = 0.0f, int32_t type = kNormal) {
    tokens.push_back(std::move(text));
    scores.push_back(score);
    types.push_back(type);
    return static_cast<int32_t>(tokens.size() - 1);
  }
  void set(std::string key, GgufValue value) { extra.push_back({std::move(key), std::move(value)}); }
};

GgufValue string_array(std::vector<std::string> v) { return GgufValue{GgufArray{std::move(v)}}; }

std::vector<std::byte> write(const VocabSpec& spec) {
  GgufWriter writer;
  writer.set("general.architecture", GgufValue{std::string("llama")});
  writer.set("tokenizer.ggml.model", GgufValue{spec.model});
  writer.set("tokenizer.ggml.tokens", string_array(spec.tokens));
  if (!spec.scores.empty()) writer.set("tokenizer.ggml.scores", GgufValue{GgufArray{spec.scores}});
  if (!spec.types.empty()) writer.set("tokenizer.ggml.token_type", GgufValue{GgufArray{spec.types}});
  if (!spec.merges.empty()) writer.set("tokenizer.ggml.merges", string_array(spec.merges));
  for (const auto& kv : spec.extra) writer.set(kv.key, kv.value);
  auto bytes = writer.write_memory([](size_t, const GgufTensorInfo&, std::span<std::byte>) { return Status{}; });
  if (!bytes) throw std::runtime_error(bytes.error().message);
  return std::move(*bytes);
}

Result<Tokenizer> build(const VocabSpec& spec) {
  const std::vector<std::byte> bytes = write(spec);
  auto file = GgufFile::parse(bytes, "synthetic.gguf");
  if (!file) return file.error();
  return Tokenizer::from_gguf(*file);  // the tokenizer copies what it needs; `bytes` may go
}

Tokenizer build_ok(const VocabSpec& spec) {
  auto t = build(spec);
  if (!t) throw std::runtime_error(t.error().message);
  return std::move(*t);
}

// <unk> <s> </s> then the given pieces; add_space_prefix off unless asked.
VocabSpec spm_spec(bool space_prefix = false) {
  VocabSpec spec;
  spec.add("<unk>", 0, kUnknown);
  spec.add("<s>", 0, kControl);
  spec.add("</s>", 0, kControl);
  spec.set("tokenizer.ggml.add_space_prefix", GgufValue{space_prefix});
  return spec;
}

void add_byte_tokens(VocabSpec& spec) {
  for (int b = 0; b < 256; ++b) spec.add(fmt::format("<0x{:02X}>", b), 0, kByte);
}

TEST(SpmTokenizer, MergesTheHighestScoringPairFirst) {
  VocabSpec spec = spm_spec();
  const int32_t a = spec.add("a", -2), b = spec.add("b", -2), c = spec.add("c", -2);
  const int32_t ab = spec.add("ab", -5), bc = spec.add("bc", -3);
  const Tokenizer t = build_ok(spec);
  // "bc" (-3) beats "ab" (-5) although "ab" is further left; then "a"+"bc" is no piece.
  EXPECT_EQ(t.encode("abc", false, false), (std::vector<int32_t>{a, bc}));
  EXPECT_EQ(t.encode("ab", false, false), (std::vector<int32_t>{ab}));
  EXPECT_EQ(t.encode("cab", false, false), (std::vector<int32_t>{c, ab}));
  (void)b;
}

TEST(SpmTokenizer, TiesGoToTheLeftmostPairAndMergesRepeat) {
  VocabSpec spec = spm_spec();
  const int32_t a = spec.add("a", -2), c = spec.add("c", -2);
  spec.add("b", -2);
  const int32_t ab = spec.add("ab", -3);
  spec.add("bc", -3);
  const int32_t abab = spec.add("abab", -1);
  const Tokenizer t = build_ok(spec);
  EXPECT_EQ(t.encode("abc", false, false), (std::vector<int32_t>{ab, c}));
  EXPECT_EQ(t.encode("ababa", false, false), (std::vector<int32_t>{abab, a}));
}

TEST(SpmTokenizer, PrefixesASpaceMarkerAndEscapesSpaces) {
  VocabSpec spec = spm_spec(/*space_prefix=*/true);
  const int32_t space = spec.add("\xE2\x96\x81", -1);
  spec.add("a", -2);
  const int32_t word = spec.add(
      "\xE2\x96\x81"
      "a",
      -1.5f);
  const Tokenizer t = build_ok(spec);
  EXPECT_EQ(t.encode("a", false, false), (std::vector<int32_t>{word}));
  EXPECT_EQ(t.encode("a a", false, false), (std::vector<int32_t>{word, word}));
  EXPECT_EQ(t.encode(" a", false, false), (std::vector<int32_t>{space, word}));
  EXPECT_EQ(t.decode(t.encode(" a  a", false, false)), " a  a");
  EXPECT_EQ(t.token_to_piece(word), " a");
}

TEST(SpmTokenizer, FallsBackToByteTokensOrUnknown) {
  VocabSpec with_bytes = spm_spec();
  const int32_t a = with_bytes.add("a", -1);
  add_byte_tokens(with_bytes);
  const Tokenizer t = build_ok(with_bytes);
  const int32_t c3 = *t.vocab().find("<0xC3>"), a9 = *t.vocab().find("<0xA9>");
  EXPECT_EQ(t.encode("a\xC3\xA9", false, false), (std::vector<int32_t>{a, c3, a9}));  // "aé"
  EXPECT_EQ(t.decode(t.encode("a\xC3\xA9", false, false)), "a\xC3\xA9");
  EXPECT_EQ(t.token_to_piece(c3), "\xC3");
  // Text that spells a byte token is plain text, not that byte.
  const std::vector<int32_t> spelled = t.encode("<0xC3>", false, false);
  EXPECT_EQ(std::count(spelled.begin(), spelled.end(), c3), 0);
  EXPECT_EQ(t.decode(spelled), "<0xC3>");

  VocabSpec without_bytes = spm_spec();
  const int32_t a2 = without_bytes.add("a", -1);
  const Tokenizer u = build_ok(without_bytes);
  EXPECT_EQ(u.encode("a\xC3\xA9"
                     "a",
                     false, false),
            (std::vector<int32_t>{a2, 0, a2}));
}

TEST(SpmTokenizer, InvalidUtf8IsTokenizedByteByByte) {
  VocabSpec spec = spm_spec();
  add_byte_tokens(spec);
  const Tokenizer t = build_ok(spec);
  const std::string bad = "\xFF\xC3(\xE2\x82";
  const std::vector<int32_t> ids = t.encode(bad, false, false);
  EXPECT_EQ(ids.size(), bad.size());
  EXPECT_EQ(t.decode(ids), bad);
}

// Byte-level BPE over the characters a, b, c and the space ('Ġ').
VocabSpec bpe_spec(std::vector<std::string> merges, std::string pre = "gpt-2") {
  VocabSpec spec;
  spec.model = "gpt2";
  for (const char* text : {"a", "b", "c", "\xC4\xA0", "ab", "bc", "abc",
                           "\xC4\xA0"
                           "a"})
    spec.add(text);
  spec.merges = std::move(merges);
  spec.set("tokenizer.ggml.pre", GgufValue{pre});
  return spec;
}

TEST(BpeTokenizer, MergesTheLowestRankFirst) {
  const Tokenizer bc_first = build_ok(bpe_spec({"b c", "a b", "a bc"}));
  EXPECT_EQ(bc_first.encode("abc", false, false), (std::vector<int32_t>{6}));  // bc, then a+bc
  const Tokenizer ab_first = build_ok(bpe_spec({"a b", "b c", "a bc"}));
  EXPECT_EQ(ab_first.encode("abc", false, false), (std::vector<int32_t>{4, 2}));          // ab, then ab+c has no rank
  EXPECT_EQ(ab_first.encode("a abc", false, false), (std::vector<int32_t>{0, 3, 4, 2}));  // no "Ġ a" merge
  const Tokenizer space = build_ok(bpe_spec({"\xC4\xA0 a", "a b"}));
  EXPECT_EQ(space.encode("a abc", false, false), (std::vector<int32_t>{0, 7, 1, 2}));  // "Ġa" ranks before "ab"
  EXPECT_EQ(space.decode(space.encode("a abc", false, false)), "a abc");
  EXPECT_EQ(space.token_to_piece(7), " a");
}

TEST(BpeTokenizer, Llama3TakesAWordThatIsATokenWhole) {
  // No merge leads to "abc", but the llama3 pre-tokenizer ignores merges for whole-token words.
  const Tokenizer llama3 = build_ok(bpe_spec({"a b"}, "llama-bpe"));
  EXPECT_EQ(llama3.encode("abc", false, false), (std::vector<int32_t>{6}));
  const Tokenizer gpt2 = build_ok(bpe_spec({"a b"}, "gpt-2"));
  EXPECT_EQ(gpt2.encode("abc", false, false), (std::vector<int32_t>{4, 2}));
}

TEST(BpeTokenizer, UserDefinedTokensAreAlwaysMatchedControlTokensOnlyWhenParsing) {
  VocabSpec spec = bpe_spec({"a b"});
  const int32_t user = spec.add("<tag>", 0, kUserDefined);
  const int32_t control = spec.add("<ctl>", 0, kControl);
  for (const char* c : {"<", ">", "t", "g", "l"}) spec.add(c);
  const Tokenizer t = build_ok(spec);
  const std::string text = "ab<tag>c<ctl>";
  const std::vector<int32_t> plain = t.encode(text, false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), user), 1);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), control), 0);
  EXPECT_EQ(t.decode(plain), text);
  const std::vector<int32_t> parsed = t.encode(text, false, true);
  EXPECT_EQ(parsed, (std::vector<int32_t>{4, user, 2, control}));
  EXPECT_EQ(t.decode(parsed), text);
}

TEST(BpeTokenizer, TheLongerSpecialTokenWins) {
  VocabSpec spec = bpe_spec({"a b"});
  const int32_t shorter = spec.add("<a>", 0, kControl);
  const int32_t longer = spec.add("<a><a>", 0, kControl);
  const Tokenizer t = build_ok(spec);
  EXPECT_EQ(t.encode("<a><a><a>", false, true), (std::vector<int32_t>{longer, shorter}));
}

TEST(Tokenizer, AddSpecialFollowsTheFlags) {
  VocabSpec spec = spm_spec();
  const int32_t a = spec.add("a", -1);
  const Tokenizer defaults = build_ok(spec);  // SentencePiece: BOS yes, EOS no
  EXPECT_EQ(defaults.encode("a", true, false), (std::vector<int32_t>{1, a}));
  EXPECT_EQ(defaults.encode("", true, false), (std::vector<int32_t>{1}));
  EXPECT_EQ(defaults.encode("", false, false), (std::vector<int32_t>{}));
  spec.set("tokenizer.ggml.add_bos_token", GgufValue{false});
  spec.set("tokenizer.ggml.add_eos_token", GgufValue{true});
  const Tokenizer flipped = build_ok(spec);
  EXPECT_EQ(flipped.encode("a", true, false), (std::vector<int32_t>{a, 2}));
  EXPECT_EQ(flipped.encode("a", false, false), (std::vector<int32_t>{a}));
}

TEST(Tokenizer, SpecialIdsAndEndOfGeneration) {
  VocabSpec spec = spm_spec();
  const int32_t im_end = spec.add("<|im_end|>", 0, kNormal);  // a chat end marker, typed normal by mistake
  const int32_t a = spec.add("a", -1);
  spec.set("tokenizer.ggml.eos_token_id", GgufValue{uint32_t(2)});
  spec.set("tokenizer.ggml.bos_token_id", GgufValue{uint32_t(999)});  // out of range: the default stays
  const Tokenizer t = build_ok(spec);
  EXPECT_EQ(t.n_vocab(), 5);
  EXPECT_EQ(t.bos(), 1);
  EXPECT_EQ(t.eos(), 2);
  EXPECT_TRUE(t.is_end_of_generation(2));
  EXPECT_TRUE(t.is_end_of_generation(im_end));
  EXPECT_FALSE(t.is_end_of_generation(a));
  EXPECT_FALSE(t.is_end_of_generation(-1));
  // It became a control token: plain text does not produce it.
  const std::vector<int32_t> ids = t.encode("<|im_end|>", false, false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), im_end), 0);
  EXPECT_EQ(t.encode("<|im_end|>", false, true), (std::vector<int32_t>{im_end}));
  EXPECT_EQ(t.token_to_piece(1), "<s>");
  EXPECT_EQ(t.token_to_piece(-3), "");
  EXPECT_EQ(t.token_to_piece(5), "");
  EXPECT_EQ(t.decode(std::vector<int32_t>{a, 77, a}), "aa");  // ids outside the vocabulary are skipped
}

// gpt-oss's harmony vocabulary: <|end|> closes the reasoning message and the answer follows, so with <|return|> and
// <|call|> present it is not an end of generation (llama.cpp's rule); without them it is one, as in Phi-3.
TEST(Tokenizer, HarmonyMessageEndDoesNotStopGeneration) {
  VocabSpec spec = spm_spec();
  const int32_t end = spec.add("<|end|>", 0, kControl);
  const int32_t ret = spec.add("<|return|>", 0, kControl);
  const int32_t call = spec.add("<|call|>", 0, kControl);
  spec.set("tokenizer.ggml.eos_token_id", GgufValue{uint32_t(ret)});
  const Tokenizer harmony = build_ok(spec);
  EXPECT_FALSE(harmony.is_end_of_generation(end));
  EXPECT_TRUE(harmony.is_end_of_generation(ret));
  EXPECT_TRUE(harmony.is_end_of_generation(call));

  VocabSpec phi3 = spm_spec();
  const int32_t phi3_end = phi3.add("<|end|>", 0, kControl);
  EXPECT_TRUE(build_ok(phi3).is_end_of_generation(phi3_end));

  // Two tokens with the text <|end|>, the EOS one not the first: both leave the end-of-generation set.
  VocabSpec twice = spm_spec();
  const int32_t first_end = twice.add("<|end|>", 0, kNormal);
  twice.add("<|return|>", 0, kControl);
  twice.add("<|call|>", 0, kControl);
  const int32_t second_end = twice.add("<|end|>", 0, kControl);
  twice.set("tokenizer.ggml.eos_token_id", GgufValue{uint32_t(second_end)});
  const Tokenizer both = build_ok(twice);
  EXPECT_FALSE(both.is_end_of_generation(first_end));
  EXPECT_FALSE(both.is_end_of_generation(second_end));
}

// Files GgufWriter would refuse to write (it checks the types of known keys) are made with the test
// suite's independent GgufBuilder.
std::string error_of_image(const test::GgufBuilder& builder) {
  const test::GgufImage image = builder.build();
  auto file = GgufFile::parse(image.bytes, "built.gguf");
  if (!file) return "(parse error) " + file.error().message;
  auto t = Tokenizer::from_gguf(*file);
  return t ? std::string("(loaded)") : t.error().message;
}

test::GgufBuilder minimal_spm() {
  test::GgufBuilder b;
  b.kv_string("tokenizer.ggml.model", "llama").kv_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
  return b;
}

TEST(TokenizerErrors, MalformedMetadataIsAnErrorThatNamesTheKey) {
  EXPECT_EQ(error_of_image(minimal_spm()), "(loaded)");

  test::GgufBuilder no_model;
  no_model.kv_string("general.architecture", "llama").kv_string_array("tokenizer.ggml.tokens", {"a"});
  const std::string no_model_error = error_of_image(no_model);
  EXPECT_NE(no_model_error.find("built.gguf: the file has no tokenizer (tokenizer.ggml.model is missing)"),
            std::string::npos)
      << no_model_error;

  test::GgufBuilder model_not_string;
  model_not_string.kv_u32("tokenizer.ggml.model", 1).kv_string_array("tokenizer.ggml.tokens", {"a"});
  EXPECT_NE(error_of_image(model_not_string).find("tokenizer.ggml.model"), std::string::npos);

  test::GgufBuilder unknown_model;
  unknown_model.kv_string("tokenizer.ggml.model", "rwkv-world").kv_string_array("tokenizer.ggml.tokens", {"a"});
  EXPECT_NE(error_of_image(unknown_model).find("tokenizer.ggml.model = 'rwkv-world': unsupported tokenizer"),
            std::string::npos)
      << error_of_image(unknown_model);

  test::GgufBuilder no_tokens;
  no_tokens.kv_string("tokenizer.ggml.model", "llama");
  EXPECT_NE(error_of_image(no_tokens).find("tokenizer.ggml.tokens is missing"), std::string::npos);

  test::GgufBuilder empty_tokens;
  empty_tokens.kv_string("tokenizer.ggml.model", "llama").kv_string_array("tokenizer.ggml.tokens", {});
  EXPECT_NE(error_of_image(empty_tokens).find("tokenizer.ggml.tokens is empty"), std::string::npos);

  test::GgufBuilder tokens_not_strings;
  tokens_not_strings.kv_string("tokenizer.ggml.model", "llama").kv_i32_array("tokenizer.ggml.tokens", {1, 2});
  EXPECT_NE(error_of_image(tokens_not_strings).find("tokenizer.ggml.tokens"), std::string::npos);

  test::GgufBuilder short_scores = minimal_spm();
  short_scores.kv_f32_array("tokenizer.ggml.scores", {0, 0, 0});
  EXPECT_NE(error_of_image(short_scores).find("tokenizer.ggml.scores has 3 entries for 4 tokens"), std::string::npos);

  test::GgufBuilder float_types = minimal_spm();
  float_types.kv_f32_array("tokenizer.ggml.token_type", {1, 1, 1, 1});
  EXPECT_NE(error_of_image(float_types).find("tokenizer.ggml.token_type"), std::string::npos);

  test::GgufBuilder long_types = minimal_spm();
  long_types.kv_i32_array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1});
  EXPECT_NE(error_of_image(long_types).find("token_type has 5 entries for 4 tokens"), std::string::npos);

  test::GgufBuilder string_id = minimal_spm();
  string_id.kv_string("tokenizer.ggml.eos_token_id", "two");
  EXPECT_NE(error_of_image(string_id).find("tokenizer.ggml.eos_token_id"), std::string::npos);

  test::GgufBuilder bool_flag = minimal_spm();
  bool_flag.kv_u32("tokenizer.ggml.add_bos_token", 1);
  EXPECT_NE(error_of_image(bool_flag).find("tokenizer.ggml.add_bos_token"), std::string::npos);

  test::GgufBuilder no_merges;
  no_merges.kv_string("tokenizer.ggml.model", "gpt2").kv_string_array("tokenizer.ggml.tokens", {"a", "b"});
  EXPECT_NE(error_of_image(no_merges).find("tokenizer.ggml.merges is missing"), std::string::npos);

  test::GgufBuilder bad_pre;
  bad_pre.kv_string("tokenizer.ggml.model", "gpt2")
      .kv_string("tokenizer.ggml.pre", "no-such-pre")
      .kv_string_array("tokenizer.ggml.tokens", {"a", "b"})
      .kv_string_array("tokenizer.ggml.merges", {"a b"});
  EXPECT_NE(error_of_image(bad_pre).find("unsupported pre-tokenizer 'no-such-pre'"), std::string::npos);

  // Merge lines that name no tokens are skipped, not fatal; the tokenizer still works.
  test::GgufBuilder odd_merges;
  odd_merges.kv_string("tokenizer.ggml.model", "gpt2")
      .kv_string_array("tokenizer.ggml.tokens", {"a", "b", "ab"})
      .kv_string_array("tokenizer.ggml.merges", {"nospace", "x y", "a b", ""});
  EXPECT_EQ(error_of_image(odd_merges), "(loaded)");
}

// Time to load a vocabulary of `n` tokens (the GGUF is already parsed), printed, and the tokenizer checked
// to work. Loading builds hash maps once; nothing in it grows faster than the vocabulary.
void time_load(const std::string& label, const VocabSpec& spec, const std::string& probe) {
  const std::vector<std::byte> bytes = write(spec);
  auto file = GgufFile::parse(bytes, label);
  ASSERT_TRUE(file) << file.error().message;
  const auto start = std::chrono::steady_clock::now();
  auto t = Tokenizer::from_gguf(*file);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(t) << t.error().message;
  std::printf("[ timing ] loading %s (%d tokens, %zu merges): %.1f ms\n", label.c_str(), t->n_vocab(),
              spec.merges.size(), ms);
  ::testing::Test::RecordProperty("load_ms", fmt::format("{:.1f}", ms));
  EXPECT_EQ(t->n_vocab(), static_cast<int32_t>(spec.tokens.size()));
  const std::vector<int32_t> ids = t->encode(probe, false, false);
  EXPECT_LT(ids.size(), probe.size());  // the merges do apply
  EXPECT_EQ(t->decode(ids), probe);
}

TEST(TokenizerLoad, A150kSentencePieceVocabulary) {
  auto synth = make_synthetic_vocab(150000);
  ASSERT_TRUE(synth) << synth.error().message;
  VocabSpec spec;
  spec.tokens = synth->tokens;
  spec.scores = synth->scores;
  spec.types = synth->token_types;
  time_load("spm-150k", spec, "Once upon a time there was a little boy who wanted to see the world.");
}

TEST(TokenizerLoad, A128kByteLevelBpeVocabulary) {
  // 256 byte characters, then 128k - 256 tokens each merging two earlier ones (a deterministic mix of
  // recent and early tokens, so that long tokens exist), with their merges in creation order.
  VocabSpec spec;
  spec.model = "gpt2";
  spec.set("tokenizer.ggml.pre", GgufValue{std::string("llama-bpe")});
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();
  std::map<std::string, int> seen;
  for (int b = 0; b < 256; ++b) seen[spec.tokens.emplace_back(alphabet.utf8(static_cast<uint8_t>(b)))] = b;
  const std::string text = "the quick brown fox jumps over the lazy dog and then some more words follow here";
  const std::string encoded = alphabet.encode(text);
  // First the pairs that occur in the probe text, so that its words merge.
  std::vector<std::string> pieces;
  for (size_t i = 0; i < text.size(); ++i) pieces.push_back(alphabet.utf8(static_cast<uint8_t>(text[i])));
  uint64_t state = 12345;
  while (spec.tokens.size() < 128000) {
    std::string left, right;
    if (pieces.size() >= 2) {
      left = pieces[0], right = pieces[1];
      pieces.erase(pieces.begin(), pieces.begin() + 2);
      pieces.push_back(left + right);
    } else {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const size_t n = spec.tokens.size();
      left = spec.tokens[(state >> 33) % n];
      right = spec.tokens[(state >> 13) % 256];
    }
    if (!seen.emplace(left + right, static_cast<int>(spec.tokens.size())).second) continue;
    spec.tokens.push_back(left + right);
    spec.merges.push_back(left + " " + right);
  }
  spec.scores.clear();
  spec.types.assign(spec.tokens.size(), kNormal);
  time_load("bpe-128k", spec, text);
}

}  // namespace
}  // namespace infertune
