#pragma once
// The base model's log-probabilities for --kl-divergence, as `perplexity --kl-divergence-base FILE` writes them: the
// tokens it scored and, for each chunk, the log-softmax of the logits at every scored position (the second half of
// the chunk), so that another model (a quantized variant) can be compared with it on the same tokens later without
// the base model. llama.cpp keeps these in a file of its own layout; this one is ours:
//
//   "ITLOGP01" (8 bytes), uint32 n_ctx, n_vocab, n_chunks (little-endian)
//   int32 tokens [n_chunks * n_ctx]
//   f16 log-probabilities [n_chunks][n_ctx - 1 - n_ctx / 2][n_vocab]
//
// Half precision keeps a chunk of a 128K-vocabulary model at 65 MB; its error (under 0.01 in log space at p = 1e-9,
// 0.0005 near p = 1) is far below the differences quantization makes.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/half.h"
#include "kernels/result.h"

namespace infertune {

struct LogprobHeader {
  uint32_t n_ctx = 0;
  uint32_t n_vocab = 0;
  uint32_t n_chunks = 0;
  uint32_t scored_per_chunk() const { return n_ctx - 1 - n_ctx / 2; }
};

class LogprobWriter {
 public:
  // Creates `path` (replacing it only when finish() succeeds) with the header and the tokens of every chunk.
  static Result<LogprobWriter> create(const std::string& path, const LogprobHeader& header,
                                      std::span<const int32_t> tokens);
  // The logits [n_ctx][n_vocab] of the next chunk; writes the log-softmax of its scored rows.
  Status add_chunk(std::span<const float> logits);
  Status finish();

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_, temp_path_;
  LogprobHeader header_;
  uint32_t written_ = 0;
  std::unique_ptr<std::FILE, Closer> file_;
  std::vector<f16_t> row_;
};

class LogprobReader {
 public:
  static Result<LogprobReader> open(const std::string& path);
  const LogprobHeader& header() const { return header_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // The log-probabilities [scored_per_chunk][n_vocab] of chunk c (in order: 0, 1, ...).
  Status read_chunk(uint32_t c, std::vector<f16_t>& out);

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_;
  LogprobHeader header_;
  std::vector<int32_t> tokens_;
  uint64_t data_offset_ = 0;
  std::unique_ptr<std::FILE, Closer> file_;
};

// log softmax(logits) into out (same length), in double precision, rounded once.
void log_softmax(std::span<const float> logits, std::span<float> out);

}  // namespace infertune
