#pragma once
// Token passes of the matrix-vector kernels: a small batch (continuous batching of a few sequences) is served in
// passes of up to matvec_tokens<Isa>() tokens, and each pass unpacks a group of weight rows once for all of its
// tokens. Like x86_dot_kernels.h, included ONLY after an ISA unit's `#pragma GCC target`; the anonymous namespace
// gives each unit its own copies.
#include <cstddef>

namespace infertune::x86 {
namespace {

// Tokens per matrix-vector pass: the weights' codes are unpacked once per pass and multiplied with each of
// its tokens. Each token still gets its own accumulator and the FMAs of the one-token kernel in the same
// order, so the pass size never changes a result.
inline constexpr int kDefaultMatvecTokens = 4;
template <class Isa>
constexpr int matvec_tokens() {
  if constexpr (requires { Isa::kMatvecTokens; }) {
    return Isa::kMatvecTokens;
  } else {
    return kDefaultMatvecTokens;
  }
}

// run.template operator()<T>(t0) for passes covering tokens [0, n), at most kMax per pass, as even as
// possible (5 tokens at 4 per pass: 3 + 2). T is a compile-time count, so each pass keeps its tokens'
// accumulators in registers.
template <int T, class Run>
inline void run_token_pass(size_t take, size_t t0, Run& run) {
  if constexpr (T == 1) {
    run.template operator()<1>(t0);
  } else if (take == T) {
    run.template operator()<T>(t0);
  } else {
    run_token_pass<T - 1>(take, t0, run);
  }
}
template <int kMax, class Run>
inline void for_token_passes(size_t n, Run&& run) {
  const size_t passes = (n + kMax - 1) / kMax;
  for (size_t i = 0, t0 = 0; i < passes; ++i) {
    const size_t take = (n - t0 + (passes - i) - 1) / (passes - i);
    run_token_pass<kMax>(take, t0, run);
    t0 += take;
  }
}

}  // namespace
}  // namespace infertune::x86
