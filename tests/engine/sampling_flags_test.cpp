// add_sampling_flags: llama.cpp's flag names parse into SamplingParams, absent flags keep the defaults,
// and `--seed -1` means random as in llama.cpp.
#include "engine/sampling/sampling_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infertune {
namespace {

using ::testing::HasSubstr;

TEST(SamplingFlags, ParsesLlamaCppNames) {
  CLI::App app("test");
  SamplingParams params;
  add_sampling_flags(app, params);
  app.parse(
      "--temp 0.5 --top-k 10 --top-p 0.9 --min-p 0.1 --repeat-penalty 1.2 --repeat-last-n 128 "
      "--frequency-penalty 0.3 --presence-penalty 0.4 --seed 7",
      false);
  EXPECT_EQ(params.temperature, 0.5f);
  EXPECT_EQ(params.top_k, 10);
  EXPECT_EQ(params.top_p, 0.9f);
  EXPECT_EQ(params.min_p, 0.1f);
  EXPECT_EQ(params.repeat_penalty, 1.2f);
  EXPECT_EQ(params.repeat_last_n, 128);
  EXPECT_EQ(params.frequency_penalty, 0.3f);
  EXPECT_EQ(params.presence_penalty, 0.4f);
  EXPECT_EQ(params.seed, 7u);
}

TEST(SamplingFlags, AbsentFlagsKeepLlamaCppDefaults) {
  CLI::App app("test");
  SamplingParams params;
  add_sampling_flags(app, params);
  app.parse("--top-k 5", false);
  EXPECT_EQ(params.top_k, 5);
  EXPECT_EQ(params.temperature, 0.8f);
  EXPECT_EQ(params.top_p, 0.95f);
  EXPECT_EQ(params.min_p, 0.05f);
  EXPECT_EQ(params.repeat_penalty, 1.0f);
  EXPECT_EQ(params.repeat_last_n, 64);
  EXPECT_EQ(params.frequency_penalty, 0.0f);
  EXPECT_EQ(params.presence_penalty, 0.0f);
  EXPECT_EQ(params.seed, kRandomSeed);
}

TEST(SamplingFlags, SeedMinusOneIsRandomAndShortFlagWorks) {
  CLI::App app("test");
  SamplingParams params;
  params.seed = 1;
  add_sampling_flags(app, params);
  app.parse("-s -1", false);
  EXPECT_EQ(params.seed, kRandomSeed);
  CLI::App other("test");
  add_sampling_flags(other, params);
  other.parse("-s 18446744073709551615", false);
  EXPECT_EQ(params.seed, 18446744073709551615ull);
}

TEST(SamplingFlags, NegativeValuesAndBadNumbers) {
  CLI::App app("test");
  SamplingParams params;
  add_sampling_flags(app, params);
  app.parse("--temp -1 --repeat-last-n -1", false);
  EXPECT_EQ(params.temperature, -1.0f);
  EXPECT_EQ(params.repeat_last_n, -1);

  CLI::App bad("test");
  add_sampling_flags(bad, params);
  EXPECT_THROW(bad.parse("--top-k many", false), CLI::ParseError);
  CLI::App bad_seed("test");
  add_sampling_flags(bad_seed, params);
  // CLI11 alone would wrap -2 into 2^64 - 2; the flag refuses it and says which flag.
  try {
    bad_seed.parse("--seed -2", false);
    ADD_FAILURE() << "--seed -2 was accepted as " << params.seed;
  } catch (const CLI::ParseError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--seed"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("-1 (random)"));
  }
}

TEST(SamplingFlags, HelpListsEveryFlagWithDefaults) {
  CLI::App app("test");
  SamplingParams params;
  add_sampling_flags(app, params);
  const std::string help = app.help();
  for (const char* flag : {"--temp", "--top-k", "--top-p", "--min-p", "--repeat-penalty", "--repeat-last-n",
                           "--frequency-penalty", "--presence-penalty", "--seed"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
  EXPECT_THAT(help, HasSubstr("default 0.80"));
  EXPECT_THAT(help, HasSubstr("default -1, random"));
}

}  // namespace
}  // namespace infertune
