#pragma once
// Quantization variants of a base model (a sweep's base_model + quant_types): each variant is a synthetic
// model (engine/synth) of the base's architecture and shape in the requested file type, produced on demand
// and cached, so a sweep measures what the weights' format costs on this machine. Its weights are random,
// not the base's re-quantized: speed and memory depend on the format and shape only.
//
// Cache: one file per (base identity, type) in the cache directory, named
// <base stem>-<16 hex digits>-<type>.gguf, where the digits hash the base's canonical path, size and
// modification time (a base rewritten in place gets new variants). A variant is written under a unique
// temporary name and renamed into place when complete, so a crash or two sweeps producing the same variant
// at once never leave a partial file under the final name; one that is present is reused as it is.
#include <filesystem>
#include <string>

#include "engine/synth/synthesizer.h"
#include "kernels/result.h"

namespace infertune {

// $XDG_CACHE_HOME/infertune/models, else ~/.cache/infertune/models, else <temp dir>/infertune/models.
std::filesystem::path default_model_cache_dir();

// Where the `quant` variant of `base` lives in `cache_dir` (whether or not it exists yet). `quant` is a
// synth --type name (llama-quantize's: q4_0, q8_0, q4_k_m, ... or a single ggml type such as q4_K); errors
// name an unknown type or a base that cannot be read.
Result<std::filesystem::path> variant_cache_path(const std::string& base, const std::string& quant,
                                                 const std::filesystem::path& cache_dir);

// The path to load for `base` in `quant`: `base` itself when `quant` is empty, else the cached variant,
// synthesized first (with `progress`) when absent. Errors name the base file, the type or the cache path.
Result<std::string> variant_path(const std::string& base, const std::string& quant,
                                 const std::filesystem::path& cache_dir, const SynthProgressFn& progress = {});

// Writes `request` to `path` unless a file is there already: through a unique temporary name, renamed into
// place when complete. Shared with the default sweep's models.
Status synthesize_once(const SynthRequest& request, const std::filesystem::path& path,
                       const SynthProgressFn& progress = {});

}  // namespace infertune
