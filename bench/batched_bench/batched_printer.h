#pragma once
// The output of `infertune batched-bench -o`: md (llama-batched-bench's table: PP, TG, B, N_KV, T_PP s,
// S_PP t/s, T_TG s, S_TG t/s, T s, S t/s, then the kernel variant and threads; the run's settings on a
// line above it), json (an array), jsonl (an object per line), csv (a header, then every value quoted).
// The json/jsonl/csv fields are llama-batched-bench's jsonl names (n_kv_max, ..., pp, tg, pl, n_kv, t_pp,
// speed_pp, t_tg, speed_tg, t, speed), then kernel, n_threads_used, type_k, type_v and error. Rows are
// printed as they finish; an error row carries its message (md: after the N_KV column).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/batched_bench/batched_params.h"
#include "bench/batched_bench/batched_runner.h"
#include "bench/llama_bench/result_fields.h"

namespace infertune {

// What is the same for every row of a run.
struct BatchedRunInfo {
  std::string model;   // path
  std::string kernel;  // the matmul variant(s), as bench's kernel column
  int64_t n_kv_max = 0;
  int64_t n_batch = 0;
  int64_t n_ubatch = 0;
  bool flash_attn = false;  // resolved
  bool shared_prompt = false;
  int64_t n_threads = 0;        // -t, resolved
  int64_t n_threads_batch = 0;  // -tb, resolved
  int64_t n_threads_used = 0;   // threads of the pool
  std::string type_k, type_v;
};

// Every field of a row in output order (an error row's timings are null).
std::vector<Field> batched_fields(const BatchedRow& row, const BatchedRunInfo& run);

class BatchedPrinter {
 public:
  explicit BatchedPrinter(std::FILE* out) : out_(out) {}
  virtual ~BatchedPrinter() = default;
  virtual void header() {}
  virtual void row(const BatchedRow& row) = 0;
  virtual void footer() {}

 protected:
  std::FILE* out_;
};

// `run` must outlive the printer.
std::unique_ptr<BatchedPrinter> make_batched_printer(std::FILE* out, BatchedOutput format, const BatchedRunInfo& run);

}  // namespace infertune
