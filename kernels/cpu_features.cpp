#include "kernels/cpu_features.h"

#include <cpuid.h>

#include <cstdint>
#include <cstring>

namespace infertune {
namespace {

struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidRegs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

bool bit(uint32_t value, int index) { return (value >> index) & 1u; }

// XCR0: which register states the OS saves on context switch. AVX needs XMM|YMM, AVX-512 also opmask/ZMM.
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

std::string read_model_name() {
  if (cpuid(0x80000000).eax < 0x80000004) return {};
  char name[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    const CpuidRegs r = cpuid(0x80000002 + i);
    std::memcpy(name + i * 16, &r, 16);
  }
  std::string s(name);
  const auto first = s.find_first_not_of(' ');
  const auto last = s.find_last_not_of(' ');
  return first == std::string::npos ? std::string{} : s.substr(first, last - first + 1);
}

CpuFeatures detect() {
  CpuFeatures f;
  const CpuidRegs leaf0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  f.vendor = vendor;
  f.model_name = read_model_name();

  const CpuidRegs leaf1 = cpuid(1);
  f.sse42 = bit(leaf1.ecx, 20);
  const bool os_saves_ymm = bit(leaf1.ecx, 27) && (read_xcr0() & 0x6) == 0x6;  // OSXSAVE, XMM|YMM
  const bool os_saves_zmm = os_saves_ymm && (read_xcr0() & 0xe6) == 0xe6;      // + opmask, ZMM_Hi256, Hi16_ZMM
  f.avx = bit(leaf1.ecx, 28) && os_saves_ymm;
  f.fma = bit(leaf1.ecx, 12) && f.avx;
  f.f16c = bit(leaf1.ecx, 29) && f.avx;
  if (leaf0.eax >= 7) {
    const CpuidRegs leaf7 = cpuid(7, 0);
    const CpuidRegs leaf7_1 = cpuid(7, 1);
    f.avx2 = bit(leaf7.ebx, 5) && f.avx;
    f.avx_vnni = bit(leaf7_1.eax, 4) && f.avx2;
    f.avx512f = bit(leaf7.ebx, 16) && os_saves_zmm;
    f.avx512bw = bit(leaf7.ebx, 30) && f.avx512f;
    f.avx512vl = bit(leaf7.ebx, 31) && f.avx512f;
    f.avx512_vnni = bit(leaf7.ecx, 11) && f.avx512f;
    f.avx512_bf16 = bit(leaf7_1.eax, 5) && f.avx512f;
    f.amx_int8 = bit(leaf7.edx, 25);
  }
  return f;
}

}  // namespace

std::vector<std::string> CpuFeatures::names() const {
  std::vector<std::string> out;
  const std::pair<bool, const char*> all[] = {
      {sse42, "sse4.2"},       {avx, "avx"},           {avx2, "avx2"},           {fma, "fma"},
      {f16c, "f16c"},          {avx_vnni, "avx-vnni"}, {avx512f, "avx512f"},     {avx512bw, "avx512bw"},
      {avx512vl, "avx512vl"},  {avx512_vnni, "avx512-vnni"}, {avx512_bf16, "avx512-bf16"}, {amx_int8, "amx-int8"},
  };
  for (const auto& [present, name] : all) {
    if (present) out.emplace_back(name);
  }
  return out;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace infertune
