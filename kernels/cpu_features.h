#pragma once
// The x86-64 ISA extensions this CPU and OS support, read once from CPUID/XGETBV. Kernel dispatch uses
// this to pick a variant at start-up; `infertune --version` and probe report it.
#include <string>
#include <vector>

namespace infertune {

struct CpuFeatures {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  std::string model_name;
  bool sse42 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx_vnni = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool amx_int8 = false;

  // Names of the supported extensions, in a fixed order ("sse4.2 avx avx2 fma f16c ...").
  std::vector<std::string> names() const;
};

const CpuFeatures& cpu_features();

}  // namespace infertune
