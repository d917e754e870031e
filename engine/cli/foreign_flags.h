#pragma once
// Another tool's flags for what infertune does not implement (llama-bench's -ncmoe, llama-server's -sp, ...),
// so that the tool's command lines either run as they did or stop before anything loads, naming the flag:
//   - a switch is taken when infertune always behaves as it asks (llama-server's -cb), refused otherwise;
//   - a value flag is taken at the values that change nothing (llama-bench's defaults, so a script that spells
//     them out runs unchanged) and refused at any other value, or at every value when it has none.
// Without the table CLI11 misreads them ("-nopo 1" as "-n opo", "-sp" as "-s p") or prints another help.
// Each area keeps its tool's table; this file registers, checks and aliases them alike.
#include <CLI/CLI.hpp>

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cli/flag_aliases.h"
#include "kernels/result.h"

namespace infertune {

struct ForeignFlag {
  std::string_view name;                    // the long form: "--n-cpu-moe"
  std::vector<std::string_view> aliases{};  // the other spellings the tool takes: "-ncmoe", "--embeddings"
  std::string_view asks_for{};              // what the flag is for: "keeping MoE experts on the CPU"
  std::string_view instead{};               // what infertune does or offers instead (may be empty)
  bool takes_value = false;
  std::vector<std::string_view> taken_values{};  // a value flag's values that change nothing (the tool's defaults)
  bool switch_taken = false;                     // a switch infertune always behaves as
};

// A table's entries, by kind (`aliases`: the other spellings the tool takes).
// A switch infertune always behaves as: taken, changing nothing.
ForeignFlag taken_switch(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                         std::string_view what_infertune_does);
ForeignFlag refused_switch(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                           std::string_view instead = {});
// A value flag taken at `taken_values` only (the tool's defaults).
ForeignFlag value_flag(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                       std::vector<std::string_view> taken_values, std::string_view instead);
// A value flag refused whatever the value.
ForeignFlag refused_value_flag(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                               std::string_view instead = {});

struct ForeignFlagTable {
  std::string_view tool;     // "llama-bench": whose flags they are
  std::string_view command;  // "bench": the infertune command that takes them
  std::string_view group;    // the heading of their part of the help
  std::span<const ForeignFlag> flags;
};

// What the command line gave, by long name.
struct ForeignFlagText {
  std::map<std::string, bool> switches;
  std::map<std::string, std::vector<std::string>> values;  // every occurrence, as given
};

// `text` must outlive the parse of `command`.
void add_foreign_flags(CLI::App& command, const ForeignFlagTable& table, ForeignFlagText& text);

// An error naming the first flag given that is refused (comma lists of values are split).
Status check_foreign_flags(const ForeignFlagTable& table, const ForeignFlagText& text);

// The single-dash forms (-ncmoe, -sp, ...) -> the long ones: CLI11 takes one letter after a single dash.
std::vector<FlagAlias> foreign_flag_aliases(const ForeignFlagTable& table);

}  // namespace infertune
