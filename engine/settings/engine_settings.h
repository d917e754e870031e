#pragma once
// What the tuning knobs of settings_table.h become in the engine: one value of each, as `run` takes them
// and as one bench test or one sweep trial runs. make_context.h turns them into a placed thread pool and a
// Context.
#include "engine/context/context.h"
#include "engine/threading/placement_options.h"

namespace infertune {

struct EngineSettings {
  // -c, -b, -ub, -np, -ctk, -ctv, -fa. n_threads, n_threads_batch and pool are set by make_context from the
  // placement; the defaults here are llama.cpp's (f16 KV cache).
  ContextParams context = {.type_k = GgmlType::F16, .type_v = GgmlType::F16};
  PlacementOptions placement;  // -t, -tb, -C, --cpu-strict, --numa, --prio, --poll
  int n_gpu_layers = 0;        // -ngl: layers on the GPU (ContextParams::n_gpu_layers); kGpuLayersAuto: auto
  int main_gpu = 0;            // -mg
  SplitMode split_mode = SplitMode::layer;  // -sm none|layer
  std::vector<double> tensor_split = {};    // -ts 3/1: each GPU's share of the offloaded layers
  bool kv_offload = true;                   // --no-kv-offload: false
  bool use_mmap = true;                     // -mmp / --no-mmap
  bool repack = true;                       // --repack / --no-repack: interleave weight rows at load (ModelLoadOptions)
};

}  // namespace infertune
