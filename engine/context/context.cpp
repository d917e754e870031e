#include "engine/context/context.h"

#include <algorithm>
#include <new>

#include "engine/arch/op_profile.h"
#include "engine/context/batch_positions.h"
#include "engine/context/step_fault_injection.h"

namespace infertune {
namespace {

// The model's rope metadata under the caller's overrides (rope_setup.h), for a context of n_ctx cells (phi3's LongRoPE
// factors depend on it); errors prefixed with the file.
Result<RopeParams> rope_params_for(const Model& model, const RopeOverrides& overrides, uint32_t n_ctx) {
  const auto factors = rope_freq_factors(model.config(), model.weights(), n_ctx);
  auto rope = resolve_rope(model.config(), factors, overrides);
  if (!rope) return fail("{}: {}", model.file().source_name(), rope.error().message);
  return rope;
}

}  // namespace

Result<Context> Context::create(const Model& model, const ContextParams& params) {
  const ModelConfig& c = model.config();
  const ArchForwardFn forward = arch_forward(c.arch);
  if (!forward) return fail("architecture {} has no forward pass", c.arch);
  ContextParams p = params;
  if (p.n_ctx == 0) p.n_ctx = kDefaultContext;
  auto rope = rope_params_for(model, params.rope, p.n_ctx);
  if (!rope) return rope.error();
  if (p.n_batch == 0) p.n_batch = kDefaultBatch;
  if (p.n_ubatch == 0) p.n_ubatch = kDefaultUbatch;
  p.n_ubatch = std::min(p.n_ubatch, p.n_batch);
  if (p.n_seq_max == 0) p.n_seq_max = 1;
  if (p.n_threads == 0) p.n_threads = 1;
  if (p.n_threads_batch == 0) p.n_threads_batch = p.n_threads;
  KvCacheParams kv;
  kv.layout = {c.n_layers, p.n_ctx, c.n_head_kv, c.head_dim, c.head_dim_v, p.type_k, p.type_v};
  kv.n_seq_max = p.n_seq_max;
  kv.rope = *rope;
  kv.layer_rope = layer_ropes(c, *rope);
  kv.causal = c.causal_attention;
  if (!c.causal_attention) {
    // Bidirectional attention sees later tokens, which only a whole input in one ubatch has: embeddings only.
    if (!p.embeddings) {
      return fail(
          "{}: {}.attention.causal = false: a bidirectional model computes embeddings, not logits "
          "(infertune embedding, serve --embeddings)",
          model.file().source_name(), model_arch_name(c.arch));
    }
    if (c.sliding_window != 0) return fail("bidirectional attention with a sliding window is not supported");
    p.n_batch = p.n_ubatch;  // a batch is one ubatch, so that a sequence in it is whole there
  }
  auto cache = KvCache::create(kv);
  if (!cache) return cache.error();
  std::unique_ptr<ThreadPool> own_pool;
  if (p.pool == nullptr) {
    ThreadPoolConfig config;
    config.n_threads = std::max(p.n_threads, p.n_threads_batch);
    auto pool = ThreadPool::create(config);
    if (!pool) return pool.error();
    own_pool = std::move(*pool);
  }
  Context ctx(model, p, std::move(*cache), std::move(own_pool), forward, *rope);
  ctx.scratch_.attention.resize(ctx.pool_->size());
  if (p.n_gpu_layers == kGpuLayersAuto) {
    return fail("-ngl auto: resolve it to a layer count first (make_context does, from the GPU's free memory)");
  }
  // Embeddings are the output layer's input: it stays on the CPU, where the final norm is (finish_forward).
  if (p.embeddings && (p.n_gpu_layers < 0 || p.n_gpu_layers > static_cast<int>(c.n_layers))) {
    p.n_gpu_layers = static_cast<int>(c.n_layers);
  }
  if (p.n_gpu_layers != 0 || !p.gpu_shares.empty()) {
    const GpuOffloadParams gpu_params{.n_gpu_layers = p.n_gpu_layers,
                                      .main_gpu = p.main_gpu,
                                      .split_mode = p.split_mode,
                                      .tensor_split = p.tensor_split,
                                      .kv_offload = p.kv_offload,
                                      .n_cells = p.n_ctx,
                                      .type_k = p.type_k,
                                      .type_v = p.type_v,
                                      .max_tokens = p.n_ubatch,
                                      .weights = p.gpu_weights};
    auto gpu = p.gpu_shares.empty() ? GpuOffload::create(model, gpu_params)
                                    : GpuOffload::create_on(model, gpu_params, p.gpu_shares);
    if (!gpu) return gpu.error();
    ctx.gpu_ = std::move(*gpu);
    if (p.kv_offload && ctx.gpu_->first_layer() < c.n_layers) {
      ctx.cache_.block_shifts("the keys of the GPU's layers live on the GPU (-ngl with the KV cache offloaded)");
    }
  }
  return ctx;
}

ParallelFor Context::threads_for(size_t n_tokens) const {
  return ParallelFor(*pool_, n_tokens > 1 ? params_.n_threads_batch : params_.n_threads);
}

Status Context::check_batch(const Batch& batch) const {
  if (batch.empty()) return fail("decode: empty batch");
  if (batch.size() > params_.n_batch) {
    return fail("decode: batch of {} tokens is larger than the logical batch size {} (-b)", batch.size(),
                params_.n_batch);
  }
  const uint32_t n_vocab = model_->config().n_vocab;
  for (size_t i = 0; i < batch.size(); ++i) {
    const int32_t token = batch.token(i);
    if (token < 0 || static_cast<uint32_t>(token) >= n_vocab) {
      return fail("decode: token id {} at batch index {} is outside the vocabulary (0..{})", token, i, n_vocab - 1);
    }
    if (batch.pos(i) < 0) return fail("decode: negative position {} at batch index {}", batch.pos(i), i);
    if (batch.seq_ids(i).empty()) return fail("decode: the token at batch index {} belongs to no sequence", i);
    for (SeqId seq : batch.seq_ids(i)) {
      if (seq < 0 || static_cast<uint32_t>(seq) >= params_.n_seq_max) {
        return fail("decode: sequence id {} at batch index {} is outside 0..{} (-np {})", seq, i, params_.n_seq_max - 1,
                    params_.n_seq_max);
      }
    }
  }
  if (!cache_.causal()) {
    // A token sees the later ones only in its own ubatch: a sequence comes whole, in one batch.
    for (size_t i = 0; i < batch.size(); ++i) {
      for (SeqId seq : batch.seq_ids(i)) {
        if (cache_.seq_pos_max(seq) >= 0) {
          return fail(
              "decode: sequence {} (batch index {}) has cached tokens: a bidirectional model "
              "(attention.causal = false) takes a sequence whole in one batch",
              seq, i);
        }
      }
    }
  }
  return check_positions_unused(batch, cache_.cells());
}

Status Context::decode(const Batch& batch) {
  if (Status s = check_batch(batch); !s) {
    last_failure_ = DecodeFailure::InvalidBatch;
    return s;
  }
  // Every ubatch only takes cells, so the whole batch fits exactly when its size does.
  if (batch.size() > cache_.n_free()) {
    last_failure_ = DecodeFailure::CacheFull;
    return fail(
        "decode: context full: the batch needs {} KV cells, {} of {} are free (use a larger -c, or free "
        "sequences)",
        batch.size(), cache_.n_free(), cache_.n_cells());
  }
  placed_.clear();
  const StepSlowdownScope injected_slowdown;  // test hook (step_fault_injection.h); nothing when unset
  Status s = evaluate(batch);
  if (!s) {
    cache_.release(placed_);
    output_of_.assign(batch.size(), -1);
    last_failure_ = DecodeFailure::Compute;
    return s;
  }
  last_failure_ = DecodeFailure::None;
  return {};
}

Status Context::evaluate(const Batch& batch) {
  const size_t n = batch.size();
  const size_t width = output_width();
  seqs_.resize(n);
  output_of_.resize(n);
  std::vector<uint32_t> outputs;  // batch indices that want logits
  for (size_t i = 0; i < n; ++i) {
    seqs_[i].clear();
    for (SeqId seq : batch.seq_ids(i)) seqs_[i].insert(seq);
    output_of_[i] = batch.wants_logits(i) ? static_cast<int32_t>(outputs.size()) : -1;
    if (batch.wants_logits(i)) outputs.push_back(static_cast<uint32_t>(i));
  }
  try {
    outputs_.resize(outputs.size() * width);
  } catch (const std::bad_alloc&) {
    return fail("decode: cannot allocate the outputs of {} tokens", outputs.size());
  }
  const size_t piece_max = std::min<size_t>(n, params_.n_ubatch);
  if (Status s = scratch_.reserve(model_->config(), piece_max); !s) return s;

  std::vector<uint32_t> rows;  // output rows of one ubatch, relative to its start
  size_t out_begin = 0;        // first output of the ubatch
  for (size_t start = 0; start < n; start += piece_max) {
    const size_t len = std::min(piece_max, n - start);
    if (Status s = cache_.place(batch.positions().subspan(start, len), std::span(seqs_).subspan(start, len), ubatch_);
        !s) {
      return s;
    }
    placed_.insert(placed_.end(), ubatch_.cells.begin(), ubatch_.cells.end());
    ubatch_.flash_attention = flash_;
    rows.clear();
    for (size_t o = out_begin; o < outputs.size() && outputs[o] < start + len; ++o) {
      rows.push_back(static_cast<uint32_t>(outputs[o] - start));
    }
    const ParallelFor threads = threads_for(len);
    const ForwardPass pass{*model_, cache_, threads, scratch_, rope_, gpu_.get(), layer_rope_};
    const ForwardBatch piece{batch.tokens().subspan(start, len), ubatch_, rows,
                             std::span<float>(outputs_).subspan(out_begin * width, rows.size() * width),
                             params_.embeddings};
    const OpTimer step_timer(ProfiledOp::step);
    if (Status s = forward_(pass, piece); !s) return s;
    out_begin += rows.size();
  }
  return {};
}

size_t Context::output_width() const { return params_.embeddings ? model_->config().n_embd : model_->config().n_vocab; }

Result<std::span<const float>> Context::output_row(size_t i, const char* what) const {
  if (i >= output_of_.size() || output_of_[i] < 0) {
    return fail("{} of batch index {}: the last batch did not ask for them", what, i);
  }
  const size_t width = output_width();
  return std::span<const float>(outputs_).subspan(static_cast<size_t>(output_of_[i]) * width, width);
}

Result<std::span<const float>> Context::logits_ith(size_t i) const {
  if (params_.embeddings) return fail("logits of batch index {}: this context keeps embeddings (--embeddings)", i);
  return output_row(i, "logits");
}

Result<std::span<const float>> Context::embeddings_ith(size_t i) const {
  if (!params_.embeddings) return fail("embeddings of batch index {}: this context keeps logits", i);
  return output_row(i, "embeddings");
}

Result<std::span<const float>> Context::decode(std::span<const int32_t> tokens, Logits which) {
  if (tokens.empty()) return fail("decode: empty batch");
  const uint32_t n_vocab = model_->config().n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<uint32_t>(tokens[i]) >= n_vocab) {
      return fail("decode: token id {} at batch index {} is outside the vocabulary (0..{})", tokens[i], i, n_vocab - 1);
    }
  }
  if (tokens.size() > cache_.n_free()) {
    return fail("decode: context full: {} cached + {} new tokens > context size {} (use a larger -c)", cache_.n_used(),
                tokens.size(), n_ctx());
  }
  const bool all = which == Logits::All;
  const size_t width = output_width();
  const auto first_pos = static_cast<int32_t>(n_past());
  const size_t n_pieces = (tokens.size() + params_.n_batch - 1) / params_.n_batch;
  if (n_pieces > 1 && all) {
    try {
      joined_.resize(tokens.size() * width);
    } catch (const std::bad_alloc&) {
      return fail("decode: cannot allocate the outputs of {} tokens", tokens.size());
    }
  }
  for (size_t start = 0; start < tokens.size(); start += params_.n_batch) {
    const size_t len = std::min<size_t>(params_.n_batch, tokens.size() - start);
    const bool last_piece = start + len == tokens.size();
    // With Logits::Last, the pieces before the final one need no logits at all.
    Batch& batch = sequence_batch_;
    batch.clear();
    const SeqId seq0[] = {0};
    for (size_t i = 0; i < len; ++i) {
      batch.add(tokens[start + i], first_pos + static_cast<int32_t>(start + i), seq0,
                all || (last_piece && i + 1 == len));
    }
    if (Status s = decode(batch); !s) {
      (void)cache_.seq_rm(0, first_pos, -1);  // the pieces already evaluated
      return s.error();
    }
    if (n_pieces > 1 && all) std::copy(outputs_.begin(), outputs_.end(), joined_.begin() + start * width);
  }
  if (n_pieces > 1 && all) return std::span<const float>(joined_);
  return std::span<const float>(outputs_);
}

}  // namespace infertune
