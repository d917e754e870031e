#pragma once
// How close a test came to the machine's limits.
//  - roofline %: for a tg test, bytes of weights read per generated token x t/s, over the host probe's
//    measured read bandwidth for the test's thread count (ReadBandwidth::for_threads: one core's figure for
//    one thread, all cores' from as many threads as cores). One-token steps are bound by reading the
//    weights, so this says how much of the memory system the engine's threads used. KV cache reads are not
//    counted (they grow with depth). A test with -ngl != 0 is compared against its GPU's (-mg) measured
//    copy bandwidth instead (the probe's, bytes read plus written, which a GPU's reads alone reach about as
//    well); with part of the layers offloaded that ceiling is above what the mix of CPU and GPU can reach,
//    so the percentage is low by the CPU layers' share of the time.
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

// The bandwidth roofline_percent compares `result` against (GB/s); absent without a probe or a figure.
std::optional<double> roofline_gbps(const BenchResult& result, const std::optional<ReadBandwidth>& bandwidth);

// Absent for errors, tests that are not tg, and without a bandwidth figure.
std::optional<double> roofline_percent(const BenchResult& result, const std::optional<ReadBandwidth>& bandwidth);

// Absent for errors.
std::optional<double> achieved_gops(const BenchResult& result);

}  // namespace infertune
