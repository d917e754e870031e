#pragma once
// A batch of tokens to evaluate (llama.cpp's llama_batch): per token its id, its position, the sequences it
// belongs to, and whether its logits are wanted. Tokens of different sequences may be mixed in any order;
// a token in several sequences (a shared prompt) is stored once in the KV cache and seen by all of them.
//
//   Batch batch;
//   for (size_t i = 0; i < prompt.size(); ++i) batch.add(prompt[i], i, {0, 1, 2}, i + 1 == prompt.size());
//   ctx.decode(batch);                       // one cache cell per prompt token, shared by sequences 0..2
//   batch.clear();
//   for (SeqId s : {0, 1, 2}) batch.add(next[s], n, {s}, true);   // then one new token per sequence
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "engine/batch/seq_set.h"

namespace infertune {

class Batch {
 public:
  // Appends one token. Sequence ids and positions are checked by Context::decode, which names the index.
  void add(int32_t token, int32_t pos, std::initializer_list<SeqId> seq_ids, bool want_logits);
  void add(int32_t token, int32_t pos, std::span<const SeqId> seq_ids, bool want_logits);

  // `tokens` of sequence `seq` at positions first_pos, first_pos + 1, ...; logits for every token
  // (all_logits) or only the last.
  static Batch of_sequence(std::span<const int32_t> tokens, SeqId seq, int32_t first_pos, bool all_logits);

  void clear();
  size_t size() const { return tokens_.size(); }
  bool empty() const { return tokens_.empty(); }

  int32_t token(size_t i) const { return tokens_[i]; }
  int32_t pos(size_t i) const { return pos_[i]; }
  bool wants_logits(size_t i) const { return logits_[i] != 0; }
  // The sequence ids of token i, as given.
  std::span<const SeqId> seq_ids(size_t i) const {
    return std::span<const SeqId>(seq_ids_).subspan(seq_begin_[i], seq_begin_[i + 1] - seq_begin_[i]);
  }
  std::span<const int32_t> tokens() const { return tokens_; }
  std::span<const int32_t> positions() const { return pos_; }
  // How many tokens want logits.
  size_t n_outputs() const;

 private:
  std::vector<int32_t> tokens_;       // [n]
  std::vector<int32_t> pos_;          // [n]
  std::vector<uint8_t> logits_;       // [n] 1: logits wanted
  std::vector<SeqId> seq_ids_;        // every token's ids, one after another
  std::vector<size_t> seq_begin_{0};  // [n + 1] token i's ids are seq_ids_[seq_begin_[i] .. seq_begin_[i + 1])
};

}  // namespace infertune
