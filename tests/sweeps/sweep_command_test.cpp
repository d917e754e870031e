// `infertune sweep` end to end: the dry-run plan from a YAML spec and from flags, errors naming the flag
// or line, and a run whose model is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace infertune {
namespace {

std::string model() { return test::fixture_path("models/fixture-llama-Q8_0.gguf").string(); }

TEST(SweepCommand, DryRunPrintsThePlanFromYaml) {
  const auto dir = test::temp_dir();
  const auto spec = (dir / "spec.yaml").string();
  std::ofstream(spec) << "models: " << model() << "\nthreads: 1-2\nctx_size: [256, 65536]\nmax_mem: 8M\n"
                      << "workloads:\n  - {pp: 64}\n";
  const auto r = test::run_command(test::infertune_binary() + " sweep --dry-run " + spec + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 trials in 1 reload groups, 2 skipped"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("skip: predicted"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fixture-llama-Q8_0.gguf -ngl 0 -mmp 1"), std::string::npos) << r.output;
}

TEST(SweepCommand, FlagsWithBenchNames) {
  const auto r = test::run_command(test::infertune_binary() + " sweep --dry-run --json -m " + model() +
                                   " -t 1,2 -ngl 0 -ctk f16,q8_0 -np 1 -ub 32 -b 64 -p 64 -mmp 0,1 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"spec_hash\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"type_k\": \"q8_0\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"mmap\": false"), std::string::npos) << r.output;
}

TEST(SweepCommand, BadFlagIsNamed) {
  const auto r = test::run_command(test::infertune_binary() + " sweep --dry-run -m " + model() + " -ctk q9 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("-ctk: 'q9'"), std::string::npos) << r.output;
}

TEST(SweepCommand, RunWithAMissingModelNamesItAndRecordsNothing) {
  const auto db = test::temp_dir() / "results.db";
  const auto r =
      test::run_command(test::infertune_binary() + " sweep -m /nonexistent/m.gguf --db " + db.string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/m.gguf"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(db)) << "a spec that cannot be planned leaves no database";
}

}  // namespace
}  // namespace infertune
