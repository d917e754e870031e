// The oneDNN backend when the build did not find oneDNN (libdnnl-dev): nothing is supported, and
// --version says so. onednn_matmul is never chosen then; if called anyway it runs the registry's kernel.
#include "kernels/matmul/matmul_registry.h"
#include "kernels/onednn/onednn_matmul.h"

namespace infertune {

bool onednn_built() { return false; }

std::string onednn_summary() { return "not built"; }

bool onednn_supports(GgmlType) { return false; }

void onednn_matmul(const MatmulProblem& problem, size_t row_begin, size_t row_end) {
  if (auto own = matmul_registry().find(problem.type)) own->fn(problem, row_begin, row_end);
}

std::optional<std::string> take_onednn_failure() { return std::nullopt; }

}  // namespace infertune
