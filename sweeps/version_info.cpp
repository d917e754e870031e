#include "sweeps/version_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "infertune_version.h"
#include "kernels/cpu_features.h"
#include "kernels/cuda/cuda_devices.h"

namespace infertune {
namespace {

std::string backends_line() {
  std::string line = "cpu";
  if (!cuda_compiled()) return line + " (cuda: not compiled)";
  const auto devices = cuda_devices();
  if (devices.empty()) return line + ", cuda (compiled; no GPU visible)";
  line += ", cuda (";
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    line += fmt::format("{}{}: {} sm_{}{}, {:.1f} GiB", i ? "; " : "", d.index, d.name, d.compute_major,
                        d.compute_minor, d.memory_bytes / double(1ull << 30));
  }
  return line + ")";
}

}  // namespace

std::string version_report() {
  const CpuFeatures& cpu = cpu_features();
  std::string out;
  out += fmt::format("infertune {} (commit {}, {} build, {})\n", INFERTUNE_VERSION, INFERTUNE_GIT_COMMIT,
                     INFERTUNE_BUILD_TYPE, INFERTUNE_COMPILER);
  out += fmt::format("backends: {}\n", backends_line());
  out += fmt::format("cpu: {} ({})\n", cpu.model_name.empty() ? "unknown" : cpu.model_name, cpu.vendor);
  out += fmt::format("cpu features: {}\n", fmt::join(cpu.names(), " "));
  return out;
}

}  // namespace infertune
