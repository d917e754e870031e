#pragma once
// hwloc synthetic descriptions of the machines the placement tests run on (no NUMA hardware needed).
namespace infertune::test {

// 2 packages x 2 NUMA nodes (8 GB each) x 4 cores x 2 PUs = 32 PUs. hwloc numbers PUs in order, so core c
// has PUs 2c and 2c+1, and NUMA node k holds PUs 8k..8k+7 (cores 4k..4k+3); nodes 0-1 are package 0.
inline constexpr const char* kTwoPackagesFourNodes = "pack:2 group:2 [numa(memory=8GB)] l3:1(size=16MB) core:4 pu:2";

// 1 package, 8 cores, SMT2, Linux's usual numbering: core c has PUs c and c + 8.
inline constexpr const char* kEightCoresSmt2 =
    "pack:1 [numa(memory=16GB)] l3:1(size=32MB) l2:8(size=1MB) core:1 "
    "pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)";

// One core, one PU.
inline constexpr const char* kSingleCore = "pack:1 core:1 pu:1";

}  // namespace infertune::test
