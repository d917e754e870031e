#pragma once
// What `infertune batched-bench` was asked to run, as llama-batched-bench: the lists -npp (prompt tokens
// per sequence), -ntg (generated tokens per sequence) and -npl (parallel sequences), whose cartesian
// product is run (batched_matrix.h); --pps (one prompt shared by every sequence); -c the KV cells of the
// context; the batch, KV cache and attention settings of the Context (-b, -ub, -ctk, -ctv, -fa) and the
// placement of its threads (-t, -tb, -C, --cpu-strict, --numa, --prio, --poll).
#include <CLI/CLI.hpp>

#include <span>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/cli/flag_aliases.h"
#include "engine/threading/placement_options.h"
#include "kernels/result.h"

namespace infertune {

enum class BatchedOutput { markdown, json, jsonl, csv };

struct BatchedParams {
  std::string model;                          // -m
  std::vector<int> n_pp{128, 256, 512};       // -npp (llama-batched-bench's defaults)
  std::vector<int> n_tg{128, 256};            // -ntg
  std::vector<int> n_pl{1, 2, 4, 8, 16, 32};  // -npl
  bool shared_prompt = false;                 // --pps
  // -c: KV cells; 0: the largest N_KV of the matrix (every combination fits). The Context's n_ctx and
  // n_seq_max are set per run from this and -npl; its other fields come from -b, -ub, -ctk, -ctv, -fa.
  ContextParams context;
  PlacementOptions placement;  // -t, -tb, -C, --cpu-strict, --numa, --prio, --poll
  bool use_mmap = true;
  bool warmup = true;  // --no-warmup clears it
  BatchedOutput output = BatchedOutput::markdown;
};

// Every occurrence of the list flags and -o, as given; the rest is parsed into `params` directly.
struct BatchedFlagText {
  std::vector<std::string> n_pp, n_tg, n_pl;
  std::string output = "md";
  int n_ctx = 0;
  bool no_mmap = false;
  bool no_warmup = false;
};

// `text` and `params` must outlive the parse of `command`.
void add_batched_flags(CLI::App& command, BatchedFlagText& text, BatchedParams& params);

// Fills the lists, -c and -o of `params` from `text`; errors name the flag.
Status resolve_batched_params(const BatchedFlagText& text, BatchedParams& params);

const char* batched_output_name(BatchedOutput output);

// {"-npp", "--n-pp"}, {"-ntg", "--n-tg"}, {"-npl", "--n-pl"} (-ub, -ctk, -ctv, -fa, -tb come from the
// engine's context and placement aliases).
std::span<const FlagAlias> batched_flag_aliases();

}  // namespace infertune
