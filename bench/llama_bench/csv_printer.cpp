// csv: a header of field names, then every value double-quoted (quotes doubled), as llama-bench writes it.
#include <fmt/format.h>

#include "bench/llama_bench/printer.h"
#include "bench/llama_bench/result_fields.h"

namespace infertune {
namespace {

class CsvPrinter : public ResultPrinter {
 public:
  CsvPrinter(std::FILE* out, const RunInfo& run) : ResultPrinter(out), run_(run) {}

  void header() override {
    std::string line;
    for (const Field& f : result_field_names()) {
      if (!line.empty()) line += ',';
      line += f.name;
    }
    fmt::print(out_, "{}\n", line);
  }

  void row(const BenchResult& result) override {
    std::string line;
    bool first = true;
    for (const Field& f : result_fields(result, run_)) {
      if (!first) line += ',';
      first = false;
      line += csv_quoted(field_text(f.value));
    }
    fmt::print(out_, "{}\n", line);
    std::fflush(out_);
  }

 private:
  const RunInfo& run_;
};

}  // namespace

std::unique_ptr<ResultPrinter> make_csv_printer(std::FILE* out, const RunInfo& run) {
  return std::make_unique<CsvPrinter>(out, run);
}

}  // namespace infertune
