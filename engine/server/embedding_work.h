#pragma once
// The server's embedding requests (serve --embeddings). The serving loop's thread runs them between its
// generation steps on a context of their own (ContextParams::embeddings, sharing the model and the threads),
// a batch at a time: a request of many inputs is cut into pieces of at most -b tokens, so that generating
// clients wait at most one such batch for their next token, as they would for another request's prompt.
//
//   EmbeddingWork work(embedding_ctx, Pooling::mean);       // owned by the loop
//   auto ticket = std::make_shared<EmbeddingTicket>();
//   work.add({.inputs = ids, .normalize = 2}, ticket);     // loop thread
//   while (!work.idle()) work.step();                       // loop thread, between generation steps
//   auto done = ticket->wait(100ms);                        // HTTP thread: the vectors, an error, or nullopt
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/embedding/embedder.h"
#include "kernels/result.h"

namespace infertune {

struct EmbedJob {
  std::vector<std::vector<int32_t>> inputs;  // token ids, each within the embedding context
  int normalize = kEuclideanNorm;            // embedding_norm.h; pooled vectors only (none: states as they are)
};

// Where an embedding request's result arrives.
class EmbeddingTicket {
 public:
  // Waits up to `timeout`: the vectors (one Embedding per input) or the error; nullopt while it runs.
  std::optional<Result<std::vector<Embedding>>> wait(std::chrono::milliseconds timeout);
  // The client went away: the loop drops the request at its next piece.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  void finish(Result<std::vector<Embedding>> result);

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<Result<std::vector<Embedding>>> result_;
  std::atomic<bool> cancelled_{false};
};

class EmbeddingWork {
 public:
  // `ctx` keeps embeddings and is used by the loop's thread only.
  EmbeddingWork(Context& ctx, Pooling pooling) : ctx_(&ctx), pooling_(pooling) {}

  Pooling pooling() const { return pooling_; }
  // The most tokens one input may have (the embedding context's cells; one ubatch for a bidirectional model).
  uint32_t max_input_tokens() const { return Embedder::max_input_tokens(*ctx_); }

  void add(EmbedJob job, std::shared_ptr<EmbeddingTicket> ticket);
  bool idle() const { return jobs_.empty(); }
  size_t size() const { return jobs_.size(); }  // requests held, the running one included
  // Embeds the next piece of the oldest request (inputs up to -b tokens together, at least one), and answers
  // the request when it is whole.
  void step();
  // Answers every request left with `message` (the server stops).
  void fail_all(const std::string& message);

 private:
  struct Running {
    EmbedJob job;
    std::shared_ptr<EmbeddingTicket> ticket;
    std::vector<Embedding> done{};  // the vectors of the inputs embedded so far
  };
  // How many of the front request's next inputs make one piece.
  size_t piece_size(const Running& r) const;

  Context* ctx_;
  Pooling pooling_;
  std::deque<Running> jobs_;
};

}  // namespace infertune
