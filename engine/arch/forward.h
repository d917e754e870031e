#pragma once
// What an architecture's forward pass gets: the model, the context's KV cache, threads and scratch
// buffers, and one ubatch of tokens with their positions, cache cells and attention lists (KvUbatch).
// A block shape is one file with one function of type ArchForwardFn (pre_norm_decoder.cpp: the architectures
// whose differences are tensors a model has or not; gemma.cpp); architectures.cpp maps ModelArch to it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "engine/threading/parallel_for.h"
#include "kernels/attention/attention.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/ops/rope.h"
#include "kernels/result.h"

namespace infertune {

// The floats each buffer of ForwardScratch holds for a batch of n_tokens: what reserve allocates, and what the
// sweep's memory model counts.
struct ForwardScratchSizes {
  size_t x = 0, xn = 0, q = 0, k = 0, v = 0, attn = 0, gate = 0, up = 0, proj = 0, router = 0, expert_x = 0,
         expert_out = 0;
  size_t total() const { return x + xn + q + k + v + attn + gate + up + proj + router + expert_x + expert_out; }
};
ForwardScratchSizes forward_scratch_sizes(const ModelConfig& config, size_t n_tokens);

// Activations of one batch, sized for up to `capacity` tokens. Rows are tokens.
struct ForwardScratch {
  size_t capacity = 0;
  std::vector<float> x;     // [capacity][n_embd] the residual stream
  std::vector<float> xn;    // [capacity][n_embd] its normalized copy, input of the projections
  std::vector<float> q;     // [capacity][n_head * head_dim]
  std::vector<float> k;     // [capacity][n_head_kv * head_dim]
  std::vector<float> v;     // [capacity][n_head_kv * head_dim_v]
  std::vector<float> attn;  // [capacity][n_head * head_dim_v] attention output, input of attn_output
  std::vector<float> gate;  // [capacity (x n_expert_used)][ffn_hidden]
  std::vector<float> up;    // [capacity (x n_expert_used)][ffn_hidden]
  std::vector<float> proj;  // [capacity][n_embd] a sub-layer's output before the residual add
  // A mixture of experts: the router's logits, and every token's input and output rows for each expert it goes
  // to, grouped by expert (engine/arch/expert_ffn.cpp).
  std::vector<float> router;                // [capacity][n_expert]
  std::vector<float> expert_x;              // [capacity x n_expert_used][n_embd]
  std::vector<float> expert_out;            // [capacity x n_expert_used][n_embd]
  QuantizedActivations xq;                  // the input of the current projections, quantized (see quantize_input)
  std::vector<AttentionScratch> attention;  // [pool threads] the attention kernels' working memory

  // Allocates for `n_tokens` tokens; an error (not an exception) when memory runs out.
  Status reserve(const ModelConfig& config, size_t n_tokens);
};

struct ForwardPass;
struct ForwardBatch;

// Layers that run somewhere else than the CPU (the GPU: engine/gpu/gpu_offload.h): the last ones of the
// model, from first_layer() on, and the output layer when runs_output().
class LayerOffload {
 public:
  virtual ~LayerOffload() = default;
  virtual uint32_t first_layer() const = 0;
  virtual bool runs_output() const = 0;
  // Runs the offloaded layers on x [n_tokens][n_embd] (the residual stream after the CPU's layers); then
  // the output layer into batch.logits when runs_output(), otherwise x comes back for the CPU's.
  virtual Status forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x) = 0;
};

struct ForwardPass {
  const Model& model;
  KvCache& cache;
  const ParallelFor& threads;
  ForwardScratch& scratch;
  RopeParams rope;                              // layout, base, scaling and factors for this model
  LayerOffload* offload = nullptr;              // null: every layer on the CPU
  std::span<const RopeParams> layer_rope = {};  // [n_layers] per-layer rope (gemma3's sliding layers), empty: `rope`

  const RopeParams& rope_for(uint32_t layer) const { return layer_rope.empty() ? rope : layer_rope[layer]; }
};

struct ForwardBatch {
  std::span<const int32_t> tokens;        // [n_tokens] ids, already checked to be < n_vocab
  const KvUbatch& kv;                     // positions, cache cells and what each token attends to
  std::span<const uint32_t> output_rows;  // tokens whose logits are wanted, ascending (empty: none)
  std::span<float> logits;                // [output_rows.size()][n_vocab], or [..][n_embd] with `embeddings`
  // The output rows get the final-normed hidden state (the output projection's input: what llama.cpp calls
  // the embeddings) instead of logits; the output projection is skipped.
  bool embeddings = false;
};

// Evaluates the batch: writes K/V of its tokens into their cells (each token attending to the keys its
// KvUbatch group lists: its sequence's, up to its position) and the requested logits.
using ArchForwardFn = Status (*)(const ForwardPass& pass, const ForwardBatch& batch);

// llama, qwen2, qwen3, gpt-oss and their mixtures of experts: engine/arch/pre_norm_decoder.cpp
Status forward_pre_norm_decoder(const ForwardPass& pass, const ForwardBatch& batch);
Status forward_gemma(const ForwardPass& pass, const ForwardBatch& batch);  // engine/arch/gemma.cpp: gemma2, gemma3

// The forward pass of an architecture (null for none).
ArchForwardFn arch_forward(ModelArch arch);

}  // namespace infertune
