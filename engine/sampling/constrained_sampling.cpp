#include "engine/sampling/constrained_sampling.h"

#include <algorithm>
#include <limits>

namespace infertune {

Result<int32_t> ConstrainedSampling::pick(SamplerChain& chain, std::span<const float> row,
                                          const SamplingConstraints& constraints) {
  TokenGrammar* grammar = constraints.grammar;
  if (constraints.ban_end_tokens && (!grammar || grammar->can_continue())) {
    masked_row_.assign(row.begin(), row.end());
    for (int32_t t : end_tokens_) masked_row_[static_cast<size_t>(t)] = -std::numeric_limits<float>::infinity();
    row = masked_row_;
  }
  int32_t token = chain.sample(row);
  if (grammar && (token == kNoToken || !grammar->allows(token))) {
    if (row.data() != masked_row_.data()) masked_row_.assign(row.begin(), row.end());
    grammar->mask(masked_row_);
    token = chain.sample(masked_row_);
    if (token == kNoToken) {
      if (end_tokens_.empty()) return fail("the grammar allows no token here and the model has no end token");
      token = end_tokens_.front();
    }
  }
  if (token == kNoToken) return chain.try_sample(row);  // the error that says why
  chain.accept(token);
  if (grammar) grammar->accept(token);
  return token;
}

bool ConstrainedSampling::is_end_token(int32_t token) const {
  return std::find(end_tokens_.begin(), end_tokens_.end(), token) != end_tokens_.end();
}

}  // namespace infertune
