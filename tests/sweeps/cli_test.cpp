// End-to-end checks of the `infertune` binary's top level: --version, help, unknown input.
#include <gtest/gtest.h>

#include "kernels/cpu_features.h"
#include "test_support.h"

namespace infertune {
namespace {

using test::infertune_binary;
using test::run_command;

TEST(Cli, VersionNamesCommitBackendsAndCpuFeatures) {
  const auto r = run_command(infertune_binary() + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("infertune 0."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("commit "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("backends: cpu"), std::string::npos) << r.output;
  // The features printed are the ones this process detects.
  for (const auto& name : cpu_features().names()) {
    EXPECT_NE(r.output.find(" " + name), std::string::npos) << name << "\n" << r.output;
  }
}

TEST(Cli, NoSubcommandPrintsHelpAndFails) {
  const auto r = run_command(infertune_binary());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("inspect"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("synth"), std::string::npos) << r.output;
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const std::string command : {"inspect", "synth"}) {
    const auto r = run_command(infertune_binary() + " " + command + " --help");
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << command << ": " << r.output;
  }
}

TEST(Cli, UnknownSubcommandIsAnError) {
  const auto r = run_command(infertune_binary() + " frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("frobnicate"), std::string::npos) << r.output;
}

TEST(Cli, InspectOfAMissingFileNamesIt) {
  const auto r = run_command(infertune_binary() + " inspect /nonexistent/model.gguf");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("/nonexistent/model.gguf"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace infertune
