#include "engine/tokenizer/tokenizer.h"

#include "engine/tokenizer/bpe_encoder.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/special_tokens.h"
#include "engine/tokenizer/spm_encoder.h"
#include "engine/tokenizer/text_encoder.h"
#include "engine/tokenizer/wordpiece_encoder.h"

namespace infertune {
namespace {

std::string replace_space_markers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.compare(pos, kSpaceMarker.size(), kSpaceMarker) == 0) {
      out += ' ';
      pos += kSpaceMarker.size();
    } else {
      out += text[pos++];
    }
  }
  return out;
}

// The byte a SentencePiece byte token "<0xNN>" stands for.
std::optional<char> byte_of_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(text[3]), lo = hex(text[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<char>(hi * 16 + lo);
}

}  // namespace

// Built in place and never moved: the splitter and the encoder point at `vocab`.
struct Tokenizer::State {
  explicit State(Vocab v) : vocab(std::move(v)), specials(vocab) {}
  Vocab vocab;
  SpecialTokenSplitter specials;
  std::unique_ptr<TextEncoder> encoder;
};

Result<Tokenizer> Tokenizer::from_gguf(const GgufFile& file) {
  auto vocab = Vocab::from_gguf(file);
  if (!vocab) return vocab.error();
  auto state = std::make_shared<State>(std::move(*vocab));
  switch (state->vocab.kind()) {
    case TokenizerKind::Spm:
      state->encoder = std::make_unique<SpmEncoder>(state->vocab);
      break;
    case TokenizerKind::Bpe: {
      auto bpe = BpeEncoder::create(state->vocab, file);
      if (!bpe) return bpe.error();
      state->encoder = std::make_unique<BpeEncoder>(std::move(*bpe));
      break;
    }
    case TokenizerKind::WordPiece: {
      auto normalizer = BertNormalizer::create();
      if (!normalizer) return normalizer.error();
      state->encoder = std::make_unique<WordPieceEncoder>(state->vocab, std::move(*normalizer));
      break;
    }
  }
  Tokenizer tokenizer;
  tokenizer.state_ = std::move(state);
  return tokenizer;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const Vocab& vocab = state_->vocab;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_special && vocab.add_bos() && vocab.special().bos) out.push_back(*vocab.special().bos);
  bool starts_word = true;
  for (const TextFragment& fragment : state_->specials.split(text, parse_special)) {
    if (fragment.is_token()) {
      out.push_back(fragment.token);
      starts_word = true;
    } else {
      state_->encoder->encode(text.substr(fragment.offset, fragment.length), starts_word, out);
      starts_word = false;
    }
  }
  if (add_special) {
    if (vocab.kind() == TokenizerKind::WordPiece) {
      if (vocab.special().sep) out.push_back(*vocab.special().sep);
    } else if (vocab.add_eos() && vocab.special().eos) {
      out.push_back(*vocab.special().eos);
    }
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t token) const {
  const Vocab& vocab = state_->vocab;
  if (!vocab.contains(token)) return {};
  const std::string& text = vocab.text(token);
  if (vocab.has_attr(token, kAttrControl | kAttrUnknown | kAttrUserDefined)) return text;
  switch (vocab.kind()) {
    case TokenizerKind::Spm:
      if (vocab.has_attr(token, kAttrByte)) {
        if (auto byte = byte_of_byte_token(text)) return std::string(1, *byte);
      }
      return replace_space_markers(text);
    case TokenizerKind::WordPiece:
      return replace_space_markers(text);
    case TokenizerKind::Bpe:
      return byte_level_alphabet().decode(text);
  }
  return text;
}

std::string Tokenizer::decode(std::span<const int32_t> tokens) const {
  std::string out;
  const Vocab& vocab = state_->vocab;
  // The first piece loses the space that encoding put in front of the text (llama.cpp does the same).
  bool strip_space =
      vocab.kind() == TokenizerKind::WordPiece || (vocab.kind() == TokenizerKind::Spm && vocab.add_space_prefix());
  for (int32_t token : tokens) {
    if (!vocab.contains(token)) continue;
    std::string piece = token_to_piece(token);
    if (strip_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    strip_space = false;
    out += piece;
  }
  return out;
}

int32_t Tokenizer::n_vocab() const { return state_->vocab.size(); }
std::optional<int32_t> Tokenizer::bos() const { return state_->vocab.special().bos; }
std::optional<int32_t> Tokenizer::eos() const { return state_->vocab.special().eos; }
bool Tokenizer::is_end_of_generation(int32_t token) const { return state_->vocab.is_end_of_generation(token); }
const Vocab& Tokenizer::vocab() const { return state_->vocab; }

}  // namespace infertune
