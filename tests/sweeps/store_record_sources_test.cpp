// The host and build rows as the sweep will write them: from a host probe and from this binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/probe_sample.h"  // tests/bench: a fully populated probe
#include "infertune_version.h"
#include "sweeps/store/record_sources.h"
#include "sweeps/store/results_store.h"
#include "test_support.h"

namespace infertune {
namespace {

TEST(StoreRecordSources, HostRecordCarriesTheProbe) {
  const HostRecord host = host_record(test::sample_probe());
  EXPECT_EQ(host.fingerprint, "0123456789abcdef");
  EXPECT_EQ(host.cpu_model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(host.cpu_features, "sse4.2 avx avx2 fma avx512f amx-int8");
  EXPECT_EQ(host.physical_cores, 112);
  EXPECT_EQ(host.hardware_threads, 224);
  EXPECT_EQ(host.memory_bytes, int64_t{511} << 30);
  ASSERT_TRUE(host.read_bandwidth_gbs);
  EXPECT_DOUBLE_EQ(*host.read_bandwidth_gbs, 412.3456789);
  const auto nodes = nlohmann::json::parse(host.numa_nodes_json);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1]["memory_bytes"], uint64_t{255} << 30);
  EXPECT_EQ(nodes[0]["cpus"], "0-55,112-167");
  const auto gpus = nlohmann::json::parse(host.gpus_json);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]["name"], "NVIDIA H100 80GB HBM3");
  const auto probe = nlohmann::json::parse(host.probe_json);
  EXPECT_EQ(probe["format"], "infertune-host-probe");
  EXPECT_EQ(probe["fingerprint"], "0123456789abcdef");

  auto store = ResultsStore::open(test::temp_dir() / "r.db");
  ASSERT_TRUE(store);
  auto id = store->upsert_host(host);
  ASSERT_TRUE(id) << id.error().message;
}

TEST(StoreRecordSources, ThisBuildRecord) {
  const BuildRecord build = this_build_record();
  EXPECT_EQ(build.version, INFERTUNE_VERSION);
  EXPECT_EQ(build.git_commit, INFERTUNE_GIT_COMMIT);
  EXPECT_EQ(build.compiler, INFERTUNE_COMPILER);
  EXPECT_EQ(build.build_type, INFERTUNE_BUILD_TYPE);
  EXPECT_EQ(build.backends.rfind("cpu", 0), 0u) << build.backends;
  EXPECT_NE(build.kernel_variants.find("scalar"), std::string::npos) << build.kernel_variants;
  if (build.build_type == std::string("Release")) {
    EXPECT_NE(build.flags.find("-DNDEBUG"), std::string::npos) << build.flags;
  }
  auto store = ResultsStore::open(test::temp_dir() / "r.db");
  ASSERT_TRUE(store);
  auto first = store->upsert_build(build);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(*store->upsert_build(this_build_record()), *first);
}

}  // namespace
}  // namespace infertune
