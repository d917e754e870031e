#pragma once
// One tuning knob of the engine, described once: its names (flags, spec key, stored config field, llama.cpp's
// spelling), how its text is checked and spelled canonically, what it does to the engine's settings, its
// default, its help, and which commands take it. The table of all of them is settings_table.h; the flags of
// run / bench / batched-bench / sweep, the sweep spec's keys, the stored trial configs, the recommended command
// lines and the help texts are all generated from it, so adding a knob is one entry plus its engine effect.
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/settings/engine_settings.h"
#include "engine/threading/cpu_set.h"
#include "kernels/result.h"

namespace infertune {

// The commands a setting can belong to (a bit set).
enum class Command : uint8_t { run = 1, bench = 2, batched_bench = 4, sweep = 8, serve = 16 };

// A set of commands: `Command::run | Command::bench`.
struct Commands {
  uint8_t bits = 0;
  constexpr Commands() = default;
  constexpr Commands(Command command) : bits(static_cast<uint8_t>(command)) {}  // NOLINT: a set of one
  constexpr Commands operator|(Commands other) const { return from_bits(bits | other.bits); }
  constexpr bool has(Command command) const { return (bits & static_cast<uint8_t>(command)) != 0; }
  static constexpr Commands from_bits(int b) {
    Commands c;
    c.bits = static_cast<uint8_t>(b);
    return c;
  }
};

constexpr Commands operator|(Command a, Command b) { return Commands(a) | Commands(b); }

// "run", "bench", "batched-bench", "sweep", "serve"
std::string_view command_name(Command command);

// How a value is written: a whole number (lists in bench and sweep may use ranges first-last+step), 0/1, or
// a word from a fixed set (or free text checked by the setting, as a CPU mask).
enum class ValueKind { Integer, Boolean, Word };

struct Setting {
  std::string_view key = {};         // snake_case; the sweep spec's key (YAML and flags) and the name in messages
  std::string_view group = {};       // the heading its flag is listed under in --help
  std::string_view config_key = {};  // the field of a stored trial configuration (sweeps/store)
  std::string_view short_flag = {};  // "-t", "-ctk" (multi-letter ones reach CLI11 as the long form); or none
  std::string_view long_flag = {};   // "--threads"
  std::string_view llama_flag = {};  // how llama.cpp's tools spell it on a command line ("-ctk")
  // Commands that take the setting as a switch that sets one value ("--no-mmap" sets mmap 0) instead of
  // the value flags; empty: every command takes the value flags.
  std::string_view switch_flag = {};
  std::string_view switch_value = {};
  std::string_view switch_help = {};  // the switch's help line
  ValueKind kind = ValueKind::Integer;
  std::string_view default_value = {};  // canonical text
  std::string_view unset_value = {};    // a canonical value meaning "not set": left out of printed command lines
  // What llama.cpp's tools do without the flag, where that is not unset_value: their command lines leave out this
  // value instead, and state unset_value (-ngl: llama.cpp's default is auto, so a CPU-only line says -ngl 0).
  std::string_view llama_unset_value = {};
  std::string_view help = {};           // one line; the allowed values and the default are added from the entry
  Commands commands = {};               // which commands take it
  Commands list_commands = {};          // where it takes a comma list / ranges (bench, sweep)
  Commands switch_commands = {};        // where it is given as switch_flag (run-style commands, as llama.cpp's)
  // Loading the model depends on it (-ngl places the weights, mmap maps them): tests or trials that differ in
  // it cannot share a loaded model.
  bool reloads_model = false;
  // The sweep's spec hash and stored trial configs always carry this setting: those swept since the store's
  // schema v2. A setting added to the sweep later leaves this false and is written only when it is not at its
  // default, so adding it changes no stored hash (--resume still finds old sweeps).
  bool stored_when_default = false;
  // Checks text and returns the canonical spelling ("Q8_0" -> "q8_0", "true" -> "1"); the error says what is
  // allowed, the caller names the flag or spec line.
  Result<std::string> (*canonical)(std::string_view text) = nullptr;
  // What is allowed, for help and errors: "1..1024, or 0 / -1 (the number of physical cores)".
  std::string (*allowed)() = nullptr;
  // The engine effect: writes a canonical value into the settings.
  void (*apply)(std::string_view canonical, EngineSettings& into) = nullptr;
  // The canonical value the settings hold.
  std::string (*read)(const EngineSettings& from) = nullptr;
  // Checks that need this machine (the CPUs a -C mask names); null: none.
  Status (*check_on_machine)(std::string_view canonical, const CpuSet& machine) = nullptr;

  bool takes_list(Command command) const { return list_commands.has(command); }
  bool taken_by(Command command) const { return commands.has(command); }
  bool as_switch(Command command) const { return switch_commands.has(command); }
  // "-t" where there is a short flag, else the long one: how errors name the flag.
  std::string_view shown_flag() const { return short_flag.empty() ? long_flag : short_flag; }
  // "-t, --threads"
  std::string flag_names() const;
  // The value checked and spelled canonically, or an error "<shown_flag>: <why>".
  Result<std::string> parse(std::string_view text) const;
  Result<std::string> parse(std::string_view text, std::string_view where) const;
};

}  // namespace infertune
