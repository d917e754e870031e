#include "engine/synth/synthetic_vocab.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_set>

namespace infertune {
namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581 "▁", SentencePiece's word-start marker

constexpr std::string_view kSingleChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'\"-:;()";

// Frequent English words (written with the word-start marker) and word pieces (without it).
constexpr std::string_view kWords[] = {
    "the",     "of",     "and",    "to",    "a",      "in",     "is",      "it",    "you",    "that",     "he",
    "was",     "for",    "on",     "are",   "with",   "as",     "I",       "his",   "they",   "be",       "at",
    "one",     "have",   "this",   "from",  "or",     "had",    "by",      "not",   "word",   "but",      "what",
    "some",    "we",     "can",    "out",   "other",  "were",   "all",     "there", "when",   "up",       "use",
    "your",    "how",    "said",   "an",    "each",   "she",    "which",   "do",    "their",  "time",     "if",
    "will",    "way",    "about",  "many",  "then",   "them",   "write",   "would", "like",   "so",       "these",
    "her",     "long",   "make",   "thing", "see",    "him",    "two",     "has",   "look",   "more",     "day",
    "could",   "go",     "come",   "did",   "number", "sound",  "no",      "most",  "people", "my",       "over",
    "know",    "water",  "than",   "call",  "first",  "who",    "may",     "down",  "side",   "been",     "now",
    "find",    "any",    "new",    "work",  "part",   "take",   "get",     "place", "made",   "live",     "where",
    "after",   "back",   "little", "only",  "round",  "man",    "year",    "came",  "show",   "every",    "good",
    "me",      "give",   "our",    "under", "name",   "very",   "through", "just",  "form",   "sentence", "great",
    "think",   "say",    "help",   "low",   "line",   "differ", "turn",    "cause", "much",   "mean",     "before",
    "move",    "right",  "boy",    "old",   "too",    "same",   "tell",    "does",  "set",    "three",    "want",
    "air",     "well",   "also",   "play",  "small",  "end",    "put",     "home",  "read",   "hand",     "port",
    "large",   "spell",  "add",    "even",  "land",   "here",   "must",    "big",   "high",   "such",     "follow",
    "act",     "why",    "ask",    "men",   "change", "went",   "light",   "kind",  "off",    "need",     "house",
    "picture", "try",    "us",     "again", "animal", "point",  "mother",  "world", "near",   "build",    "self",
    "earth",   "father", "once",   "upon",  "story",  "The",    "It",      "He",    "She",    "They",     "We",
    "You",     "In",     "This",   "Once",  "What",   "Hello",
};
constexpr std::string_view kWordPieces[] = {
    "ing", "ed", "er", "es", "ly", "tion", "ment", "ness", "able", "est", "ity", "ous", "ive", "al", "ic", "s",
};

class VocabBuilder {
 public:
  explicit VocabBuilder(uint32_t n_vocab) : n_vocab_(n_vocab) {
    vocab_.tokens.reserve(n_vocab);
    vocab_.scores.reserve(n_vocab);
    vocab_.token_types.reserve(n_vocab);
    seen_.reserve(n_vocab);
  }

  bool full() const { return vocab_.tokens.size() >= n_vocab_; }

  bool add(std::string piece, float score, TokenType type) {
    if (full() || !seen_.insert(piece).second) return false;
    vocab_.tokens.push_back(std::move(piece));
    vocab_.scores.push_back(score);
    vocab_.token_types.push_back(static_cast<int32_t>(type));
    return true;
  }

  // A filler piece; its score falls with its rank, so earlier (more "frequent") pieces merge first.
  void add_filler(std::string piece) {
    if (add(std::move(piece), -static_cast<float>(filler_rank_), TokenType::Normal)) ++filler_rank_;
  }

  // The piece and all its prefixes (shortest first), keeping the set prefix-closed. `skip` leading bytes
  // are never split (the 3-byte word-start marker).
  void add_with_prefixes(const std::string& piece, size_t skip) {
    for (size_t length = skip + 1; length <= piece.size() && !full(); ++length) add_filler(piece.substr(0, length));
  }

  SyntheticVocab take() { return std::move(vocab_); }

 private:
  uint32_t n_vocab_;
  uint32_t filler_rank_ = 0;
  SyntheticVocab vocab_;
  std::unordered_set<std::string> seen_;
};

// Every lower-case string of `length` letters, in lexical order, each with `prefix` before it.
void add_letter_strings(VocabBuilder& builder, std::string_view prefix, size_t length) {
  std::string piece(prefix);
  piece.append(length, 'a');
  while (!builder.full()) {
    builder.add_filler(piece);
    size_t i = piece.size();  // increment the letters like an odometer
    while (i > prefix.size() && piece[i - 1] == 'z') piece[--i] = 'a';
    if (i == prefix.size()) return;
    ++piece[i - 1];
  }
}

}  // namespace

Result<SyntheticVocab> make_synthetic_vocab(uint32_t n_vocab) {
  if (n_vocab < kSynthMinVocab) {
    return fail("a synthetic vocabulary needs at least {} tokens (3 special + 256 byte tokens), got {}", kSynthMinVocab,
                n_vocab);
  }
  VocabBuilder builder(n_vocab);
  (void)builder.add("<unk>", 0, TokenType::Unknown);
  (void)builder.add("<s>", 0, TokenType::Control);
  (void)builder.add("</s>", 0, TokenType::Control);
  for (int byte = 0; byte < 256; ++byte) (void)builder.add(fmt::format("<0x{:02X}>", byte), 0, TokenType::Byte);

  builder.add_filler(std::string(kWordStart));
  for (char c : kSingleChars) builder.add_filler(std::string(1, c));
  for (std::string_view word : kWords) builder.add_with_prefixes(std::string(kWordStart) + std::string(word), 3);
  for (std::string_view piece : kWordPieces) builder.add_with_prefixes(std::string(piece), 0);
  // Length tiers keep the set prefix-closed: "▁ab" needs "▁a" (tier 1), "abc" needs "ab" (tier 1).
  for (size_t length = 1; !builder.full(); ++length) {
    add_letter_strings(builder, kWordStart, length);
    add_letter_strings(builder, "", length + 1);
  }
  return builder.take();
}

Status add_control_tokens(SyntheticVocab& vocab, std::span<const std::string_view> texts) {
  if (vocab.tokens.size() < kSynthMinVocab + texts.size()) {
    return fail(
        "a synthetic vocabulary of {} tokens has no room for {} control tokens past its {} special and byte "
        "tokens",
        vocab.tokens.size(), texts.size(), kSynthMinVocab);
  }
  size_t id = vocab.tokens.size() - texts.size();
  for (std::string_view text : texts) {
    vocab.tokens[id] = std::string(text);
    vocab.scores[id] = 0;
    vocab.token_types[id] = static_cast<int32_t>(TokenType::Control);
    ++id;
  }
  return {};
}

}  // namespace infertune
