// The regression gate checked against a regression it must catch: `infertune compare --bin` with the same
// binary on both sides (A/A) passes; with INFERTUNE_FAULT_SLOWDOWN making every decode step of the candidate
// 20% longer (engine/context/step_fault_injection.h) it fails; with 2% it is PASS, WARN or INCONCLUSIVE,
// never FAIL (2% is within the 5% threshold, however sure the measurement). The fixture model is tiny and the
// tests short, so each comparison takes a few seconds on two cores.
//
// On a machine so busy that the interval is wider than the threshold, the gate's honest answer is
// INCONCLUSIVE: the comparison is then repeated with more blocks, and if it stays INCONCLUSIVE the test is
// skipped with the table (a quiet machine is what it needs). A wrong answer (A/A failing or warning, 20% passing,
// 2% failing) is never excused.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"

namespace infertune {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;
  nlohmann::json doc;
};

Outcome compare_once(const std::string& slowdown, int blocks, const std::string& threshold = "5%") {
  const auto dir = test::temp_dir();
  const std::string binary = test::infertune_binary();
  const std::string model = test::fixture_path("models/fixture-llama-Q4_0.gguf").string();
  std::string command = binary + " compare --bin " + binary + " --bin " + binary + " -m " + model +
                        " -p 32 -n 32 -t 1 -r 7 --no-probe --blocks " + std::to_string(blocks) + " --threshold " + threshold +
                        " --json " + (dir / "out.json").string();
  if (!slowdown.empty()) command += " --candidate-env INFERTUNE_FAULT_SLOWDOWN=" + slowdown;
  Outcome outcome;
  const auto r = test::run_command(command);
  outcome.exit_code = r.exit_code;
  outcome.output = r.output;
  std::ifstream in(dir / "out.json");
  std::stringstream text;
  text << in.rdbuf();
  outcome.doc = nlohmann::json::parse(text.str(), nullptr, false);
  return outcome;
}

Outcome compare_with_slowdown(const std::string& slowdown) {
  Outcome o;
  for (int blocks : {16, 24, 32}) {
    o = compare_once(slowdown, blocks);
    if (o.exit_code != 3) break;
  }
  return o;
}

#define SKIP_IF_TOO_NOISY(o) \
  if ((o).exit_code == 3) GTEST_SKIP() << "the machine is too noisy for an interval within 5% (INCONCLUSIVE):\n" << (o).output

// Block-to-block noise on a shared 2-core VM is often wider than 5% even for identical binaries; the gate
// then says INCONCLUSIVE, honestly. The property checked is that identical binaries pass once the threshold
// is above the noise the machine has: 5% first, then 10% and 20% with more blocks. No attempt may FAIL.
TEST(CompareSelfTest, SameBinaryPasses) {
  Outcome o;
  for (const auto& [threshold, blocks] : {std::pair{"5%", 16}, {"5%", 32}, {"10%", 32}, {"20%", 32}}) {
    o = compare_once("", blocks, threshold);
    ASSERT_NE(o.exit_code, 2) << "A/A must never FAIL (threshold " << threshold << "):\n" << o.output;
    if (o.exit_code != 3) break;
  }
  ASSERT_FALSE(o.doc.is_discarded()) << o.output;
  SKIP_IF_TOO_NOISY(o);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(o.doc["verdict"], "PASS") << o.output;
  ASSERT_EQ(o.doc["comparisons"].size(), 2u) << o.output;  // pp32 and tg32
  for (const auto& row : o.doc["comparisons"]) EXPECT_EQ(row["test"], "Wilcoxon signed-rank");
}

TEST(CompareSelfTest, TwentyPercentSlowerCandidateFails) {
  const Outcome o = compare_with_slowdown("0.20");
  ASSERT_FALSE(o.doc.is_discarded()) << o.output;
  SKIP_IF_TOO_NOISY(o);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(o.doc["verdict"], "FAIL") << o.output;
  for (const auto& row : o.doc["comparisons"]) {
    EXPECT_NE(row["verdict"], "PASS") << o.output;
    EXPECT_NE(row["verdict"], "WARN") << o.output;
    // Each step takes 1.2x as long: a throughput ratio near 1 / 1.2 (more under contention, where the
    // busy-wait competes for the CPU too).
    EXPECT_LT(row["ratio"].get<double>(), 0.95) << o.output;
  }
}

TEST(CompareSelfTest, TwoPercentSlowerCandidateNeverFails) {
  const Outcome o = compare_once("0.02", 16);
  ASSERT_FALSE(o.doc.is_discarded()) << o.output;
  EXPECT_NE(o.exit_code, 2) << o.output;
  EXPECT_NE(o.exit_code, 4) << o.output;
  EXPECT_NE(o.doc["verdict"], "FAIL") << o.output;
}

}  // namespace
}  // namespace infertune
