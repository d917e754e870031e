#include "engine/arch/expert_ffn.h"

#include <algorithm>

#include "engine/arch/expert_routing.h"
#include "engine/arch/op_profile.h"
#include "engine/arch/transformer_blocks.h"

namespace infertune {
namespace {

// rows[i] = x[tokens[i]], rows of `width`.
void gather_rows(std::span<const float> x, std::span<const uint32_t> tokens, size_t width, std::span<float> rows) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::copy_n(x.data() + tokens[i] * width, width, rows.data() + i * width);
  }
}

// out[tokens[i]] += weights[i] * rows[i].
void scatter_add_rows(std::span<const float> rows, std::span<const uint32_t> tokens, std::span<const float> weights,
                      size_t width, std::span<float> out) {
  const OpTimer timer(ProfiledOp::residual);
  for (size_t i = 0; i < tokens.size(); ++i) {
    float* dst = out.data() + tokens[i] * width;
    const float* src = rows.data() + i * width;
    const float w = weights[i];
    for (size_t j = 0; j < width; ++j) dst[j] += w * src[j];
  }
}

}  // namespace

Status expert_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                  size_t n) {
  const auto xn = rows(s.xn, n, c.n_embd);
  const auto logits = rows(s.router, n, c.n_expert);
  if (Status st = linear(threads, layer.ffn_gate_inp, xn, n, logits, s.xq); !st) return st;
  thread_local ExpertRoutes routes;
  route_tokens(logits, n, c.n_expert, c.n_expert_used, routes);

  const auto proj = rows(s.proj, n, c.n_embd);
  std::fill(proj.begin(), proj.end(), 0.0f);
  for (uint32_t e = 0; e < c.n_expert; ++e) {
    const size_t m = routes.count(e);
    if (m == 0) continue;
    const auto tokens = std::span<const uint32_t>(routes.tokens).subspan(routes.offsets[e], m);
    const auto weights = std::span<const float>(routes.weights).subspan(routes.offsets[e], m);
    const auto x = rows(s.expert_x, m, c.n_embd);
    const auto y = rows(s.expert_out, m, c.n_embd);
    gather_rows(xn, tokens, c.n_embd, x);
    const GatedMatrices expert{&layer.ffn_gate_exps[e], &layer.ffn_up_exps[e], &layer.ffn_down_exps[e]};
    if (Status st = gated_product(threads, expert, GateKind::silu, x, m, y, s); !st) return st;
    scatter_add_rows(y, tokens, weights, c.n_embd, proj);
  }
  return {};
}

Status silu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                size_t n) {
  return c.is_moe() ? expert_ffn(threads, layer, c, s, n) : swiglu_ffn(threads, layer, c, s, n);
}

}  // namespace infertune
