#include "bench/llama_bench/result_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/llama_bench/roofline.h"

namespace infertune {
namespace {

// -ts as llama-bench writes it: each share to two decimals, joined by "/", up to the last non-zero one
// ("0.00" when none is: the free-memory default).
std::string llama_tensor_split_text(const std::vector<double>& shares) {
  const auto last = std::find_if(shares.rbegin(), shares.rend(), [](double p) { return p > 0; });
  if (last == shares.rend()) return "0.00";
  std::string text;
  for (auto it = shares.begin(); it != last.base(); ++it) {
    text += fmt::format("{}{:.2f}", text.empty() ? "" : "/", *it);
  }
  return text;
}

template <class T>
FieldValue optional_value(const std::optional<T>& value) {
  if (!value) return std::monostate{};
  return *value;
}

struct Row {
  const BenchResult& r;
  const RunInfo& run;

  FieldValue model_value(int64_t (*get)(const ModelFacts&)) const {
    if (!r.model) return std::monostate{};
    return get(*r.model);
  }
  FieldValue timing(FieldValue value) const { return r.ok() ? value : FieldValue{}; }

  std::vector<Field> fields() const {
    std::vector<Field> f = llama_bench_fields();
    std::vector<Field> own = infertune_fields();
    f.insert(f.end(), own.begin(), own.end());
    return f;
  }

  // llama-bench's fields, in its order and with its kinds, so that its readers (llama.cpp's
  // scripts/compare-llama-bench.py among them) take our csv, json, jsonl and sql. Those of features infertune
  // does not have hold llama-bench's defaults: n_cpu_moe 0, devices "auto", tensor_buft_overrides "none",
  // lazy_mode "auto", embeddings / no_op_offload / no_host off, fit_target and fit_min_ctx 0.
  std::vector<Field> llama_bench_fields() const {
    const BenchTest& t = r.test;
    const EngineSettings& e = t.settings;
    using K = FieldKind;
    std::vector<Field> f;
    f.push_back({"build_commit", K::text, run.build_commit});
    f.push_back({"build_number", K::integer, run.build_number});
    f.push_back({"cpu_info", K::text, run.cpu_info});
    f.push_back({"gpu_info", K::text, run.gpu_info});
    f.push_back({"backends", K::text, run.backends});
    f.push_back({"model_filename", K::text, t.model});
    f.push_back({"model_type", K::text, r.model ? FieldValue(r.model->type) : FieldValue()});
    f.push_back({"model_size", K::integer, model_value([](const ModelFacts& m) { return int64_t(m.size_bytes); })});
    f.push_back({"model_n_params", K::integer, model_value([](const ModelFacts& m) { return int64_t(m.n_params); })});
    f.push_back({"n_batch", K::integer, int64_t(e.context.n_batch)});
    f.push_back({"n_ubatch", K::integer, int64_t(e.context.n_ubatch)});
    f.push_back({"n_threads", K::integer,
                 int64_t(e.placement.threads > 0 ? unsigned(e.placement.threads) : run.default_threads)});
    f.push_back({"cpu_mask", K::text, t.value("cpu_mask")});
    f.push_back({"cpu_strict", K::boolean, e.placement.cpu_strict});
    f.push_back({"poll", K::integer, int64_t(e.placement.poll)});
    f.push_back({"type_k", K::text, t.value("cache_type_k")});
    f.push_back({"type_v", K::text, t.value("cache_type_v")});
    f.push_back({"n_gpu_layers", K::integer, int64_t(e.n_gpu_layers)});
    f.push_back({"n_cpu_moe", K::integer, int64_t(0)});
    f.push_back({"split_mode", K::text, t.value("split_mode")});
    f.push_back({"main_gpu", K::integer, int64_t(e.main_gpu)});
    f.push_back({"no_kv_offload", K::boolean, !e.kv_offload});
    f.push_back({"flash_attn", K::integer, int64_t(llama_flash_attn_number(e.context.flash_attn))});
    f.push_back({"devices", K::text, std::string("auto")});
    f.push_back({"tensor_split", K::text, llama_tensor_split_text(e.tensor_split)});
    f.push_back({"tensor_buft_overrides", K::text, std::string("none")});
    // llama.cpp's "auto" maps the file when it can, as our default and -mmp 1 do; "none" reads it (-mmp 0).
    f.push_back({"load_mode", K::text, std::string(e.use_mmap ? "auto" : "none")});
    f.push_back({"lazy_mode", K::text, std::string("auto")});
    f.push_back({"embeddings", K::boolean, false});
    f.push_back({"no_op_offload", K::integer, int64_t(0)});
    f.push_back({"no_host", K::boolean, false});
    f.push_back({"repack", K::boolean, e.repack});
    f.push_back({"fit_target", K::integer, int64_t(0)});
    f.push_back({"fit_min_ctx", K::integer, int64_t(0)});
    f.push_back({"n_prompt", K::integer, int64_t(t.n_prompt)});
    f.push_back({"n_gen", K::integer, int64_t(t.n_gen)});
    f.push_back({"n_depth", K::integer, int64_t(t.n_depth)});
    f.push_back({"test_time", K::text, r.test_time});
    f.push_back({"avg_ns", K::integer, timing(int64_t(avg_ns(r)))});
    f.push_back({"stddev_ns", K::integer, timing(int64_t(stddev_ns(r)))});
    f.push_back({"avg_ts", K::real, timing(avg_ts(r))});
    f.push_back({"stddev_ts", K::real, timing(stddev_ts(r))});
    return f;
  }

  // infertune's own, after llama-bench's: settings llama-bench no longer reports (use_mmap, numa, prio) and what
  // the run measured besides the rate.
  std::vector<Field> infertune_fields() const {
    const EngineSettings& e = r.test.settings;
    using K = FieldKind;
    std::vector<Field> f;
    f.push_back({"use_mmap", K::boolean, e.use_mmap});
    f.push_back({"numa", K::text, r.test.value("numa")});
    f.push_back({"prio", K::integer, int64_t(e.placement.priority)});
    f.push_back({"test", K::text, test_name(r.test)});
    f.push_back({"kernel", K::text, r.model ? FieldValue(r.model->kernel) : FieldValue()});
    f.push_back({"gemm", K::text, r.gemm.empty() ? FieldValue() : FieldValue(r.gemm)});
    f.push_back({"n_threads_used", K::integer, r.threads_used ? FieldValue(int64_t(r.threads_used)) : FieldValue()});
    f.push_back({"weight_bytes_per_token", K::integer,
                 model_value([](const ModelFacts& m) { return int64_t(m.weight_bytes_per_token); })});
    f.push_back({"roofline_pct", K::real, optional_value(roofline_percent(r, run.read_bandwidth))});
    f.push_back({"gops", K::real, optional_value(achieved_gops(r))});
    f.push_back({"error", K::text, r.ok() ? FieldValue() : FieldValue(r.error)});
    return f;
  }
};

}  // namespace

std::vector<Field> result_field_names() {
  const BenchResult empty;
  const RunInfo run;
  std::vector<Field> fields = Row{empty, run}.fields();
  for (Field& f : fields) f.value = std::monostate{};
  return fields;
}

std::vector<Field> result_fields(const BenchResult& result, const RunInfo& run) { return Row{result, run}.fields(); }

std::string field_text(const FieldValue& value) {
  struct Visitor {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(bool b) const { return b ? "1" : "0"; }
    std::string operator()(double d) const { return fmt::format("{:.6f}", d); }
  };
  return std::visit(Visitor{}, value);
}

std::string csv_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

nlohmann::ordered_json field_json(const FieldValue& value) {
  struct Visitor {
    nlohmann::ordered_json operator()(std::monostate) const { return nullptr; }
    nlohmann::ordered_json operator()(const std::string& s) const { return s; }
    nlohmann::ordered_json operator()(int64_t i) const { return i; }
    nlohmann::ordered_json operator()(bool b) const { return b; }
    nlohmann::ordered_json operator()(double d) const { return d; }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace infertune
