#include "engine/arch/expert_ffn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/arch/expert_routing.h"
#include "engine/arch/op_profile.h"
#include "engine/arch/transformer_blocks.h"
#include "kernels/ops/elementwise.h"

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

// Adds expert e's bias (row e of `bias` [n_expert][width]) to the rows routed to it, for each active expert. An
// empty bias (every model but gpt-oss) adds nothing.
void add_expert_biases(std::span<float> rows, const ExpertRoutes& routes, std::span<const uint32_t> active,
                       std::span<const float> bias, size_t width) {
  if (bias.empty()) return;
  const OpTimer timer(ProfiledOp::residual);
  for (uint32_t e : active) {
    add_bias_rows(rows.subspan(routes.offsets[e] * width, routes.count(e) * width), bias.subspan(e * width, width));
  }
}

// gpt-oss's experts use its clamped SwiGLU; the others plain SwiGLU.
GateKind expert_gate(const ModelConfig& c) {
  return c.arch == ModelArch::GptOss ? GateKind::swiglu_oai : GateKind::silu;
}

// proj[t] += sigmoid(gate_inp_shexp . xn[t]) * SwiGLU_shared(xn[t]) (qwen2moe), through scratch.expert_out.
Status add_shared_expert(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                         size_t n) {
  const auto xn = rows(s.xn, n, c.n_embd);
  const auto shared = rows(s.expert_out, n, c.n_embd);
  const GatedMatrices matrices{&layer.ffn_gate_shexp, &layer.ffn_up_shexp, &layer.ffn_down_shexp};
  if (Status st = gated_product(threads, matrices, GateKind::silu, xn, n, shared, s); !st) return st;
  thread_local std::vector<uint32_t> every_token;
  thread_local std::vector<float> gates;
  every_token.resize(n);
  gates.resize(n);
  for (size_t t = 0; t < n; ++t) {
    const float* row = xn.data() + t * c.n_embd;
    float dot = 0;
    for (size_t j = 0; j < c.n_embd; ++j) dot += row[j] * layer.ffn_gate_inp_shexp[j];
    every_token[t] = static_cast<uint32_t>(t);
    gates[t] = 1.0f / (1.0f + std::exp(-dot));
  }
  scatter_add_rows(shared, every_token, gates, c.n_embd, rows(s.proj, n, c.n_embd));
  return {};
}

}  // namespace

// Each expert's rows are quantized on their own (an expert's products read only its tokens), then all the experts'
// products of one kind run as one parallel job: the threads meet a few times per block, not a few times per expert
// (decode reads n_expert_used small experts per block).
Status expert_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                  size_t n) {
  const auto xn = rows(s.xn, n, c.n_embd);
  const auto logits = rows(s.router, n, c.n_expert);
  if (Status st = linear(threads, layer.ffn_gate_inp, xn, n, logits, s.xq); !st) return st;
  add_bias_rows(logits, layer.ffn_gate_inp_bias);
  thread_local ExpertRoutes routes;
  route_tokens(logits, n, c.n_expert, c.n_expert_used, c.expert_weights_norm(), routes);

  // Row r of these is routes.tokens[r]'s row for the expert whose range holds r.
  const size_t n_rows = routes.tokens.size(), width = c.n_ff_exp;
  const auto x = rows(s.expert_x, n_rows, c.n_embd);
  const auto gate = rows(s.gate, n_rows, width);
  const auto up = rows(s.up, n_rows, width);
  const auto out = rows(s.expert_out, n_rows, c.n_embd);
  gather_rows(xn, routes.tokens, c.n_embd, x);

  thread_local std::vector<uint32_t> active;  // experts with tokens
  active.clear();
  for (uint32_t e = 0; e < c.n_expert; ++e) {
    if (routes.count(e) != 0) active.push_back(e);
  }
  // One quantized input per active expert, for gate/up, then for down (kept apart: a job holds a pointer to each).
  thread_local std::vector<QuantizedActivations> inputs, hidden;
  thread_local std::vector<LinearJob> jobs;
  inputs.resize(std::max(inputs.size(), active.size()));
  hidden.resize(std::max(hidden.size(), active.size()));

  jobs.clear();
  for (size_t i = 0; i < active.size(); ++i) {
    const uint32_t e = active[i];
    const size_t first = routes.offsets[e], m = routes.count(e);
    const WeightMatrix* g = &layer.ffn_gate_exps[e];
    const WeightMatrix* u = &layer.ffn_up_exps[e];
    if (Status st = quantize_input(threads, {g, u}, x.subspan(first * c.n_embd, m * c.n_embd), m, inputs[i]); !st) {
      return st;
    }
    jobs.push_back({g, &inputs[i], gate.subspan(first * width, m * width)});
    jobs.push_back({u, &inputs[i], up.subspan(first * width, m * width)});
  }
  if (Status st = linear_jobs(threads, ProfiledOp::ffn_gate_up, jobs); !st) return st;
  add_expert_biases(gate, routes, active, layer.ffn_gate_exps_bias, width);
  add_expert_biases(up, routes, active, layer.ffn_up_exps_bias, width);
  if (Status st = gate_rows(threads, expert_gate(c), gate, up, n_rows, width); !st) return st;

  jobs.clear();
  for (size_t i = 0; i < active.size(); ++i) {
    const uint32_t e = active[i];
    const size_t first = routes.offsets[e], m = routes.count(e);
    const WeightMatrix* d = &layer.ffn_down_exps[e];
    if (Status st = quantize_input(threads, {d}, gate.subspan(first * width, m * width), m, hidden[i]); !st) return st;
    jobs.push_back({d, &hidden[i], out.subspan(first * c.n_embd, m * c.n_embd)});
  }
  if (Status st = linear_jobs(threads, ProfiledOp::ffn_down, jobs); !st) return st;
  add_expert_biases(out, routes, active, layer.ffn_down_exps_bias, c.n_embd);

  const auto proj = rows(s.proj, n, c.n_embd);
  std::fill(proj.begin(), proj.end(), 0.0f);
  scatter_add_rows(out, routes.tokens, routes.weights, c.n_embd, proj);
  if (c.has_shared_expert()) return add_shared_expert(threads, layer, c, s, n);
  return {};
}

Status silu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                size_t n) {
  return c.is_moe() ? expert_ffn(threads, layer, c, s, n) : swiglu_ffn(threads, layer, c, s, n);
}

}  // namespace infertune
