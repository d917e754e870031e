#pragma once
// The sweep dimensions as flags, with bench's names (-m, -t, -tb, -ngl, -c, -b, -ub, -np, -ctk, -ctv, -fa,
// -mmp, -C, --numa, -p, -n, -pg, -d) plus --base-model, --quant-types, --batched and the constraints.
// Each takes comma lists and ranges and may be repeated. Given together with a YAML spec, a flag replaces
// that key of the spec.
#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "sweeps/spec/sweep_spec.h"

namespace infertune {

struct SpecFlagText {
  std::map<std::string, std::vector<std::string>> values;  // spec key -> occurrences, as given
};

// `text` must outlive the parse of `command`.
void add_sweep_spec_flags(CLI::App& command, SpecFlagText& text);

// `base` (from YAML, or empty) with every key given as a flag replaced; errors then name the flag.
SpecText merge_spec_flags(SpecText base, const SpecFlagText& flags);

}  // namespace infertune
