#include "engine/tokenizer/bpe_encoder.h"

#include <queue>
#include <string>

#include "engine/tokenizer/byte_level.h"

namespace infertune {
namespace {

constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";

struct Symbol {
  int32_t token;  // -1 when the byte has no token (cannot merge, is dropped)
  int prev;
  int next;
  bool alive;
};

struct Candidate {
  int32_t rank;
  int left;
  int32_t left_token, right_token;  // the pair as queued; a changed token means the pair is stale
  int32_t result;
  bool operator<(const Candidate& o) const {  // priority_queue pops the largest: lowest rank, then leftmost
    return rank > o.rank || (rank == o.rank && left > o.left);
  }
};

}  // namespace

BpeEncoder::BpeEncoder(const Vocab& vocab, PreTokenizer pre, bool ignore_merges)
    : vocab_(&vocab), pre_(std::move(pre)), ignore_merges_(ignore_merges) {
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();
  for (unsigned b = 0; b < 256; ++b) {
    auto id = vocab.find_plain(alphabet.utf8(static_cast<uint8_t>(b)));
    byte_tokens_[b] = id ? *id : -1;
  }
}

Result<BpeEncoder> BpeEncoder::create(const Vocab& vocab, const GgufFile& file) {
  auto rules = pre_tokenizer_rules(vocab.pre());
  if (!rules) return fail("{}: {}", file.source_name(), rules.error().message);
  auto pre = PreTokenizer::create(*rules);
  if (!pre) return pre.error();
  if (file.find(kMergesKey) == nullptr) {
    return fail("{}: {} is missing (a gpt2 tokenizer needs its merges)", file.source_name(), kMergesKey);
  }
  auto merges = file.get_array(kMergesKey, GgufValueType::STRING);
  if (!merges) return merges.error();
  const auto& lines = std::get<std::vector<std::string>>((*merges)->elements);

  BpeEncoder encoder(vocab, std::move(*pre), rules->ignore_merges);
  encoder.merges_.reserve(lines.size());
  std::string joined;
  for (size_t rank = 0; rank < lines.size(); ++rank) {
    // "left right"; the search starts at 1 so that a left part that is itself a space stays whole.
    const std::string_view line = lines[rank];
    const size_t space = line.find(' ', 1);
    if (space == std::string_view::npos) continue;
    const std::string_view left = line.substr(0, space), right = line.substr(space + 1);
    joined.assign(left).append(right);
    auto l = vocab.find_plain(left), r = vocab.find_plain(right), result = vocab.find_plain(joined);
    // A merge whose parts or result are not tokens can never apply to token symbols; it is skipped.
    if (!l || !r || !result) continue;
    encoder.merges_.try_emplace(pair_key(*l, *r), Merge{static_cast<int32_t>(rank), *result});
  }
  return encoder;
}

const BpeEncoder::Merge* BpeEncoder::find_merge(int32_t left, int32_t right) const {
  if (left < 0 || right < 0) return nullptr;
  auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeEncoder::encode(std::string_view text, bool /*starts_word*/, std::vector<int32_t>& out) const {
  for (const TextSpan& word : pre_.split(text)) encode_word(text.substr(word.offset, word.length), out);
}

void BpeEncoder::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto id = vocab_->find_plain(byte_level_alphabet().encode(word))) {
      out.push_back(*id);
      return;
    }
  }
  const int n = static_cast<int>(word.size());
  std::vector<Symbol> symbols(n);
  for (int i = 0; i < n; ++i) symbols[i] = {byte_tokens_[static_cast<uint8_t>(word[i])], i - 1, i + 1, true};
  symbols[n - 1].next = -1;

  std::priority_queue<Candidate> queue;
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    if (const Merge* m = find_merge(symbols[left].token, symbols[right].token)) {
      queue.push({m->rank, left, symbols[left].token, symbols[right].token, m->result});
    }
  };
  for (int i = 1; i < n; ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Candidate best = queue.top();
    queue.pop();
    Symbol& left = symbols[best.left];
    if (!left.alive || left.next < 0 || left.token != best.left_token) continue;
    Symbol& right = symbols[left.next];
    if (right.token != best.right_token) continue;  // the pair changed since it was queued
    left.token = best.result;
    right.alive = false;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = best.left;
    consider(left.prev, best.left);
    consider(best.left, left.next);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) {
    if (symbols[i].token >= 0) out.push_back(symbols[i].token);
  }
}

}  // namespace infertune
