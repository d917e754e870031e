#include "engine/server/embedding_work.h"

#include <utility>

namespace infertune {

std::optional<Result<std::vector<Embedding>>> EmbeddingTicket::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  done_.wait_for(lock, timeout, [&] { return result_.has_value(); });
  return result_;
}

void EmbeddingTicket::finish(Result<std::vector<Embedding>> result) {
  {
    const std::lock_guard lock(mutex_);
    if (result_) return;
    result_.emplace(std::move(result));
  }
  done_.notify_all();
}

void EmbeddingWork::add(EmbedJob job, std::shared_ptr<EmbeddingTicket> ticket) {
  jobs_.push_back({.job = std::move(job), .ticket = std::move(ticket)});
}

size_t EmbeddingWork::piece_size(const Running& r) const {
  const auto& inputs = r.job.inputs;
  size_t n = 0;
  size_t tokens = 0;
  for (size_t i = r.done.size(); i < inputs.size(); ++i, ++n) {
    tokens += inputs[i].size();
    if (n > 0 && tokens > ctx_->n_batch()) break;
  }
  return n;
}

void EmbeddingWork::step() {
  if (jobs_.empty()) return;
  Running& r = jobs_.front();
  if (r.ticket->cancelled()) {
    r.ticket->finish(fail("cancelled"));
    jobs_.pop_front();
    return;
  }
  const size_t n = piece_size(r);
  const std::span<const std::vector<int32_t>> piece(r.job.inputs.data() + r.done.size(), n);
  // Only pooled vectors are normalized, as llama-server does: token states (none) go out as they are.
  Embedder embedder(*ctx_, {.pooling = pooling_, .normalize = pooling_ == Pooling::none ? -1 : r.job.normalize});
  auto vectors = embedder.embed(piece);
  if (!vectors) {
    r.ticket->finish(vectors.error());
    jobs_.pop_front();
    return;
  }
  for (Embedding& e : *vectors) r.done.push_back(std::move(e));
  if (r.done.size() < r.job.inputs.size()) return;
  r.ticket->finish(std::move(r.done));
  jobs_.pop_front();
}

void EmbeddingWork::fail_all(const std::string& message) {
  for (Running& r : jobs_) r.ticket->finish(fail("{}", message));
  jobs_.clear();
}

}  // namespace infertune
