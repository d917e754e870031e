#include "bench/batched_bench/batched_printer.h"

#include <fmt/format.h>

#include <algorithm>

namespace infertune {
namespace {

FieldValue timed(const BatchedRow& row, double value) {
  if (!row.ok()) return std::monostate{};
  return value;
}

std::string dump(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// llama-batched-bench's table, with the settings line it prints above it.
class MarkdownPrinter : public BatchedPrinter {
 public:
  MarkdownPrinter(std::FILE* out, const BatchedRunInfo& run) : BatchedPrinter(out), run_(run) {}

  void header() override {
    fmt::print(out_,
               "batched-bench: n_kv_max = {}, n_batch = {}, n_ubatch = {}, flash_attn = {}, is_pp_shared = {}, "
               "n_threads = {}, n_threads_batch = {}, type_k = {}, type_v = {}\n\n",
               run_.n_kv_max, run_.n_batch, run_.n_ubatch, int(run_.flash_attn), int(run_.shared_prompt),
               run_.n_threads, run_.n_threads_batch, run_.type_k, run_.type_v);
    fmt::print(out_, "|{:>6} | {:>6} | {:>4} | {:>6} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} | {:>8} | {:<{}} | {} |\n",
               "PP", "TG", "B", "N_KV", "T_PP s", "S_PP t/s", "T_TG s", "S_TG t/s", "T s", "S t/s", "kernel",
               kernel_width(), "threads");
    fmt::print(out_, "|{:->7}|{:->8}|{:->6}|{:->8}|{:->10}|{:->10}|{:->10}|{:->10}|{:->10}|{:->10}|{:->{}}|{:->9}|\n",
               "", "", "", "", "", "", "", "", "", "", "", kernel_width() + 2, "");
    std::fflush(out_);
  }

  void row(const BatchedRow& r) override {
    const BatchedCase& c = r.test;
    if (!r.ok()) {
      fmt::print(out_, "|{:>6} | {:>6} | {:>4} | {:>6} | error: {} | {:<{}} | {} |\n", c.n_pp, c.n_tg, c.n_pl, r.n_kv,
                 r.error, run_.kernel, kernel_width(), run_.n_threads_used);
    } else {
      fmt::print(
          out_,
          "|{:>6} | {:>6} | {:>4} | {:>6} | {:8.3f} | {:8.2f} | {:8.3f} | {:8.2f} | {:8.3f} | {:8.2f} | {:<{}} | "
          "{:>7} |\n",
          c.n_pp, c.n_tg, c.n_pl, r.n_kv, r.t_pp_s(), r.s_pp(), r.t_tg_s(), r.s_tg(), r.t_s(), r.s(), run_.kernel,
          kernel_width(), run_.n_threads_used);
    }
    std::fflush(out_);
  }

 private:
  size_t kernel_width() const { return std::max<size_t>(run_.kernel.size(), 6); }  // at least "kernel"

  const BatchedRunInfo& run_;
};

class JsonPrinter : public BatchedPrinter {
 public:
  JsonPrinter(std::FILE* out, const BatchedRunInfo& run, bool one_per_line)
      : BatchedPrinter(out), run_(run), one_per_line_(one_per_line) {}

  void header() override {
    if (!one_per_line_) fmt::print(out_, "[\n");
  }
  void row(const BatchedRow& r) override {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const Field& f : batched_fields(r, run_)) object[std::string(f.name)] = field_json(f.value);
    if (one_per_line_) {
      fmt::print(out_, "{}\n", dump(object));
    } else {
      fmt::print(out_, "{}  {}", rows_ ? ",\n" : "", dump(object));
    }
    ++rows_;
    std::fflush(out_);
  }
  void footer() override {
    if (!one_per_line_) fmt::print(out_, "{}]\n", rows_ ? "\n" : "");
    std::fflush(out_);
  }

 private:
  const BatchedRunInfo& run_;
  bool one_per_line_;
  size_t rows_ = 0;
};

class CsvPrinter : public BatchedPrinter {
 public:
  CsvPrinter(std::FILE* out, const BatchedRunInfo& run) : BatchedPrinter(out), run_(run) {}

  void header() override {
    std::string line;
    for (const Field& f : batched_fields(BatchedRow{}, run_)) {
      if (!line.empty()) line += ',';
      line += f.name;
    }
    fmt::print(out_, "{}\n", line);
    std::fflush(out_);
  }
  void row(const BatchedRow& r) override {
    std::string line;
    for (const Field& f : batched_fields(r, run_)) {
      if (!line.empty()) line += ',';
      line += csv_quoted(field_text(f.value));
    }
    fmt::print(out_, "{}\n", line);
    std::fflush(out_);
  }

 private:
  const BatchedRunInfo& run_;
};

}  // namespace

std::vector<Field> batched_fields(const BatchedRow& r, const BatchedRunInfo& run) {
  const BatchedCase& c = r.test;
  return {
      {"n_kv_max", FieldKind::integer, run.n_kv_max},
      {"n_batch", FieldKind::integer, run.n_batch},
      {"n_ubatch", FieldKind::integer, run.n_ubatch},
      {"flash_attn", FieldKind::integer, int64_t(run.flash_attn)},
      {"is_pp_shared", FieldKind::integer, int64_t(c.shared_prompt)},
      {"n_gpu_layers", FieldKind::integer, int64_t(0)},
      {"n_threads", FieldKind::integer, run.n_threads},
      {"n_threads_batch", FieldKind::integer, run.n_threads_batch},
      {"pp", FieldKind::integer, int64_t(c.n_pp)},
      {"tg", FieldKind::integer, int64_t(c.n_tg)},
      {"pl", FieldKind::integer, int64_t(c.n_pl)},
      {"n_kv", FieldKind::integer, r.n_kv},
      {"t_pp", FieldKind::real, timed(r, r.t_pp_s())},
      {"speed_pp", FieldKind::real, timed(r, r.s_pp())},
      {"t_tg", FieldKind::real, timed(r, r.t_tg_s())},
      {"speed_tg", FieldKind::real, timed(r, r.s_tg())},
      {"t", FieldKind::real, timed(r, r.t_s())},
      {"speed", FieldKind::real, timed(r, r.s())},
      {"kernel", FieldKind::text, run.kernel},
      {"n_threads_used", FieldKind::integer, run.n_threads_used},
      {"type_k", FieldKind::text, run.type_k},
      {"type_v", FieldKind::text, run.type_v},
      {"error", FieldKind::text, r.ok() ? FieldValue(std::monostate{}) : FieldValue(r.error)},
  };
}

std::unique_ptr<BatchedPrinter> make_batched_printer(std::FILE* out, BatchedOutput format, const BatchedRunInfo& run) {
  switch (format) {
    case BatchedOutput::markdown:
      return std::make_unique<MarkdownPrinter>(out, run);
    case BatchedOutput::json:
      return std::make_unique<JsonPrinter>(out, run, false);
    case BatchedOutput::jsonl:
      return std::make_unique<JsonPrinter>(out, run, true);
    case BatchedOutput::csv:
      break;
  }
  return std::make_unique<CsvPrinter>(out, run);
}

}  // namespace infertune
