#pragma once
// What `infertune batched-bench` was asked to run, as llama-batched-bench: the lists -npp (prompt tokens
// per sequence), -ntg (generated tokens per sequence) and -npl (parallel sequences), whose cartesian
// product is run (batched_matrix.h); --pps (one prompt shared by every sequence); and one value of each engine
// setting batched-bench takes (engine/settings/settings_table.h: -c the KV cells of the context, -b, -ub,
// -ctk, -ctv, -fa, -t, -tb, -C, --cpu-strict, --numa, --prio, --poll, --no-mmap).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "engine/cli/flag_aliases.h"
#include "engine/settings/engine_settings.h"
#include "kernels/result.h"

namespace infertune {

enum class BatchedOutput { markdown, json, jsonl, csv };

struct BatchedParams {
  std::string model;                          // -m
  std::vector<int> n_pp{128, 256, 512};       // -npp (llama-batched-bench's defaults)
  std::vector<int> n_tg{128, 256};            // -ntg
  std::vector<int> n_pl{1, 2, 4, 8, 16, 32};  // -npl
  bool shared_prompt = false;                 // --pps
  // The settings' values. settings.context.n_ctx (-c) 0: the largest N_KV of the matrix (every combination
  // fits); n_seq_max is the largest -npl.
  EngineSettings settings;
  bool warmup = true;  // --no-warmup clears it
  BatchedOutput output = BatchedOutput::markdown;
};

// Every occurrence of the list flags and -o, as given; the rest is parsed into `params` directly.
struct BatchedFlagText {
  std::vector<std::string> n_pp, n_tg, n_pl;
  std::string output = "md";
  bool no_warmup = false;
};

// `text` and `params` must outlive the parse of `command`.
void add_batched_flags(CLI::App& command, BatchedFlagText& text, BatchedParams& params);

// Fills the lists and -o of `params` from `text`; errors name the flag.
Status resolve_batched_params(const BatchedFlagText& text, BatchedParams& params);

const char* batched_output_name(BatchedOutput output);

// {"-npp", "--n-pp"}, {"-ntg", "--n-tg"}, {"-npl", "--n-pl"} and the settings' (-tb, -ub, -ctk, ...).
std::vector<FlagAlias> batched_flag_aliases();

}  // namespace infertune
