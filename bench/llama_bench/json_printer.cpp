// json: an array of objects, one per test; jsonl: the same objects, one per line. Each object has every
// field of result_fields.h (null where the row has no value) and the raw repetitions: samples_ns (the
// timed part of each, in ns) and samples_ts (tokens per second of each).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/llama_bench/printer.h"
#include "bench/llama_bench/result_fields.h"

namespace infertune {
namespace {

nlohmann::ordered_json row_object(const BenchResult& result, const RunInfo& run) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const Field& f : result_fields(result, run)) object[std::string(f.name)] = field_json(f.value);
  object["samples_ns"] = result.samples_ns;
  object["samples_ts"] = samples_ts(result);
  return object;
}

std::string dump(const nlohmann::ordered_json& json, int indent) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

class JsonPrinter : public ResultPrinter {
 public:
  JsonPrinter(std::FILE* out, const RunInfo& run, bool one_per_line)
      : ResultPrinter(out), run_(run), one_per_line_(one_per_line) {}

  void header() override {
    if (!one_per_line_) fmt::print(out_, "[");
  }

  void row(const BenchResult& result) override {
    const nlohmann::ordered_json object = row_object(result, run_);
    if (one_per_line_) {
      fmt::print(out_, "{}\n", dump(object, -1));
    } else {
      // The array's elements indented by two spaces, as llama-bench prints them.
      std::string text = dump(object, 2);
      std::string indented = "  ";
      for (char c : text) {
        indented += c;
        if (c == '\n') indented += "  ";
      }
      fmt::print(out_, "{}\n{}", rows_ == 0 ? "" : ",", indented);
    }
    ++rows_;
    std::fflush(out_);
  }

  void footer() override {
    if (!one_per_line_) fmt::print(out_, "{}]\n", rows_ == 0 ? "" : "\n");
  }

 private:
  const RunInfo& run_;
  bool one_per_line_;
  size_t rows_ = 0;
};

}  // namespace

std::unique_ptr<ResultPrinter> make_json_printer(std::FILE* out, const RunInfo& run, bool one_per_line) {
  return std::make_unique<JsonPrinter>(out, run, one_per_line);
}

}  // namespace infertune
