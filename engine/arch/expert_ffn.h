#pragma once
// The feed-forward of a mixture-of-experts block (qwen3moe, qwen2moe, gpt-oss, llama with experts as Mixtral):
//   proj[t] = sum over the experts e the router picks for token t of  g[t][e] * SwiGLU_e(xn[t])
// where g are the router's weights (engine/arch/expert_routing.h). gpt-oss adds biases to the router's logits and
// to each expert's three products, and gates with its clamped SwiGLU (kernels/ops/elementwise.h). Each expert's
// matrices run once per batch, over the rows of the tokens routed to it, gathered together.
#include <cstddef>

#include "engine/arch/forward.h"
#include "engine/model/model.h"
#include "engine/threading/parallel_for.h"
#include "kernels/result.h"

namespace infertune {

// scratch.xn [n][n_embd] -> scratch.proj [n][n_embd].
Status expert_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& config,
                  ForwardScratch& scratch, size_t n_tokens);

// The SwiGLU feed-forward of the layer, dense or of experts, whichever the model has.
Status silu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& config,
                ForwardScratch& scratch, size_t n_tokens);

}  // namespace infertune
