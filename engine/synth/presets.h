#pragma once
// Named model shapes for `infertune synth` (the hyper-parameters of well-known open models, so that a
// synthetic file has the same size, tensor mix and memory traffic as the real one), and the command
// line overrides applied on top of them.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/model/model_config.h"
#include "kernels/result.h"

namespace infertune {

struct SynthPreset {
  std::string_view name;         // "llama-1b"
  std::string_view description;  // "Llama-3.2-1B shape"
  ModelConfig config;            // complete, including n_vocab and special token ids
  bool any_arch = false;         // --arch may change config.arch (only "tiny"); otherwise it must match
};

std::span<const SynthPreset> synth_presets();
const SynthPreset* find_synth_preset(std::string_view name);
std::string synth_preset_names();  // "tiny, llama-1b, ..." (for help and errors)

// Shape flags of `synth`; each replaces the preset's value when set.
struct ShapeOverrides {
  std::optional<uint32_t> n_embd;         // --dim
  std::optional<uint32_t> n_layers;       // --layers
  std::optional<uint32_t> n_head;         // --heads
  std::optional<uint32_t> n_head_kv;      // --kv-heads
  std::optional<uint32_t> n_ff;           // --ffn
  std::optional<uint32_t> n_vocab;        // --vocab
  std::optional<uint32_t> n_ctx;          // --ctx
  std::optional<uint32_t> n_expert;       // --experts
  std::optional<uint32_t> n_expert_used;  // --experts-used
  std::optional<uint32_t> n_ff_exp;       // --expert-ffn
};

struct ResolvedModel {
  std::string preset;  // the preset's name (the default output file name starts with it)
  ModelConfig config;
};

// Picks the preset (`preset`, or "tiny" when only `arch` is given), checks that `arch` (when given) is
// the preset's (or sets it, for "tiny"), applies the overrides and validates the result. Errors name the
// flag: "--dim 250 is not divisible by --heads 8 (head size must be whole)".
Result<ResolvedModel> resolve_synth_model(const std::optional<std::string>& arch,
                                          const std::optional<std::string>& preset, const ShapeOverrides& overrides);

}  // namespace infertune
