#include "bench/llama_bench/token_feed.h"

#include <algorithm>

namespace infertune {

Status eval_prompt(Context& ctx, int n, int n_batch, RandomTokens& tokens) {
  std::vector<int32_t> piece;
  for (int done = 0; done < n;) {
    const int size = std::min(n - done, n_batch);
    tokens.fill(piece, static_cast<size_t>(size));
    if (auto logits = ctx.decode(piece, Logits::Last); !logits) return logits.error();
    done += size;
  }
  return {};
}

Status eval_gen_step(Context& ctx, RandomTokens& tokens, std::vector<int32_t>& scratch) {
  tokens.fill(scratch, 1);
  if (auto logits = ctx.decode(scratch, Logits::Last); !logits) return logits.error();
  return {};
}

Status eval_gen(Context& ctx, int n, RandomTokens& tokens) {
  std::vector<int32_t> token;
  for (int i = 0; i < n; ++i) {
    if (Status s = eval_gen_step(ctx, tokens, token); !s) return s;
  }
  return {};
}

}  // namespace infertune
