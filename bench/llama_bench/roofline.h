#pragma once
// How close a test came to the machine's limits.
//  - roofline %: for a tg test, bytes of weights read per generated token x t/s, over the host probe's
//    measured all-core read bandwidth. One-token steps are bound by reading the weights, so this says how
//    much of the memory system the engine used. KV cache reads are not counted (they grow with depth).
//    pp and pp+tg tests have none: a prompt batch reuses each weight for many tokens and is bound by
//    arithmetic, not by reading memory.
//  - GOP/s, every test: the weight multiply-adds done per timed repetition (2 operations each: every layer
//    matrix for every token, the output projection for the last token of each -b piece of the prompt and
//    for every generated token), per second, averaged over repetitions like t/s. Attention is not counted.
#include <optional>

#include "bench/llama_bench/bench_result.h"

namespace infertune {

// Operations of one timed repetition of `test`.
double weight_ops_per_run(const ModelFacts& model, const BenchTest& test);

// Absent for errors, tests that are not tg, and without a bandwidth figure.
std::optional<double> roofline_percent(const BenchResult& result, std::optional<double> read_bandwidth_gbps);

// Absent for errors.
std::optional<double> achieved_gops(const BenchResult& result);

}  // namespace infertune
