#include "engine/tokenizer/spm_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <string>

#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

struct Symbol {
  size_t offset;  // into the escaped text
  size_t length;  // 0 once merged into its left neighbour
  int prev;
  int next;
};

struct Candidate {
  float score;
  int left;
  size_t length;  // bytes of left + right when queued; a changed length means the pair is stale
  bool operator<(const Candidate& o) const {  // priority_queue pops the largest: best score, then leftmost
    return score < o.score || (score == o.score && left > o.left);
  }
};

std::string escape_spaces(std::string_view text, bool prefix_space) {
  std::string out;
  out.reserve(text.size() + 3 * (prefix_space ? 1 : 0) + 8);
  if (prefix_space) out += kSpaceMarker;
  for (char c : text) {
    if (c == ' ') {
      out += kSpaceMarker;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

SpmEncoder::SpmEncoder(const Vocab& vocab) : vocab_(&vocab) {
  has_all_byte_tokens_ = true;
  for (unsigned b = 0; b < 256; ++b) {
    auto id = vocab.find(fmt::format("<0x{:02X}>", b));
    byte_tokens_[b] = id ? *id : -1;
    has_all_byte_tokens_ = has_all_byte_tokens_ && id.has_value();
  }
}

void SpmEncoder::encode(std::string_view raw, bool starts_word, std::vector<int32_t>& out) const {
  const std::string text = escape_spaces(raw, starts_word && vocab_->add_space_prefix());
  if (text.empty()) return;

  // One symbol per character; a byte that is not part of a well-formed UTF-8 sequence is a symbol of its
  // own (so that it cannot swallow the start of the next character, such as a "▁").
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    next_code_point(text, pos);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({start, pos - start, index - 1, index + 1});
  }
  symbols.back().next = -1;

  std::priority_queue<Candidate> queue;
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = symbols[left].length + symbols[right].length;
    if (auto id = vocab_->find_plain(std::string_view(text).substr(symbols[left].offset, length))) {
      queue.push({vocab_->score(*id), left, length});
    }
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Candidate best = queue.top();
    queue.pop();
    Symbol& left = symbols[best.left];
    if (left.length == 0 || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    if (left.length + right.length != best.length) continue;  // one side has grown since it was queued
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = best.left;
    consider(left.prev, best.left);
    consider(best.left, left.next);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) {
    emit_symbol(std::string_view(text).substr(symbols[i].offset, symbols[i].length), out);
  }
}

void SpmEncoder::emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const {
  if (auto id = vocab_->find_plain(symbol)) {
    out.push_back(*id);
  } else if (has_all_byte_tokens_) {
    for (char c : symbol) out.push_back(byte_tokens_[static_cast<uint8_t>(c)]);
  } else if (vocab_->special().unk) {
    out.push_back(*vocab_->special().unk);
  }
}

}  // namespace infertune
