#include "engine/tokenizer/special_tokens.h"

#include <algorithm>
#include <cctype>

namespace infertune {
namespace {

constexpr uint32_t kSpecialAttrs = kAttrControl | kAttrUserDefined | kAttrUnknown;

bool is_ascii_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

SpecialTokenSplitter::SpecialTokenSplitter(const Vocab& vocab) : vocab_(&vocab), by_first_byte_(256) {
  for (int32_t id = 0; id < vocab.size(); ++id) {
    if (vocab.has_attr(id, kSpecialAttrs)) by_length_.push_back(id);
  }
  std::stable_sort(by_length_.begin(), by_length_.end(),
                   [&](int32_t a, int32_t b) { return vocab.text(a).size() > vocab.text(b).size(); });
  for (int32_t id : by_length_) {
    by_first_byte_[static_cast<uint8_t>(vocab.text(id)[0])].push_back(id);
    has_user_defined_ = has_user_defined_ || vocab.has_attr(id, kAttrUserDefined);
  }
}

// The special tokens that occur anywhere in `text`, in by_length_ order; scanning once with the
// first-byte buckets keeps vocabularies with thousands of special tokens fast on long texts.
std::vector<int32_t> SpecialTokenSplitter::occurring_tokens(std::string_view text, bool parse_special) const {
  if (!parse_special && !has_user_defined_) return {};
  std::vector<bool> seen(by_length_.size() > 0 ? static_cast<size_t>(vocab_->size()) : 0, false);
  size_t n_seen = 0;
  for (size_t pos = 0; pos < text.size() && n_seen < by_length_.size(); ++pos) {
    for (int32_t id : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
      if (seen[id] || text.compare(pos, vocab_->text(id).size(), vocab_->text(id)) != 0) continue;
      seen[id] = true;
      ++n_seen;
    }
  }
  std::vector<int32_t> found;
  for (int32_t id : by_length_) {
    if (!seen[id]) continue;
    if (!parse_special && vocab_->has_attr(id, kAttrControl | kAttrUnknown)) continue;
    found.push_back(id);
  }
  return found;
}

std::vector<TextFragment> SpecialTokenSplitter::split(std::string_view text, bool parse_special) const {
  std::vector<TextFragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({-1, 0, text.size()});
  for (int32_t token : occurring_tokens(text, parse_special)) split_at(text, token, fragments);
  return fragments;
}

// Replaces every text fragment by the pieces around each occurrence of `token` and the token itself.
// A token with LSTRIP / RSTRIP also removes the ASCII whitespace on that side of it.
void SpecialTokenSplitter::split_at(std::string_view text, int32_t token, std::vector<TextFragment>& fragments) const {
  const std::string& needle = vocab_->text(token);
  const bool lstrip = vocab_->has_attr(token, kAttrLStrip);
  const bool rstrip = vocab_->has_attr(token, kAttrRStrip);
  std::vector<TextFragment> out;
  out.reserve(fragments.size() + 2);
  for (const TextFragment& fragment : fragments) {
    if (fragment.is_token()) {
      out.push_back(fragment);
      continue;
    }
    const std::string_view piece = text.substr(fragment.offset, fragment.length);
    size_t start = 0;
    for (size_t match = piece.find(needle); match != std::string_view::npos; match = piece.find(needle, start)) {
      size_t left_end = match;
      if (lstrip) {
        while (left_end > start && is_ascii_space(piece[left_end - 1])) --left_end;
      }
      if (left_end > start) out.push_back({-1, fragment.offset + start, left_end - start});
      out.push_back({token, 0, 0});
      start = match + needle.size();
      if (rstrip) {
        while (start < piece.size() && is_ascii_space(piece[start])) ++start;
      }
    }
    if (start < piece.size()) out.push_back({-1, fragment.offset + start, piece.size() - start});
  }
  fragments = std::move(out);
}

}  // namespace infertune
