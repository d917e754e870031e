#include "kernels/ops/ops_kernels.h"

#include <algorithm>
#include <cstdlib>

namespace infertune {

std::vector<OpsVariant> available_ops_variants(const std::vector<OpsVariant>& variants) {
  std::vector<OpsVariant> out;
  for (const OpsVariant& v : variants) {
    if (!v.available || v.available()) out.push_back(v);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OpsVariant& a, const OpsVariant& b) { return a.priority > b.priority; });
  return out;
}

const OpsKernels& choose_ops_kernels(const std::vector<OpsVariant>& variants, std::optional<std::string_view> forced) {
  const std::vector<OpsVariant> usable = available_ops_variants(variants);
  if (forced) {
    for (const OpsVariant& v : usable) {
      if (forced->starts_with(v.name)) return v.kernels();
    }
  }
  // The scalar reference is always compiled and always available, so usable is never empty.
  return usable.front().kernels();
}

namespace {

// A pointer rather than a function-local static so that ScopedOpsVariant can swap it; the hot path is one
// relaxed load.
std::atomic<const OpsKernels*> g_ops{nullptr};

const OpsKernels& default_ops_kernels() {
  static const OpsKernels& chosen = []() -> const OpsKernels& {
    // INFERTUNE_OPS_KERNEL forces the ops alone (to tell which family a difference comes from).
    std::optional<std::string_view> forced;
    if (const char* env = std::getenv("INFERTUNE_KERNEL"); env && *env) forced = env;
    if (const char* env = std::getenv("INFERTUNE_OPS_KERNEL"); env && *env) forced = env;
    return choose_ops_kernels(compiled_ops_variants(), forced);
  }();
  return chosen;
}

}  // namespace

const OpsKernels& ops_kernels() {
  const OpsKernels* table = g_ops.load(std::memory_order_relaxed);
  if (table) return *table;
  const OpsKernels& chosen = default_ops_kernels();
  g_ops.store(&chosen, std::memory_order_relaxed);
  return chosen;
}

ScopedOpsVariant::ScopedOpsVariant(std::optional<std::string> forced) : saved_(&ops_kernels()) {
  std::optional<std::string_view> name;
  if (forced) name = *forced;
  g_ops.store(&choose_ops_kernels(compiled_ops_variants(), name), std::memory_order_relaxed);
}

ScopedOpsVariant::~ScopedOpsVariant() { g_ops.store(saved_, std::memory_order_relaxed); }

}  // namespace infertune
