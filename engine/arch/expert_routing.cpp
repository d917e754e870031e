#include "engine/arch/expert_routing.h"

#include <algorithm>
#include <cmath>

namespace infertune {

void route_tokens(std::span<const float> logits, size_t n_tokens, uint32_t n_expert, uint32_t n_used, bool normalize,
                  ExpertRoutes& routes) {
  // The calling thread's buffers, reused from call to call.
  thread_local std::vector<uint32_t> order;
  thread_local std::vector<uint32_t> chosen;  // [n_tokens][n_used] experts
  thread_local std::vector<float> gates;      // [n_tokens][n_used] their weights
  order.resize(n_expert);
  chosen.resize(n_tokens * n_used);
  gates.resize(n_tokens * n_used);
  routes.offsets.assign(n_expert + 1, 0);
  for (size_t t = 0; t < n_tokens; ++t) {
    const float* row = logits.data() + t * n_expert;
    for (uint32_t e = 0; e < n_expert; ++e) order[e] = e;
    std::partial_sort(order.begin(), order.begin() + n_used, order.end(),
                      [row](uint32_t a, uint32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    // softmax over all experts, then the chosen ones scaled to sum to 1: that is the softmax over the chosen
    // logits alone (the full denominator cancels).
    const float top = row[order[0]];
    float sum = 0;
    for (uint32_t i = 0; i < n_used; ++i) {
      const float g = std::exp(row[order[i]] - top);
      gates[t * n_used + i] = g;
      sum += g;
    }
    if (!normalize) {
      for (uint32_t i = n_used; i < n_expert; ++i) sum += std::exp(row[order[i]] - top);
    }
    for (uint32_t i = 0; i < n_used; ++i) {
      chosen[t * n_used + i] = order[i];
      gates[t * n_used + i] /= sum;
      ++routes.offsets[order[i] + 1];
    }
  }
  for (uint32_t e = 0; e < n_expert; ++e) routes.offsets[e + 1] += routes.offsets[e];
  routes.tokens.resize(n_tokens * n_used);
  routes.weights.resize(n_tokens * n_used);
  thread_local std::vector<uint32_t> fill;
  fill.assign(routes.offsets.begin(), routes.offsets.end() - 1);
  for (size_t t = 0; t < n_tokens; ++t) {
    for (uint32_t i = 0; i < n_used; ++i) {
      const uint32_t slot = fill[chosen[t * n_used + i]]++;
      routes.tokens[slot] = static_cast<uint32_t>(t);
      routes.weights[slot] = gates[t * n_used + i];
    }
  }
}

}  // namespace infertune
