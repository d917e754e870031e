#pragma once
// The output formats of `infertune bench -o`: md (a table, t/s as mean ± stddev), csv, json (an array),
// jsonl (an object per line), sql (CREATE TABLE + one INSERT per row, for the sqlite3 shell). Rows are
// printed as tests finish, so a long run shows its results as it goes. Error rows carry their message
// (md: in the t/s column; csv, json, jsonl, sql: the "error" field).
#include <cstdio>
#include <memory>

#include "bench/llama_bench/bench_params.h"
#include "bench/llama_bench/bench_result.h"

namespace infertune {

class ResultPrinter {
 public:
  explicit ResultPrinter(std::FILE* out) : out_(out) {}
  virtual ~ResultPrinter() = default;
  virtual void header() {}
  virtual void row(const BenchResult& result) = 0;
  virtual void footer() {}

 protected:
  std::FILE* out_;
};

// `params` and `run` must outlive the printer.
std::unique_ptr<ResultPrinter> make_markdown_printer(std::FILE* out, const BenchParams& params, const RunInfo& run);
std::unique_ptr<ResultPrinter> make_csv_printer(std::FILE* out, const RunInfo& run);
std::unique_ptr<ResultPrinter> make_json_printer(std::FILE* out, const RunInfo& run, bool one_per_line);
std::unique_ptr<ResultPrinter> make_sql_printer(std::FILE* out, const RunInfo& run);

// A printer of `format` (bench prints -o's on stdout and -oe's, if given, on stderr).
std::unique_ptr<ResultPrinter> make_printer(std::FILE* out, OutputFormat format, const BenchParams& params,
                                            const RunInfo& run);

}  // namespace infertune
