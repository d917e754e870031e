#include "bench/llama_bench/bench_params.h"

namespace infertune {

const char* output_format_name(OutputFormat format) {
  switch (format) {
    case OutputFormat::csv:
      return "csv";
    case OutputFormat::json:
      return "json";
    case OutputFormat::jsonl:
      return "jsonl";
    case OutputFormat::sql:
      return "sql";
    case OutputFormat::markdown:
      break;
  }
  return "md";
}

const char* flash_attn_name(FlashAttn mode) {
  switch (mode) {
    case FlashAttn::on:
      return "on";
    case FlashAttn::off:
      return "off";
    case FlashAttn::autodetect:
      break;
  }
  return "auto";
}

}  // namespace infertune
