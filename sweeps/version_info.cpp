#include "sweeps/version_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "infertune_version.h"
#include "kernels/cpu_features.h"
#include "kernels/cuda/cuda_devices.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/onednn/onednn_matmul.h"
#include "kernels/ops/ops_kernels.h"

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

// The kernel variant each family runs (INFERTUNE_KERNEL forces one), with the others this CPU could run.
std::string kernels_line() {
  const MatmulRegistry& matmul = matmul_registry();
  const std::vector<std::string> matmul_variants = matmul.variant_names();
  const std::string matmul_chosen = matmul.forced().value_or(matmul_variants.empty() ? "none" : matmul_variants[0]);
  std::vector<std::string> ops_variants;
  for (const OpsVariant& v : available_ops_variants(compiled_ops_variants())) ops_variants.emplace_back(v.name);
  return fmt::format("matmul {} (available: {}), ops {} (available: {})", matmul_chosen, fmt::join(matmul_variants, " "),
                     ops_kernels().variant, fmt::join(ops_variants, " "));
}

}  // namespace

std::string version_report() {
  const CpuFeatures& cpu = cpu_features();
  std::string out;
  out += fmt::format("infertune {} (commit {}, {} build, {})\n", INFERTUNE_VERSION, INFERTUNE_GIT_COMMIT,
                     INFERTUNE_BUILD_TYPE, INFERTUNE_COMPILER);
  out += fmt::format("backends: {}\n", backends_line());
  out += fmt::format("onednn: {}\n", onednn_summary());
  out += fmt::format("cpu: {} ({})\n", cpu.model_name.empty() ? "unknown" : cpu.model_name, cpu.vendor);
  out += fmt::format("cpu features: {}\n", fmt::join(cpu.names(), " "));
  out += fmt::format("kernels: {}\n", kernels_line());
  return out;
}

}  // namespace infertune
