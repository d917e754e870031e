#pragma once
// What `infertune bench` was asked to run: the workload lists (-p, -n, -pg, -d), the values of every engine
// setting bench takes (engine/settings/settings_table.h: a list each, canonical text, the table's default when
// not given; the cartesian product is run, see test_matrix.h) and the settings of the run itself. Defaults are
// llama-bench's; see bench_flags.h for the flags that fill it.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/settings/setting_flags.h"

namespace infertune {

enum class OutputFormat { markdown, csv, json, jsonl, sql };

struct BenchParams {
  BenchParams();

  // Test parameters (lists; never empty after parsing, except -pg).
  std::vector<std::string> models;        // -m
  std::vector<int> n_prompt{512};         // -p
  std::vector<int> n_gen{128};            // -n
  std::vector<std::pair<int, int>> n_pg;  // -pg pp,tg
  std::vector<int> n_depth{0};            // -d
  // Every setting bench takes, by key: -t, -C, --cpu-strict, --poll, -ngl, -b, -ub, -ctk, -ctv, -fa, -mmp (lists)
  // and --numa, --prio (one value).
  SettingValues settings;

  // Settings of the whole run.
  int repetitions = 5;    // -r
  int delay_seconds = 0;  // --delay: sleep before each test
  bool warmup = true;     // --no-warmup clears it
  bool probe = true;      // --no-probe clears it: no roofline %
  bool progress = false;  // --progress: a line per step on stderr
  bool profile = false;   // --profile: per-op times of the timed repetitions on stderr
  bool verbose = false;   // -v: each model's load and each test's settings and threads on stderr
  OutputFormat output = OutputFormat::markdown;
  std::optional<OutputFormat> output_err;  // -oe: the results again, in this format, on stderr

  // The values of setting `key` ("batch_size").
  const std::vector<std::string>& values(const std::string& key) const { return settings.at(key); }
};

const char* output_format_name(OutputFormat format);

// llama.cpp's number for a flash-attention mode (LLAMA_FLASH_ATTN_TYPE_*: -1 auto, 0 off, 1 on), which
// llama-bench's JSON, CSV and SQL print.
int llama_flash_attn_number(FlashAttention mode);

}  // namespace infertune
