#pragma once
// What `bench -v` adds on stderr, where llama-bench -v prints llama.cpp's load log: a line when a model is
// loaded (what it is and how it was loaded), and per test the engine flags it ran with and where each thread ran.
#include <string>
#include <vector>

#include "bench/llama_bench/model_facts.h"
#include "bench/llama_bench/test_matrix.h"
#include "engine/threading/placement.h"

namespace infertune {

// "loaded m.gguf in 12 ms (mapped, rows repacked): llama 1B Q4_K - Medium, 16 layers, 762.81 MiB, 1.24 B
// parameters; kernels avx512vnni".
std::string load_note(const BenchTest& test, uint32_t n_layers, const ModelFacts& facts, double load_ms);

// "pp512: infertune run flags: -t 2 -b 2048 ..." and one "pp512: thread 0: CPU 0, memory node 0" per thread.
std::vector<std::string> test_notes(const std::string& test_name, const BenchTest& test, const PlacementPlan& plan);

}  // namespace infertune
