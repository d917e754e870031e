#pragma once
// A fully populated host probe for the probe tests: every field differs from its default, so a field
// that a serializer drops or a parser misreads shows up as an inequality.
#include "bench/probe/host_probe.h"

namespace infertune::test {

inline HostInfo sample_host_info() {
  HostInfo h;
  h.cpu_vendor = "GenuineIntel";
  h.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  h.cpu_features = {"sse4.2", "avx", "avx2", "fma", "avx512f", "amx-int8"};
  h.packages = 2;
  h.physical_cores = 112;
  h.hardware_threads = 224;
  h.caches = {{"L1d", 48 << 10, 112}, {"L2", 2 << 20, 112}, {"L3", 105ull << 20, 2}};
  h.numa_nodes = {{0, 256ull << 30, "0-55,112-167"}, {1, 255ull << 30, "56-111,168-223"}};
  h.memory_bytes = 511ull << 30;
  h.os = {"Linux", "6.1.0-18-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1", "x86_64"};
  h.gpus = {{0, "NVIDIA H100 80GB HBM3", 9, 0, 85520809984ull, "00000000:19:00.0", 5120, 2619, 3352.32},
            {1, "NVIDIA A10", 8, 6, 23836033024ull, "00000000:3B:00.0", 0, 0, std::nullopt}};
  return h;
}

inline HostProbe sample_probe() {
  HostProbe p;
  p.host = sample_host_info();
  p.fingerprint = "0123456789abcdef";
  p.measured_at_unix = 1748779200;
  p.measure_seconds = 3.0625;
  p.bandwidth = {"avx512f", 1ull << 30, {112, 8, 412.3456789, 398.1}, {1, 8, 21.75, 20.5}, {112, 5, 380.0, 377.7}};
  p.compute = {"avx512f",     {1, 5, 123.456, 120.0}, {112, 5, 13000.5, 12900.25},
               "avx512-vnni", {1, 5, 987.6, 950.0},   {112, 5, 101234.5, 100000.125}};
  p.gpus = {{0, "NVIDIA H100 80GB HBM3", "00000000:19:00.0", 2890.5, 612.25, 8192, ""},
            {1, "NVIDIA A10", "00000000:3B:00.0", 512.75, std::nullopt, 8192, "f16 GEMM: out of memory"}};
  return p;
}

}  // namespace infertune::test
