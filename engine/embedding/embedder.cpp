#include "engine/embedding/embedder.h"

#include <algorithm>

namespace infertune {

// An input whose tokens are (partly) decoded, and what its pooling has gathered so far.
struct Embedder::InFlight {
  size_t index = 0;        // into the inputs
  SeqId seq = 0;           // the sequence it runs in
  size_t next = 0;         // its first token not yet in a batch
  size_t batch_begin = 0;  // its tokens in the current batch: [batch_begin, batch_begin + batch_count)
  size_t batch_count = 0;
  std::vector<double> sum{};  // Pooling::mean: the sum of its token states
  std::vector<float> rows{};  // the states kept: every token's (none), or the first's (cls) or last's (last)
};

Result<std::vector<Embedding>> Embedder::embed(std::span<const std::vector<int32_t>> inputs) {
  if (Status s = check(inputs); !s) return s.error();
  std::vector<Embedding> out(inputs.size());
  const Status s = run(inputs, out);
  ctx_->clear();
  if (!s) return s.error();
  return out;
}

uint32_t Embedder::max_input_tokens(const Context& ctx) {
  return ctx.kv_cache().causal() ? ctx.n_ctx() : std::min(ctx.n_ctx(), ctx.n_ubatch());
}

Status Embedder::check(std::span<const std::vector<int32_t>> inputs) const {
  if (!ctx_->params().embeddings) return fail("embeddings: the context keeps logits (create it with embeddings)");
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) return fail("input {} is empty: there is nothing to embed", i);
    if (inputs[i].size() > ctx_->n_ctx()) {
      return fail("input {} has {} tokens, more than the context's {} (-c)", i, inputs[i].size(), ctx_->n_ctx());
    }
    if (inputs[i].size() > max_input_tokens(*ctx_)) {
      return fail(
          "input {} has {} tokens; a bidirectional model (attention.causal = false) takes an input whole "
          "in one ubatch: at most {} (-ub)",
          i, inputs[i].size(), max_input_tokens(*ctx_));
    }
  }
  if (ctx_->kv_cache().n_free() != ctx_->n_ctx()) return fail("embeddings: the context's cache is not empty");
  return {};
}

bool Embedder::wants_output(size_t pos, size_t length) const {
  switch (params_.pooling) {
    case Pooling::cls:
      return pos == 0;
    case Pooling::last:
      return pos + 1 == length;
    default:
      return true;
  }
}

Status Embedder::run(std::span<const std::vector<int32_t>> inputs, std::vector<Embedding>& out) {
  const size_t n_embd = ctx_->model().config().n_embd;
  // Bidirectional attention: inputs whole (a token sees its sequence's later tokens only when they are in its
  // ubatch; such a context's batch is one ubatch).
  const bool whole_inputs = !ctx_->kv_cache().causal();
  std::vector<InFlight> flight;  // at most one is left over from the previous batch: an input cut short
  size_t next_input = 0;
  while (next_input < inputs.size() || !flight.empty()) {
    batch_.clear();
    const size_t room = std::min<size_t>(ctx_->n_batch(), ctx_->kv_cache().n_free());
    auto add_tokens = [&](InFlight& f) {
      const std::vector<int32_t>& tokens = inputs[f.index];
      const size_t take = std::min(tokens.size() - f.next, room - batch_.size());
      f.batch_begin = batch_.size();
      f.batch_count = take;
      const SeqId seq[] = {f.seq};
      for (size_t p = f.next; p < f.next + take; ++p) {
        batch_.add(tokens[p], static_cast<int32_t>(p), seq, wants_output(p, tokens.size()));
      }
      f.next += take;
    };
    for (InFlight& f : flight) add_tokens(f);
    while (next_input < inputs.size() && batch_.size() < room && flight.size() < ctx_->n_seq_max()) {
      if (whole_inputs && inputs[next_input].size() > room - batch_.size()) break;
      SeqId seq = 0;  // the lowest id no input in flight holds
      while (std::any_of(flight.begin(), flight.end(), [&](const InFlight& f) { return f.seq == seq; })) ++seq;
      flight.push_back({.index = next_input++, .seq = seq});
      add_tokens(flight.back());
    }
    if (Status s = ctx_->decode(batch_); !s) return s;
    for (InFlight& f : flight) collect(f, n_embd);
    for (auto it = flight.begin(); it != flight.end();) {
      if (it->next < inputs[it->index].size()) {
        ++it;
        continue;
      }
      out[it->index] = finish(*it, inputs[it->index].size(), n_embd);
      if (Status s = ctx_->kv_cache().seq_rm(it->seq, -1, -1); !s) return s;
      it = flight.erase(it);
    }
  }
  return {};
}

void Embedder::collect(InFlight& f, size_t n_embd) {
  for (size_t i = f.batch_begin; i < f.batch_begin + f.batch_count; ++i) {
    auto row = ctx_->embeddings_ith(i);
    if (!row) continue;  // a token that asked for no output
    if (params_.pooling == Pooling::mean) {
      f.sum.resize(n_embd);
      for (size_t d = 0; d < n_embd; ++d) f.sum[d] += (*row)[d];
    } else if (params_.pooling == Pooling::none) {
      f.rows.insert(f.rows.end(), row->begin(), row->end());
    } else {
      f.rows.assign(row->begin(), row->end());
    }
  }
}

Embedding Embedder::finish(InFlight& f, size_t length, size_t n_embd) const {
  Embedding e{.values = std::move(f.rows), .n_embd = n_embd};
  if (params_.pooling == Pooling::mean) {
    e.values.resize(n_embd);
    for (size_t d = 0; d < n_embd; ++d) e.values[d] = static_cast<float>(f.sum[d] / static_cast<double>(length));
  }
  for (size_t r = 0; r < e.n_rows(); ++r) {
    normalize_embedding(std::span<float>(e.values).subspan(r * n_embd, n_embd), params_.normalize);
  }
  return e;
}

}  // namespace infertune
