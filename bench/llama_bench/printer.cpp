#include "bench/llama_bench/printer.h"

namespace infertune {

std::unique_ptr<ResultPrinter> make_printer(std::FILE* out, OutputFormat format, const BenchParams& params,
                                            const RunInfo& run) {
  switch (format) {
    case OutputFormat::csv:
      return make_csv_printer(out, run);
    case OutputFormat::json:
      return make_json_printer(out, run, false);
    case OutputFormat::jsonl:
      return make_json_printer(out, run, true);
    case OutputFormat::sql:
      return make_sql_printer(out, run);
    case OutputFormat::markdown:
      break;
  }
  return make_markdown_printer(out, params, run);
}

}  // namespace infertune
