#include "bench/llama_bench/bench_params.h"

#include "engine/settings/settings_table.h"

namespace infertune {

BenchParams::BenchParams() {
  for (const Setting* s : settings_of(Command::bench)) settings[std::string(s->key)] = {std::string(s->default_value)};
}

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

int llama_flash_attn_number(FlashAttention mode) {
  switch (mode) {
    case FlashAttention::On:
      return 1;
    case FlashAttention::Off:
      return 0;
    case FlashAttention::Auto:
      break;
  }
  return -1;
}

}  // namespace infertune
