#pragma once
// A sweep spec in YAML: top-level keys are the dimension names of sweep_spec.h, each a value, a list, or a
// comma list / range as on the command line; `workloads:` is a list of maps. Example:
//   models: [a.gguf, b.gguf]
//   threads: 1-4
//   batch_size: [256, 512]
//   cache_type_k: [f16, q8_0]
//   workloads:
//     - {pp: 512}
//     - {pp: 512, tg: 128, depth: 1024}
//     - {np: "1,2,4", pp: 128, tg: 64}
//   max_mem: 8G
// Errors (syntax and meaning) name the file, line and key.
#include <string>
#include <string_view>

#include "kernels/result.h"
#include "sweeps/spec/sweep_spec.h"

namespace infertune {

Result<SpecText> parse_spec_yaml(std::string_view yaml, const std::string& source_name);
Result<SpecText> read_spec_yaml(const std::string& path);

}  // namespace infertune
