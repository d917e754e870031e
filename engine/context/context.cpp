#include "engine/context/context.h"

#include <algorithm>
#include <new>

namespace infertune {
namespace {

Result<RopeParams> rope_params_for(const Model& model) {
  const ModelConfig& c = model.config();
  RopeParams rope;
  rope.n_rot = c.n_rot;
  rope.freq_base = c.rope_freq_base;
  rope.layout = rope_style(c.arch) == RopeStyle::Neox ? RopeLayout::Neox : RopeLayout::Interleaved;
  rope.freq_factors = model.weights().rope_freqs;
  if (c.rope_scaling_type == "linear") {
    rope.freq_scale = 1.0f / c.rope_scaling_factor;
  } else if (c.rope_scaling_type == "yarn") {
    return fail("{}: rope scaling 'yarn' is not supported yet (only none and linear)", model.file().source_name());
  }
  return rope;
}

}  // namespace

Result<Context> Context::create(const Model& model, const ContextParams& params) {
  const ModelConfig& c = model.config();
  const ArchForwardFn forward = arch_forward(c.arch);
  if (!forward) return fail("architecture {} has no forward pass", c.arch);
  auto rope = rope_params_for(model);
  if (!rope) return rope.error();
  ContextParams p = params;
  if (p.n_ctx == 0) p.n_ctx = std::min(c.n_ctx_train, kDefaultContextCap);
  if (p.n_ubatch == 0) p.n_ubatch = 512;
  if (p.n_threads == 0) p.n_threads = 1;
  if (p.n_threads_batch == 0) p.n_threads_batch = p.n_threads;
  auto cache = KvCache::create(c.n_layers, p.n_ctx, c.k_dim(), c.v_dim());
  if (!cache) return cache.error();
  std::unique_ptr<ThreadPool> own_pool;
  if (p.pool == nullptr) {
    ThreadPoolConfig config;
    config.n_threads = std::max(p.n_threads, p.n_threads_batch);
    auto pool = ThreadPool::create(config);
    if (!pool) return pool.error();
    own_pool = std::move(*pool);
  }
  return Context(model, p, std::move(*cache), std::move(own_pool), forward, *rope);
}

ParallelFor Context::threads_for(size_t n_tokens) const {
  return ParallelFor(*pool_, n_tokens > 1 ? params_.n_threads_batch : params_.n_threads);
}

Status Context::check_batch(std::span<const int32_t> tokens) const {
  if (tokens.empty()) return fail("decode: empty batch");
  const uint32_t n_vocab = model_->config().n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<uint32_t>(tokens[i]) >= n_vocab) {
      return fail("decode: token id {} at batch index {} is outside the vocabulary (0..{})", tokens[i], i, n_vocab - 1);
    }
  }
  const uint64_t end = static_cast<uint64_t>(n_past_) + tokens.size();
  if (end > n_ctx()) {
    return fail("decode: context full: {} cached + {} new tokens > context size {} (use a larger -c)", n_past_,
                tokens.size(), n_ctx());
  }
  return {};
}

Result<std::span<const float>> Context::decode(std::span<const int32_t> tokens, Logits which) {
  if (Status s = check_batch(tokens); !s) return s.error();
  const bool all = which == Logits::All;
  const size_t n_vocab = model_->config().n_vocab;
  const size_t n_out = all ? tokens.size() : 1;
  const size_t piece_max = std::min<size_t>(tokens.size(), params_.n_ubatch);
  try {
    logits_.resize(n_out * n_vocab);
  } catch (const std::bad_alloc&) {
    return fail("decode: cannot allocate logits for {} tokens", n_out);
  }
  if (Status s = scratch_.reserve(model_->config(), piece_max); !s) return s.error();

  for (size_t start = 0; start < tokens.size(); start += piece_max) {
    const size_t n = std::min(piece_max, tokens.size() - start);
    const ParallelFor threads = threads_for(n);
    const ForwardPass pass{*model_, cache_, threads, scratch_, rope_};
    const bool last_piece = start + n == tokens.size();
    ForwardBatch batch;
    batch.tokens = tokens.subspan(start, n);
    batch.first_pos = static_cast<uint32_t>(n_past_ + start);
    batch.all_logits = all;
    // With Logits::Last, the pieces before the final one need no logits at all.
    if (all) {
      batch.logits = std::span<float>(logits_).subspan(start * n_vocab, n * n_vocab);
    } else if (last_piece) {
      batch.logits = logits_;
    }
    if (Status s = forward_(pass, batch); !s) return s.error();
  }
  n_past_ += static_cast<uint32_t>(tokens.size());
  return std::span<const float>(logits_);
}

}  // namespace infertune
