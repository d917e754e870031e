#include "kernels/matmul/matmul_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

namespace infertune {

MatmulRegistry::MatmulRegistry(const std::vector<MatmulVariant>& variants, std::optional<std::string> forced)
    : forced_(std::move(forced)) {
  for (const MatmulVariant& variant : variants) {
    if (variant.available && !variant.available()) continue;
    variants_.emplace_back(variant.priority, std::string(variant.name));
    for (const MatmulKernel& kernel : variant.kernels()) entries_.push_back({kernel, variant.priority});
  }
  std::stable_sort(variants_.begin(), variants_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
}

std::vector<std::string> MatmulRegistry::variant_names() const {
  std::vector<std::string> names;
  for (const auto& [priority, name] : variants_) names.push_back(name);
  return names;
}

Result<MatmulKernel> MatmulRegistry::find(GgmlType type) const {
  if (forced_) {
    const bool known =
        std::any_of(variants_.begin(), variants_.end(), [&](const auto& v) { return v.second == *forced_; });
    if (!known) {
      return fail("INFERTUNE_KERNEL={}: no such kernel variant on this CPU (available: {})", *forced_,
                  fmt::join(variant_names(), ", "));
    }
  }
  const Entry* best = nullptr;
  for (const Entry& entry : entries_) {
    if (entry.kernel.type != type) continue;
    if (forced_ && entry.kernel.variant != *forced_) continue;
    if (!best || entry.priority > best->priority) best = &entry;
  }
  if (!best) {
    if (forced_) return fail("no {} matmul kernel for type {}", *forced_, ggml_type_name(type));
    return fail("no matmul kernel for type {}", ggml_type_name(type));
  }
  return best->kernel;
}

namespace {

MatmulRegistry& process_registry() {
  static MatmulRegistry registry = [] {
    std::optional<std::string> forced;
    if (const char* env = std::getenv("INFERTUNE_KERNEL"); env && *env) forced = env;
    return MatmulRegistry(compiled_matmul_variants(), forced);
  }();
  return registry;
}

}  // namespace

const MatmulRegistry& matmul_registry() { return process_registry(); }

ScopedMatmulVariant::ScopedMatmulVariant(std::optional<std::string> forced) : saved_(process_registry()) {
  process_registry() = MatmulRegistry(compiled_matmul_variants(), std::move(forced));
}

ScopedMatmulVariant::~ScopedMatmulVariant() { process_registry() = std::move(saved_); }

Status matmul(const MatmulProblem& problem) {
  if (Status s = check_matmul_problem(problem); !s) return s;
  auto kernel = matmul_registry().find(problem.type);
  if (!kernel) return kernel.error();
  kernel->fn(problem, 0, problem.n_rows);
  return {};
}

}  // namespace infertune
