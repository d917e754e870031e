#pragma once
// A small llama-shaped model that needs no file, for planning tests: 4 layers, 2 KV heads of 32, 1 MiB of
// weights.
#include "sweeps/plan/memory_model.h"
#include "sweeps/plan/trial_plan.h"

namespace infertune::test {

inline ModelShape fake_model_shape() {
  ModelShape s;
  s.config.n_layers = 4;
  s.config.n_embd = 256;
  s.config.n_head = 8;
  s.config.n_head_kv = 2;
  s.config.head_dim = 32;
  s.config.head_dim_v = 32;
  s.config.n_ff = 512;
  s.config.n_vocab = 512;
  s.tensor_bytes = 1 << 20;
  s.file_bytes = (1 << 20) + 4096;
  s.offload.layers.assign(4, 200 << 10);  // 200 KiB per layer, 192 KiB output: about the tensor bytes
  s.offload.output = 192 << 10;
  return s;
}

// Every model file as that shape.
inline ModelShapeFn fake_model_shapes() {
  return [](const std::string&, const std::string&) -> Result<ModelShape> { return fake_model_shape(); };
}

}  // namespace infertune::test
