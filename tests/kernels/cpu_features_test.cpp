// CPUID detection against an independent source: the flags the Linux kernel reports in /proc/cpuinfo.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "kernels/cpu_features.h"

namespace infertune {
namespace {

std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(CpuFeatures, AgreeWithProcCpuinfo) {
  const auto flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line on this system";
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(f.sse42, flags.count("sse4_2") == 1);
  EXPECT_EQ(f.avx, flags.count("avx") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  EXPECT_EQ(f.f16c, flags.count("f16c") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512_vnni, flags.count("avx512_vnni") == 1);
  EXPECT_EQ(f.avx_vnni, flags.count("avx_vnni") == 1);
  EXPECT_EQ(f.avx512_bf16, flags.count("avx512_bf16") == 1);
}

TEST(CpuFeatures, NamesListOnlyPresentFeatures) {
  const CpuFeatures& f = cpu_features();
  const auto names = f.names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "avx2"), f.avx2 ? 1 : 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "avx512f"), f.avx512f ? 1 : 0);
}

}  // namespace
}  // namespace infertune
