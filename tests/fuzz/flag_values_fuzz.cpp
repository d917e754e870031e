// libFuzzer target for the values a user types into flags: the settings table's checks and canonical
// spellings, the list/range syntax of bench and sweep (value_lists.h), --prompt-tokens, sizes, durations and
// percentages, loadgen's lengths, and whole `infertune sweep` command lines (aliases, CLI11, resolve_spec).
//
// An input is a mode byte, then text whose lines ('\n') are the occurrences of a flag (or, in mode argv, the
// arguments). Modes (the byte modulo 6):
//   0 setting   two more bytes pick the setting (modulo their number) and the command (run, bench,
//               batched-bench, sweep, serve); the lines go to parse_setting_values
//   1 int list  one more byte: bit 0 allow_negative, bit 1 checked against an IntRange of -1..1024
//   2 words     split_list, parse_word_list, parse_bool_list and parse_pair_list of the same lines
//   3 tokens    parse_token_list of the text (one line)
//   4 scalars   parse_byte_size, parse_duration_s, parse_percent, parse_length_range and
//               parse_duration_seconds of the text (one line)
//   5 argv      the lines are the arguments of `infertune sweep`
// Properties checked on every input; a violation prints what failed and traps (libFuzzer: a crash):
//   - no crash, hang, uncaught exception or over-allocation (ASan/UBSan, -timeout, -rss_limit_mb);
//   - every refusal has a message, and a setting's refusal starts with where the value came from;
//   - an accepted setting value is canonical: the setting's own check returns it unchanged, parsing the
//     canonical values again gives them again, and writing one into the engine settings reads it back;
//   - a list holds no empty item and joins back to its text; a flag's list expands to at most kMaxRangeValues
//     values in all; values are non-negative unless allowed, and inside the IntRange they were
//     checked against;
//   - token ids are non-negative and the list parses again from its own join;
//   - sizes, durations and percentages are finite and non-negative; a length range has low <= high;
//   - a sweep command line that resolves has a spec hash (its canonical JSON serializes).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "bench/loadgen/load_options.h"
#include "engine/cli/flag_aliases.h"
#include "engine/run/token_list.h"
#include "engine/settings/setting_flags.h"
#include "engine/settings/settings_table.h"
#include "engine/settings/value_lists.h"
#include "fuzz_check.h"
#include "sweeps/spec/spec_flags.h"
#include "sweeps/spec/sweep_spec.h"

namespace {

using namespace infertune;

using fuzz::check;

template <typename T>
void check_refusal(const Result<T>& result, const char* what) {
  if (!result) check(!result.error().message.empty(), what);
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    lines.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return lines;
    start = end + 1;
  }
}

template <typename T>
std::string joined(const std::vector<T>& items) {
  return fmt::format("{}", fmt::join(items, ","));
}

constexpr Command kCommands[] = {Command::run, Command::bench, Command::batched_bench, Command::sweep, Command::serve};

void fuzz_setting(std::string_view bytes) {
  if (bytes.size() < 2) return;
  const auto settings = all_settings();
  const Setting& setting = settings[static_cast<uint8_t>(bytes[0]) % settings.size()];
  const Command command = kCommands[static_cast<uint8_t>(bytes[1]) % std::size(kCommands)];
  if (!setting.taken_by(command)) return;
  const auto occurrences = lines_of(bytes.substr(2));
  const std::string where = "--flag";
  auto values = parse_setting_values(setting, command, occurrences, where);
  if (!values) {
    check(values.error().message.starts_with(where), "a setting's refusal names where the value came from");
    return;
  }
  check(!values->empty(), "an accepted setting has a value");
  check(setting.takes_list(command) || values->size() == 1, "a single-valued setting gives one value");
  check(values->size() <= kMaxRangeValues, "a flag's list expands to at most kMaxRangeValues in all");
  for (const auto& value : *values) {
    auto again = setting.canonical(value);
    check(again.ok() && *again == value, "a canonical value is its own canonical spelling");
    EngineSettings engine;
    setting.apply(value, engine);
    check(setting.read(engine) == value, "a canonical value written into the settings reads back");
  }
  if (setting.takes_list(command)) {
    auto reparsed = parse_setting_values(setting, command, {joined(*values)}, where);
    check(reparsed.ok() && *reparsed == *values, "the canonical list parses to itself");
  }
}

void fuzz_int_list(std::string_view bytes) {
  if (bytes.empty()) return;
  const bool allow_negative = (bytes[0] & 1) != 0;
  const bool ranged = (bytes[0] & 2) != 0;
  const auto occurrences = lines_of(bytes.substr(1));
  const IntRange allowed{.low = -1, .high = 1024};
  auto values = ranged ? parse_int_list(occurrences, "-x", allowed) : parse_int_list(occurrences, "-x", allow_negative);
  check_refusal(values, "an int list's refusal has a message");
  if (!values) return;
  check(values->size() <= kMaxRangeValues, "an int list expands to at most kMaxRangeValues in all");
  for (int v : *values) {
    if (ranged) check(allowed.allows(v), "an int list checked against a range stays inside it");
    if (!ranged && !allow_negative) check(v >= 0, "an int list without allow_negative has no negative value");
  }
}

void fuzz_word_lists(std::string_view bytes) {
  const auto occurrences = lines_of(bytes);
  for (const auto& occurrence : occurrences) {
    auto items = split_list(occurrence, "-x");
    check_refusal(items, "split_list's refusal has a message");
    if (!items) continue;
    for (const auto& item : *items) check(!item.empty(), "split_list gives no empty item");
    check(joined(*items) == occurrence, "split_list's items join back to the text");
  }
  auto words = parse_word_list(occurrences, "-x");
  check_refusal(words, "parse_word_list's refusal has a message");
  if (words) {
    for (const auto& word : *words) check(!word.empty(), "parse_word_list gives no empty word");
  }
  check_refusal(parse_bool_list(occurrences, "-x"), "parse_bool_list's refusal has a message");
  auto pairs = parse_pair_list(occurrences, "-pg");
  check_refusal(pairs, "parse_pair_list's refusal has a message");
  if (pairs) {
    check(pairs->size() == occurrences.size(), "-pg gives one pair per occurrence");
    for (const auto& [pp, tg] : *pairs) check(pp >= 0 && tg >= 0, "-pg counts are non-negative");
  }
}

void fuzz_token_list(std::string_view text) {
  auto tokens = parse_token_list(text);
  check_refusal(tokens, "parse_token_list's refusal has a message");
  if (!tokens) return;
  check(!tokens->empty(), "an accepted token list is not empty");
  for (int32_t id : *tokens) check(id >= 0, "token ids are non-negative");
  auto reparsed = parse_token_list(joined(*tokens));
  check(reparsed.ok() && *reparsed == *tokens, "a token list parses again from its own join");
}

void check_non_negative(const Result<double>& value, const char* what) {
  check_refusal(value, what);
  if (value) check(std::isfinite(*value) && *value >= 0, what);
}

void fuzz_scalars(std::string_view text) {
  check_refusal(parse_byte_size(text, "--max-mem"), "parse_byte_size's refusal has a message");
  check_non_negative(parse_duration_s(text, "--time-budget"), "a sweep duration is finite and non-negative");
  check_non_negative(parse_percent(text, "--max-quality-loss"), "a percentage is finite and non-negative");
  check_non_negative(parse_duration_seconds(text), "a loadgen duration is finite and non-negative");
  auto lengths = parse_length_range(text);
  check_refusal(lengths, "parse_length_range's refusal has a message");
  if (lengths) check(lengths->low <= lengths->high, "a length range has low <= high");
}

Result<SweepSpec> resolve_flags(const SpecFlagText& flags) { return resolve_spec(merge_spec_flags(SpecText{}, flags)); }

// The sweep's flags, built once: a CLI11 app with every option costs more than most inputs' parse. Each
// input clears the texts the options write into (in place: the options hold references to them).
struct SweepFlags {
  CLI::App app{"sweep"};
  SpecFlagText text;
  std::vector<FlagAlias> aliases = sweep_flag_aliases();

  SweepFlags() { add_sweep_spec_flags(app, text); }

  void clear() {
    app.clear();
    for (auto& [key, occurrences] : text.values) occurrences.clear();
    for (auto& [key, occurrences] : text.settings.occurrences) occurrences.clear();
  }
};

void fuzz_sweep_argv(std::string_view text) {
  static SweepFlags flags;
  flags.clear();
  std::vector<std::string> args = lines_of(text);
  rewrite_flag_aliases(args, flags.aliases);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the arguments last first
  try {
    flags.app.parse(reversed);
  } catch (const CLI::ParseError&) {
    return;  // what the dispatcher prints as a usage error
  }
  auto spec = resolve_flags(flags.text);
  check_refusal(spec, "resolve_spec's refusal has a message");
  // (Resolved once: spec_yaml_fuzz checks that the same spec gives the same hash.)
  if (spec) check(!spec->hash().empty(), "a resolved command line has a spec hash");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      fuzz_setting(rest);
      break;
    case 1:
      fuzz_int_list(rest);
      break;
    case 2:
      fuzz_word_lists(rest);
      break;
    case 3:
      fuzz_token_list(rest);
      break;
    case 4:
      fuzz_scalars(rest);
      break;
    default:
      fuzz_sweep_argv(rest);
      break;
  }
  return 0;
}
