// `infertune --version` names the kernel variant each family runs, and INFERTUNE_KERNEL changes it.
#include <gtest/gtest.h>

#include <string>

#include "kernels/ops/ops_kernels.h"
#include "test_support.h"

namespace infertune {
namespace {

using test::infertune_binary;
using test::run_command;

TEST(VersionKernels, NamesTheChosenMatmulAndOpsVariants) {
  const auto r = run_command("env -u INFERTUNE_KERNEL " + infertune_binary() + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string best(available_ops_variants(compiled_ops_variants()).front().name);
  EXPECT_NE(r.output.find("kernels: matmul "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", ops " + best + " (available: "), std::string::npos) << r.output;
}

TEST(VersionKernels, ForcedVariantIsShown) {
  const auto r = run_command("INFERTUNE_KERNEL=scalar " + infertune_binary() + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("kernels: matmul scalar "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", ops scalar "), std::string::npos) << r.output;
}

TEST(VersionKernels, OpsAloneCanBeForced) {
  const auto r =
      run_command("env -u INFERTUNE_KERNEL INFERTUNE_OPS_KERNEL=scalar " + infertune_binary() + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(", ops scalar "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("kernels: matmul scalar "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace infertune
