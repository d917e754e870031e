#pragma once
// The rope flags of `run`, with llama.cpp's names and meanings, each overriding the model file's metadata:
//   --rope-scaling {none,linear,yarn}   --rope-scale N (context factor; freq scale 1/N)
//   --rope-freq-base N   --rope-freq-scale N   --yarn-orig-ctx N   --yarn-ext-factor N
//   --yarn-attn-factor N   --yarn-beta-slow N   --yarn-beta-fast N
// As in llama.cpp, 0 for --rope-freq-base, --rope-freq-scale and --yarn-orig-ctx, and a negative
// --yarn-ext-factor, --yarn-attn-factor or --yarn-beta-* mean "not given" (the file's value or the default).
// CLI11 checks that each value parses; rope_overrides() checks the rest, with errors that name the flag.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "engine/context/rope_setup.h"
#include "kernels/result.h"

namespace infertune {

// The flags as given on the command line.
struct RopeFlags {
  std::optional<std::string> scaling;  // --rope-scaling
  std::optional<float> scale;          // --rope-scale
  std::optional<float> freq_base;      // --rope-freq-base
  std::optional<float> freq_scale;     // --rope-freq-scale
  std::optional<uint32_t> yarn_orig_ctx;
  std::optional<float> yarn_ext_factor;
  std::optional<float> yarn_attn_factor;
  std::optional<float> yarn_beta_slow;
  std::optional<float> yarn_beta_fast;
};

// `flags` must outlive the parse of `command`.
void add_rope_flags(CLI::App& command, RopeFlags& flags);

// The overrides for ContextParams::rope, validated.
Result<RopeOverrides> rope_overrides(const RopeFlags& flags);

}  // namespace infertune
