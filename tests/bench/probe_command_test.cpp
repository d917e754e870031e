// `infertune probe` end to end, with its cache under the test's temp dir: the first run measures (its JSON
// parses back as a probe of this host), the second reuses the cache, and a damaged cache file is
// replaced with a warning rather than a failure.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bench/probe/host_fingerprint.h"
#include "bench/probe/probe_cache.h"
#include "bench/probe/probe_json.h"
#include "kernels/cuda/cuda_devices.h"
#include "test_support.h"

namespace infertune {
namespace {

class ProbeCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
    cache_home_ = test::temp_dir();
  }
  test::CommandResult probe(const std::string& flags) {
    return test::run_command("XDG_CACHE_HOME=" + cache_home_.string() + " " + test::infertune_binary() + " probe " +
                             flags);
  }
  // The JSON object in the output (stderr lines come before it).
  static nlohmann::json json_of(const std::string& output) {
    const auto start = output.find("{\n");
    return nlohmann::json::parse(start == std::string::npos ? "" : output.substr(start), nullptr, false);
  }
  std::filesystem::path cache_home_;
};

TEST_F(ProbeCommand, MeasuresThenReusesThenSurvivesADamagedCache) {
  const auto first = probe("--json");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto first_json = json_of(first.output);
  ASSERT_FALSE(first_json.is_discarded()) << first.output;
  EXPECT_EQ(first_json.at("cached"), false);
  auto measured = host_probe_from_json(first_json);
  ASSERT_TRUE(measured) << measured.error().message;

  auto live = read_host_topology();
  ASSERT_TRUE(live);
  EXPECT_EQ(measured->fingerprint, host_fingerprint(live->info));
  EXPECT_EQ(measured->host.physical_cores, live->info.physical_cores);
  EXPECT_EQ(measured->bandwidth.read_all_cores.threads, live->info.physical_cores);
  EXPECT_GT(measured->bandwidth.read_all_cores.best, 0.0);
  EXPECT_GE(measured->bandwidth.buffer_bytes, std::min<uint64_t>(1ull << 30, live->info.memory_bytes / 4) / 2);
  const auto file = probe_cache_file(cache_home_ / "infertune", measured->fingerprint);
  ASSERT_TRUE(std::filesystem::exists(file));

  const auto second = probe("");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("cached, measured at " + utc_timestamp(measured->measured_at_unix)), std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("memory bandwidth"), std::string::npos);
  if (live->info.gpus.empty()) {
    EXPECT_NE(
        second.output.find(cuda_compiled() ? "GPUs: none visible" : "GPUs: none (this build has no CUDA backend)"),
        std::string::npos)
        << second.output;
    EXPECT_TRUE(first_json.at("gpus").empty());
  } else {
    EXPECT_NE(second.output.find("GPU 0: " + live->info.gpus[0].name), std::string::npos) << second.output;
    ASSERT_EQ(first_json.at("gpus").size(), live->info.gpus.size());
    EXPECT_GT(first_json.at("gpus").at(0).at("copy_bandwidth_gbs").get<double>(), 0.0) << first_json.at("gpus");
    EXPECT_GT(first_json.at("gpus").at(0).at("f16_gemm_tflops").get<double>(), 0.0) << first_json.at("gpus");
  }
  EXPECT_EQ(second.output.find("measuring"), std::string::npos) << second.output;

  std::ofstream(file, std::ios::trunc) << "{\"format\": \"infertune-host-probe\", \"format_vers";
  const auto third = probe("--json");
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_NE(third.output.find("warning: ignoring the cached host probe"), std::string::npos) << third.output;
  const auto third_json = json_of(third.output);
  ASSERT_FALSE(third_json.is_discarded()) << third.output;
  EXPECT_EQ(third_json.at("cached"), false);
  EXPECT_TRUE(host_probe_from_json(third_json));
}

TEST_F(ProbeCommand, RejectsAnUnknownFlag) {
  const auto result = probe("--no-such-flag");
  EXPECT_NE(result.exit_code, 0);
}

}  // namespace
}  // namespace infertune
