#pragma once
// What `infertune bench` was asked to run: every test parameter as a list (the cartesian product of the
// lists is run, see test_matrix.h) and the settings that apply to every test. Defaults are llama-bench's
// where the engine has the feature; see bench_flags.h for the flags that fill it.
#include <string>
#include <utility>
#include <vector>

#include "engine/threading/placement_options.h"

namespace infertune {

enum class OutputFormat { markdown, csv, json, jsonl, sql };

// -fa: llama.cpp's numbering (LLAMA_FLASH_ATTN_TYPE_*), which its JSON and SQL output print.
enum class FlashAttn { autodetect = -1, off = 0, on = 1 };

struct BenchParams {
  // Test parameters (lists; never empty after parsing).
  std::vector<std::string> models;                           // -m
  std::vector<int> n_prompt{512};                            // -p
  std::vector<int> n_gen{128};                               // -n
  std::vector<std::pair<int, int>> n_pg;                     // -pg pp,tg
  std::vector<int> n_depth{0};                               // -d
  std::vector<int> n_batch{2048};                            // -b
  std::vector<int> n_ubatch{512};                            // -ub
  std::vector<std::string> type_k;                           // -ctk; empty: the engine's default KV type
  std::vector<std::string> type_v;                           // -ctv; empty: ditto
  std::vector<int> n_threads{kAutoThreads};                  // -t; <= 0: the physical cores
  std::vector<std::string> cpu_mask{""};                     // -C; "" (llama-bench's "0x0"): no mask
  std::vector<bool> cpu_strict{false};                       // --cpu-strict
  std::vector<int> poll{kDefaultPoll};                       // --poll
  std::vector<int> n_gpu_layers{0};                          // -ngl
  std::vector<FlashAttn> flash_attn{FlashAttn::autodetect};  // -fa
  std::vector<bool> use_mmap{true};                          // -mmp

  // Settings of the whole run.
  NumaMode numa = NumaMode::none;  // --numa
  int priority = 0;                // --prio 0..3
  int repetitions = 5;             // -r
  int delay_seconds = 0;           // --delay: sleep before each test
  bool warmup = true;              // --no-warmup clears it
  bool probe = true;               // --no-probe clears it: no roofline %
  bool progress = false;           // --progress: a line per step on stderr
  OutputFormat output = OutputFormat::markdown;
};

const char* output_format_name(OutputFormat format);
const char* flash_attn_name(FlashAttn mode);  // "auto", "off", "on"

}  // namespace infertune
