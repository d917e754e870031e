#pragma once
// Quantization variants of a base model (a sweep's base_model + quant_types), produced on demand and cached.
//
// A base with real weights (F32, F16, BF16; or already quantized, which requantizes) is quantized by the
// project's quantizer (engine/quantize: llama-quantize's rules, byte for byte `infertune quantize BASE OUT
// TYPE`), so a variant is the model a user would run, and its quality can be measured against the base. A base
// written by `infertune synth` (infertune.synth.* metadata: random weights) gets synthesized variants of its
// architecture and shape instead: quantizing random weights would cost the same time and say nothing more.
//
// Cache: one file per (base content, type) in the cache directory, named <base stem>-<16 hex digits>-<type>.gguf
// (synthesized: ...-<type>-synth.gguf), where the digits are the base's content hash (file_content_hash: the
// same bytes at another path share variants, a base rewritten in place gets new ones). A variant is written
// under a unique temporary name and renamed into place when complete, so a crash or two sweeps producing the
// same variant at once never leave a partial file under the final name; one that is present is reused as it is.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/synth/synthesizer.h"
#include "kernels/result.h"

namespace infertune {

// $XDG_CACHE_HOME/infertune/models, else ~/.cache/infertune/models, else <temp dir>/infertune/models.
std::filesystem::path default_model_cache_dir();

// Whether `file` was written by `infertune synth` (or derived from such a file): its weights are random.
bool is_synthetic_model(const GgufFile& file);

enum class VariantSource { quantized, synthesized };

struct ModelVariant {
  std::string path;
  VariantSource source = VariantSource::quantized;
  std::string base_content_hash;  // file_content_hash of the base
  bool requantized = false;       // the base's weights were quantized already (the variant is worse than from F16)
};

// Tensors (quantized) or tensor bytes (synthesized) done of the total, while a variant is written.
using VariantProgressFn = std::function<void(uint64_t done, uint64_t total)>;

// Where the `quant` variant of `base` lives in `cache_dir` (whether or not it exists yet). `quant` is a
// synth --type name (llama-quantize's: q4_0, q8_0, q4_k_m, ... or a single ggml type such as q4_K); errors
// name an unknown type or a base that cannot be read.
Result<std::filesystem::path> variant_cache_path(const std::string& base, const std::string& quant,
                                                 const std::filesystem::path& cache_dir);

// The `quant` variant of `base`, written to the cache first (with `progress`) when absent. Errors name the
// base file, the type or the cache path.
Result<ModelVariant> produce_variant(const std::string& base, const std::string& quant,
                                     const std::filesystem::path& cache_dir, const VariantProgressFn& progress = {});

// The path to load for `base` in `quant`: `base` itself when `quant` is empty, else produce_variant's.
Result<std::string> variant_path(const std::string& base, const std::string& quant,
                                 const std::filesystem::path& cache_dir, const VariantProgressFn& progress = {});

// Writes `request` to `path` unless a file is there already: through a unique temporary name, renamed into
// place when complete. Shared with the default sweep's models.
Status synthesize_once(const SynthRequest& request, const std::filesystem::path& path,
                       const SynthProgressFn& progress = {});

}  // namespace infertune
