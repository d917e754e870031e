#pragma once
// The router of a mixture-of-experts block: which experts each token goes to, and with what weight.
// As llama.cpp computes it for llama (Mixtral), qwen2moe and qwen3moe: the softmax of the router's logits, the
// n_used most probable experts, and their probabilities, scaled to sum to 1 where the model says so.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace infertune {

// The tokens routed to each expert, grouped by expert so that each expert's matrices are read once per
// batch: expert e's tokens are tokens[offsets[e] .. offsets[e + 1]), ascending, with their weights.
struct ExpertRoutes {
  std::vector<uint32_t> offsets;  // [n_expert + 1]
  std::vector<uint32_t> tokens;   // [n_tokens * n_used] token rows
  std::vector<float> weights;     // [n_tokens * n_used] the gate weight of that expert for that token

  size_t count(uint32_t expert) const { return offsets[expert + 1] - offsets[expert]; }
};

// logits: [n_tokens][n_expert], the router's output. Ties go to the lower expert index. normalize: the chosen
// experts' weights sum to 1 (ModelConfig::expert_weights_norm); otherwise they are their softmax probabilities.
void route_tokens(std::span<const float> logits, size_t n_tokens, uint32_t n_expert, uint32_t n_used, bool normalize,
                  ExpertRoutes& routes);

}  // namespace infertune
