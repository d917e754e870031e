#include "engine/sampling/sampling_flags.h"

#include <fmt/format.h>

#include <string>

#include "engine/cli/flag_ranges.h"

namespace infertune {
namespace {

constexpr const char* kGroup = "Sampling";

// llama.cpp documents `--seed -1` for "random". CLI11 would wrap any other negative number into a huge
// unsigned seed without a word, so those are refused here.
CLI::Validator seed_validator() {
  return CLI::Validator(
      [](std::string& text) {
        if (text == "-1") {
          text = std::to_string(kRandomSeed);
        } else if (!text.empty() && text.front() == '-') {
          return "must be -1 (random) or a number >= 0, got " + text;
        }
        return std::string();
      },
      "", "seed: -1 or unsigned");
}

}  // namespace

void add_sampling_flags(CLI::App& command, SamplingParams& params) {
  command
      .add_option("--temp", params.temperature,
                  fmt::format("Temperature (default {:.2f}); <= 0 picks the most likely token", params.temperature))
      ->check(real_flag_range({.note = "<= 0 = the most likely token"}))
      ->group(kGroup);
  command.add_option("--top-k", params.top_k, fmt::format("Top-k sampling (default {}, 0 = off)", params.top_k))
      ->transform(int_flag_range({.low = 0, .note = "0 = off"}))
      ->group(kGroup);
  command
      .add_option("--top-p", params.top_p,
                  fmt::format("Top-p (nucleus) sampling, in (0, 1] (default {:.2f}, 1.0 = off)", params.top_p))
      ->check(real_flag_range({.low = 0, .high = 1, .low_open = true, .note = "1 = off"}))
      ->group(kGroup);
  command
      .add_option("--min-p", params.min_p,
                  fmt::format("Min-p sampling, in [0, 1] (default {:.2f}, 0.0 = off)", params.min_p))
      ->check(real_flag_range({.low = 0, .high = 1, .note = "0 = off"}))
      ->group(kGroup);
  command
      .add_option("--repeat-penalty", params.repeat_penalty,
                  fmt::format("Penalize repeated tokens (default {:.2f}, 1.0 = off)", params.repeat_penalty))
      ->check(real_flag_range({.low = 0, .low_open = true, .note = "1 = off"}))
      ->group(kGroup);
  command
      .add_option(
          "--repeat-last-n", params.repeat_last_n,
          fmt::format("Last n tokens the penalties consider (default {}, 0 = off, -1 = all)", params.repeat_last_n))
      ->transform(int_flag_range({.low = 0, .special = {{-1, "the whole history"}}, .note = "0 = off"}))
      ->group(kGroup);
  command
      .add_option("--frequency-penalty", params.frequency_penalty,
                  fmt::format("Repeat alpha frequency penalty (default {:.2f}, 0.0 = off)", params.frequency_penalty))
      ->check(real_flag_range({.note = "0 = off; negative favours repeats"}))
      ->group(kGroup);
  command
      .add_option("--presence-penalty", params.presence_penalty,
                  fmt::format("Repeat alpha presence penalty (default {:.2f}, 0.0 = off)", params.presence_penalty))
      ->check(real_flag_range({.note = "0 = off; negative favours repeats"}))
      ->group(kGroup);
  const std::string seed_default = params.seed == kRandomSeed ? "-1, random" : std::to_string(params.seed);
  command
      .add_option("-s,--seed", params.seed,
                  fmt::format("RNG seed (default {}); the same seed and settings give the same tokens", seed_default))
      ->transform(seed_validator())
      ->group(kGroup);
}

}  // namespace infertune
