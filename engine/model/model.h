#pragma once
// A loaded model: the GGUF file, its validated hyper-parameters, and a view of every weight. Weight
// matrices stay in the file's bytes (memory-mapped by default: no copy; --no-mmap reads the file into
// one owned buffer instead), except those repacked at load into an interleaved layout that their kernel reads
// faster (ModelLoadOptions::repack); the small 1-D tensors (norm gains, biases, rope factors) are decoded to
// floats once. Immutable after load, so any number of contexts may share one Model.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/model/model_config.h"
#include "kernels/ggml_type.h"
#include "kernels/matmul/interleaved_rows.h"
#include "kernels/result.h"

namespace infertune {

// A 2-D weight in its GGUF layout: n_rows rows of n_cols values of `type` (ggml dims [n_cols, n_rows]), one
// expert's slice of a 3-D stack, or a run of rows of a fused matrix (phi3's attn_qkv: q, k, v; its ffn_up: gate, up),
// which keeps the stored tensor's name.
struct WeightMatrix {
  std::string name;  // "blk.0.attn_q.weight"
  GgmlType type = GgmlType::F32;
  uint64_t n_cols = 0;
  uint64_t n_rows = 0;
  std::span<const std::byte> data;           // [n_rows][row bytes], inside the model's file bytes, or interleaved
  WeightLayout layout = WeightLayout::rows;  // interleaved8: repacked at load into memory the Model owns
};

struct LayerWeights {
  std::vector<float> attn_norm;         // [n_embd]
  WeightMatrix attn_q;                  // [n_head * head_dim][n_embd]
  WeightMatrix attn_k;                  // [n_head_kv * head_dim][n_embd]
  WeightMatrix attn_v;                  // [n_head_kv * head_dim_v][n_embd]
  std::vector<float> attn_q_bias;       // [n_head * head_dim], empty when absent
  std::vector<float> attn_k_bias;       // [n_head_kv * head_dim], empty when absent
  std::vector<float> attn_v_bias;       // [n_head_kv * head_dim_v], empty when absent
  std::vector<float> attn_q_norm;       // [head_dim], empty when absent (gemma3)
  std::vector<float> attn_k_norm;       // [head_dim], empty when absent (gemma3)
  WeightMatrix attn_output;             // [n_embd][n_head * head_dim_v]
  std::vector<float> attn_output_bias;  // [n_embd], empty when absent (gpt-oss)
  std::vector<float> attn_sinks;        // [n_head] softmax sink logits, empty when absent (gpt-oss)
  std::vector<float> attn_post_norm;    // [n_embd], empty when absent (gemma3)
  std::vector<float> ffn_norm;          // [n_embd]
  WeightMatrix ffn_gate;                // [n_ff][n_embd]
  WeightMatrix ffn_up;                  // [n_ff][n_embd]
  WeightMatrix ffn_down;                // [n_embd][n_ff]
  std::vector<float> ffn_post_norm;     // [n_embd], empty when absent (gemma3)
  // A mixture of experts instead of ffn_gate/up/down (ModelConfig::is_moe): the router and, per expert, its
  // slice of the stacked ffn_*_exps tensors (named "blk.N.ffn_up_exps.weight (expert E)").
  WeightMatrix ffn_gate_inp;                // [n_expert][n_embd]
  std::vector<WeightMatrix> ffn_gate_exps;  // [n_expert] of [n_ff_exp][n_embd]
  std::vector<WeightMatrix> ffn_up_exps;    // [n_expert] of [n_ff_exp][n_embd]
  std::vector<WeightMatrix> ffn_down_exps;  // [n_expert] of [n_embd][n_ff_exp]
  // gpt-oss: the router's bias and each expert's biases, expert-major; empty when absent.
  std::vector<float> ffn_gate_inp_bias;   // [n_expert]
  std::vector<float> ffn_gate_exps_bias;  // [n_expert][n_ff_exp]
  std::vector<float> ffn_up_exps_bias;    // [n_expert][n_ff_exp]
  std::vector<float> ffn_down_exps_bias;  // [n_expert][n_embd]
  // qwen2moe's shared expert (ModelConfig::has_shared_expert), and the gain of its sigmoid gate.
  std::vector<float> ffn_gate_inp_shexp;  // [n_embd]
  WeightMatrix ffn_gate_shexp;            // [n_ff_shexp][n_embd]
  WeightMatrix ffn_up_shexp;              // [n_ff_shexp][n_embd]
  WeightMatrix ffn_down_shexp;            // [n_embd][n_ff_shexp]

  // Every matrix the block multiplies by but the experts', whether the model has it or not (an absent one has no
  // data): the one list that repacking, mlock and bench's per-token bytes walk.
  std::array<WeightMatrix*, 11> single_matrices() {
    return {&attn_q,   &attn_k,       &attn_v,         &attn_output,  &ffn_gate,      &ffn_up,
            &ffn_down, &ffn_gate_inp, &ffn_gate_shexp, &ffn_up_shexp, &ffn_down_shexp};
  }
  std::array<const WeightMatrix*, 11> single_matrices() const {
    const auto all = const_cast<LayerWeights&>(*this).single_matrices();
    std::array<const WeightMatrix*, 11> out;
    std::copy(all.begin(), all.end(), out.begin());
    return out;
  }
  // The experts' matrices, stack by stack (empty for a dense block).
  auto expert_stacks() { return std::array{&ffn_gate_exps, &ffn_up_exps, &ffn_down_exps}; }
  auto expert_stacks() const { return std::array{&ffn_gate_exps, &ffn_up_exps, &ffn_down_exps}; }
};

struct ModelWeights {
  WeightMatrix token_embd;                // [n_vocab][n_embd]
  std::vector<float> output_norm;         // [n_embd]
  WeightMatrix output;                    // [n_vocab][n_embd]; the same bytes as token_embd when tied
  std::vector<float> rope_freqs;          // [n_rot / 2] frequency divisors, empty when absent
  std::vector<float> rope_factors_long;   // [n_rot / 2] phi3's LongRoPE divisors past the original context, or empty
  std::vector<float> rope_factors_short;  // [n_rot / 2] and within it
  std::vector<LayerWeights> layers;       // [n_layers]
};

struct ModelLoadOptions {
  bool use_mmap = true;  // false: read the whole file into memory owned by the Model
  bool mlock = false;    // lock the tensor data in RAM (a failure is a warning, as in llama.cpp)
  // Interleave the rows of the matrices whose kernel reads that layout faster (kernels/matmul/interleaved_rows.h);
  // false: every matrix stays in the file's layout (llama.cpp's --no-repack).
  bool repack = true;
};

class Model {
 public:
  static Result<Model> load(const std::string& path, const ModelLoadOptions& options = {});
  // A model held in memory (tests: synthesize_in_memory's output). Only `repack` of the options applies.
  static Result<Model> from_bytes(std::vector<std::byte> bytes, std::string source_name = "<memory>",
                                  const ModelLoadOptions& options = {});

  Model(Model&&) = default;
  Model& operator=(Model&&) = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const GgufFile& file() const { return file_; }
  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }

  bool mapped() const { return mapped_; }
  bool locked() const { return locked_; }
  uint64_t tensor_bytes() const { return tensor_bytes_; }            // all tensor data, as stored
  uint64_t interleaved_bytes() const { return interleaved_bytes_; }  // of the matrices repacked at load
  // A number no other Model of this process had: tells this model from one loaded after it at the same
  // address (what keeps data derived from a model, e.g. its GPU upload, keys on).
  uint64_t load_id() const { return load_id_; }
  // Things the caller may want to tell the user (an mlock that failed).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Model() = default;
  static Result<Model> finish(Model model, const ModelLoadOptions& options);
  Status bind_weights();
  Status interleave_weights();
  void lock_memory();

  struct AlignedFree {
    void operator()(std::byte* p) const;
  };
  std::vector<std::byte> owned_bytes_;  // the file's bytes when not mapped; must outlive file_
  std::vector<std::unique_ptr<std::byte[], AlignedFree>> interleaved_;  // the repacked matrices' bytes
  GgufFile file_;
  ModelConfig config_;
  ModelWeights weights_;
  uint64_t tensor_bytes_ = 0;
  uint64_t interleaved_bytes_ = 0;
  uint64_t load_id_ = 0;
  bool mapped_ = false;
  bool locked_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace infertune
