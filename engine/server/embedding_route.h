#pragma once
// POST /v1/embeddings (OpenAI's), /embeddings and /embedding (llama-server's own): the inputs tokenized (text
// with BOS and special tokens, or given ids), embedded by the serving loop (embedding_work.h) and answered as
//   OpenAI   {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}], "model",
//             "usage": {"prompt_tokens", "total_tokens"}}; encoding_format "base64" sends each vector as base64
//             of its float32 bytes
//   native   [{"index": i, "embedding": [[...], ...]}]: a row per token with --pooling none, else one row
// A request that brings "content" instead of "input" is answered natively on any of the three, as llama-server
// does. Pooled vectors are normalized as "embd_normalize" says (default 2, euclidean). A reply that takes longer
// than the keep-alive period is sent in chunks, a space each period before the body, so that a client that goes
// away is noticed and its request dropped.
#include <httplib.h>

#include <memory>

#include "engine/server/http_server.h"

namespace infertune {

enum class EmbeddingFormat { openai, native };

inline constexpr size_t kMaxEmbeddingInputs = 2048;  // OpenAI's bound on one request's inputs

// `reply_in_flight` is held by a chunked reply until its last byte is written (HttpServer::wait_replies).
void answer_embeddings(const ServedModel& served, const HttpOptions& options, EmbeddingFormat format,
                       std::shared_ptr<void> reply_in_flight, const httplib::Request& req, httplib::Response& res);

}  // namespace infertune
