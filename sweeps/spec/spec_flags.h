#pragma once
// The sweep spec as flags. The dimensions are the settings the sweep takes, with their flags from the
// settings table (engine/settings/setting_flags.h: -t, -tb, -C, --numa, -ngl, -c, -b, -ub, -np, -ctk, -ctv,
// -fa, -mmp, as bench spells them); the sweep's own flags are -m, --base-model, --quant-types, the
// workloads (-p, -n, -pg, -d, --batched) and the constraints. Each takes comma lists and ranges and may be
// repeated. Given together with a YAML spec, a flag replaces that key of the spec.
#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "engine/cli/flag_aliases.h"
#include "engine/settings/setting_flags.h"
#include "sweeps/spec/sweep_spec.h"

namespace infertune {

struct SpecFlagText {
  std::map<std::string, std::vector<std::string>> values;  // the sweep's own keys -> occurrences, as given
  SettingText settings;                                    // the settings' flags, by setting key

  bool any() const;  // was any spec flag given
};

// `text` must outlive the parse of `command`.
void add_sweep_spec_flags(CLI::App& command, SpecFlagText& text);

// The multi-letter short flags of `infertune sweep` (-tb, -ngl, ..., -pg), rewritten to their long forms
// before CLI11 parses (Subcommands::add_aliases).
std::vector<FlagAlias> sweep_flag_aliases();

// `base` (from YAML, or empty) with every key given as a flag replaced; errors then name the flag.
SpecText merge_spec_flags(SpecText base, const SpecFlagText& flags);

}  // namespace infertune
