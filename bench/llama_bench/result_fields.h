#pragma once
// The columns of the csv, json, jsonl and sql outputs, in order: every field of llama-bench (build_commit,
// build_number, cpu_info, ..., avg_ts, stddev_ts: its order and kinds), then infertune's own (use_mmap, numa,
// prio, test, kernel, gemm, n_threads_used, weight_bytes_per_token, roofline_pct, gops, error). A value the row
// does not have (an error row's timings, a pp row's roofline) is null.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "bench/llama_bench/bench_result.h"

namespace infertune {

enum class FieldKind { text, integer, boolean, real };

using FieldValue = std::variant<std::monostate, std::string, int64_t, bool, double>;  // monostate: null

struct Field {
  std::string_view name;
  FieldKind kind;
  FieldValue value;
};

// The names and kinds alone (headers, CREATE TABLE).
std::vector<Field> result_field_names();

std::vector<Field> result_fields(const BenchResult& result, const RunInfo& run);

// A value as text: integers in decimal, booleans as 0/1 (as llama-bench's csv), reals with 6 decimals;
// null as "".
std::string field_text(const FieldValue& value);

// A csv cell: double-quoted, quotes doubled (as llama-bench writes csv).
std::string csv_quoted(const std::string& text);

// A value as JSON: null, string, integer, boolean or number.
nlohmann::ordered_json field_json(const FieldValue& value);

}  // namespace infertune
