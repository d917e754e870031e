// `bench --list-devices`: llama-bench's wording, with and without GPUs, and the binary's own answer here.
#include "bench/llama_bench/device_list.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "kernels/cuda/cuda_devices.h"
#include "test_support.h"

namespace infertune {
namespace {

TEST(DeviceList, NoDeviceIsSaidAsLlamaBenchSaysIt) {
  EXPECT_EQ(device_list_text({}), "Available devices:\n  (none)\n");
}

TEST(DeviceList, EachDeviceWithItsMemoryInMiB) {
  const std::vector<ListedDevice> devices{
      {.index = 0, .name = "NVIDIA H100 80GB HBM3", .total_bytes = 85017755648, .free_bytes = 84452179968},
      {.index = 1, .name = "NVIDIA L4", .total_bytes = uint64_t{23034} << 20, .free_bytes = {}}};
  EXPECT_EQ(device_list_text(devices),
            "Available devices:\n"
            "  CUDA0: NVIDIA H100 80GB HBM3 (81079 MiB, 80539 MiB free)\n"
            "  CUDA1: NVIDIA L4 (23034 MiB, free memory unknown)\n");
}

TEST(DeviceList, TheBinaryListsWhatTheCudaRuntimeSeesWithoutAModel) {
  if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
  const auto result = test::run_command(test::infertune_binary() + " bench --list-devices");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.rfind("Available devices:\n", 0), 0u) << result.output;
  const bool none = result.output.find("  (none)") != std::string::npos;
  EXPECT_EQ(none, cuda_devices().empty()) << result.output;
}

}  // namespace
}  // namespace infertune
