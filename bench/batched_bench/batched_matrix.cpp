#include "bench/batched_bench/batched_matrix.h"

#include <algorithm>

namespace infertune {

std::vector<BatchedCase> expand_cases(const BatchedParams& params) {
  std::vector<BatchedCase> cases;
  for (int pp : params.n_pp) {
    for (int tg : params.n_tg) {
      for (int pl : params.n_pl) cases.push_back({pp, tg, pl, params.shared_prompt});
    }
  }
  return cases;
}

int64_t max_n_kv(const std::vector<BatchedCase>& cases) {
  int64_t most = 0;
  for (const BatchedCase& c : cases) most = std::max(most, c.n_kv());
  return most;
}

int max_n_pl(const std::vector<BatchedCase>& cases) {
  int most = 1;
  for (const BatchedCase& c : cases) most = std::max(most, c.n_pl);
  return most;
}

}  // namespace infertune
