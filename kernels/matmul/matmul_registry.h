#pragma once
// Which matmul kernel runs for each weight type. Every compiled variant (the scalar reference, later SIMD
// ones in their own translation units) contributes its kernels with a priority; the registry picks, per
// type, the highest-priority kernel of a variant the CPU supports. INFERTUNE_KERNEL=<variant> forces one
// variant for every type (e.g. INFERTUNE_KERNEL=scalar to compare against the reference).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/matmul/matmul.h"
#include "kernels/result.h"

namespace infertune {

// One variant: a name, a rank among variants (higher wins), whether this CPU can run it, and its kernels.
struct MatmulVariant {
  std::string_view name;
  int priority = 0;
  bool (*available)() = nullptr;
  std::vector<MatmulKernel> (*kernels)() = nullptr;
};

class MatmulRegistry {
 public:
  // Keeps the available variants. `forced`: the one variant to use for every type (nullopt: the best).
  MatmulRegistry(const std::vector<MatmulVariant>& variants, std::optional<std::string> forced);

  // The kernel for weights of `type`. Errors when no available variant has one, or when the forced
  // variant is unknown or lacks the type.
  Result<MatmulKernel> find(GgmlType type) const;

  // Names of the available variants, highest priority first.
  std::vector<std::string> variant_names() const;
  const std::optional<std::string>& forced() const { return forced_; }

 private:
  struct Entry {
    MatmulKernel kernel;
    int priority;
  };
  std::vector<Entry> entries_;  // available variants only
  std::vector<std::pair<int, std::string>> variants_;
  std::optional<std::string> forced_;
};

// Every variant compiled into this binary (kernels/matmul/variants.cpp lists them).
std::vector<MatmulVariant> compiled_matmul_variants();

// The process-wide registry: the compiled variants, forced by INFERTUNE_KERNEL when set. Built once.
const MatmulRegistry& matmul_registry();

// Replaces the process-wide registry with one forcing `forced` (nullopt: the best variant) for the object's
// lifetime, then restores it. For tests and benchmarks that compare variants in one process; not to be used
// while another thread runs matmuls.
class ScopedMatmulVariant {
 public:
  explicit ScopedMatmulVariant(std::optional<std::string> forced);
  ~ScopedMatmulVariant();
  ScopedMatmulVariant(const ScopedMatmulVariant&) = delete;
  ScopedMatmulVariant& operator=(const ScopedMatmulVariant&) = delete;

 private:
  MatmulRegistry saved_;
};

// Runs rows [0, n_rows) of the problem on the calling thread with the registry's kernel for its type.
Status matmul(const MatmulProblem& problem);

}  // namespace infertune
