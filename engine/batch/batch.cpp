#include "engine/batch/batch.h"

#include <algorithm>

namespace infertune {

void Batch::add(int32_t token, int32_t pos, std::initializer_list<SeqId> seq_ids, bool want_logits) {
  add(token, pos, std::span<const SeqId>(seq_ids.begin(), seq_ids.size()), want_logits);
}

void Batch::add(int32_t token, int32_t pos, std::span<const SeqId> seq_ids, bool want_logits) {
  tokens_.push_back(token);
  pos_.push_back(pos);
  logits_.push_back(want_logits ? 1 : 0);
  seq_ids_.insert(seq_ids_.end(), seq_ids.begin(), seq_ids.end());
  seq_begin_.push_back(seq_ids_.size());
}

Batch Batch::of_sequence(std::span<const int32_t> tokens, SeqId seq, int32_t first_pos, bool all_logits) {
  Batch batch;
  const SeqId ids[] = {seq};
  for (size_t i = 0; i < tokens.size(); ++i) {
    batch.add(tokens[i], first_pos + static_cast<int32_t>(i), ids, all_logits || i + 1 == tokens.size());
  }
  return batch;
}

void Batch::clear() {
  tokens_.clear();
  pos_.clear();
  logits_.clear();
  seq_ids_.clear();
  seq_begin_.assign(1, 0);
}

size_t Batch::n_outputs() const { return static_cast<size_t>(std::count(logits_.begin(), logits_.end(), 1)); }

}  // namespace infertune
