#pragma once
// `infertune compare --bin OLD --bin NEW`: runs both binaries' bench (`BIN bench ARGS -o jsonl`, or
// `BIN ARGS -o jsonl` for a llama-bench binary) alternately in ABBA blocks, A B B A A B B A ..., each block
// one bench run of -r repetitions of every test, and returns each side's raw repetitions grouped by block:
// the i-th baseline block and the i-th candidate block ran next to each other (comparison.h pairs them).
// ABBA rather than ABAB: in every four blocks each side runs once first and once second and both sides'
// blocks are centred on the same moment, so a steady drift of the machine and an order effect cancel.
//
// A binary that cannot start, exits with an error, times out or prints something that is not bench's jsonl
// is an error naming the side, the binary and the block.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "kernels/result.h"
#include "reports/compare/measured_side.h"

namespace infertune {

struct BenchBinary {
  std::string name;                      // "baseline" / "candidate"
  std::string path;                      // resolved executable
  std::vector<std::string> environment;  // NAME=VALUE added to this side's environment only
  bool llama_bench = false;              // a llama-bench binary: no "bench" subcommand before the flags
};

struct AbbaPlan {
  int blocks = 16;                           // both sides together; even
  std::vector<std::string> bench_arguments;  // passed through (-m, -p, -n, -t, ...)
  double block_timeout_s = 600;
  bool progress = true;  // a line per block on stderr
};

struct AbbaResult {
  MeasuredSide baseline;
  MeasuredSide candidate;
};

Result<AbbaResult> run_abba(const BenchBinary& baseline, const BenchBinary& candidate, const AbbaPlan& plan);

// Which side runs block k (0-based): A B B A repeating; true for the baseline (A).
bool abba_baseline_runs(int block);

// The executable for --bin: a path (made absolute), or a name looked up in PATH. Errors name it.
Result<std::string> resolve_executable(const std::string& text);

// One line of bench's jsonl as a configuration of the side (exposed for tests): the key is the test's
// parameters, the label "MODEL TEST" and the metric pp_tps, tg_tps or pg_tps by the test's kind.
struct BenchRow {
  std::string key;
  std::string label;
  std::string metric;
  std::vector<double> samples_ts;
  std::string error;  // non-empty: the test failed
  nlohmann::json parameters;  // the fields the key is made of, for labels
};
Result<BenchRow> parse_bench_row(const std::string& line);

}  // namespace infertune
