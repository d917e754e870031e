#pragma once
// loadgen's output, like bench's: a Markdown table (default), CSV, one JSON document, or JSON lines.
#include <string>
#include <vector>

#include "bench/loadgen/load_summary.h"

namespace infertune {

enum class LoadFormat { md, csv, json, jsonl };

std::string level_name(const LoadLevel& level);  // "c=4", "rate=2.5/s"
std::string format_summaries(const std::vector<LevelSummary>& summaries, const LoadOptions& options, LoadFormat format);

}  // namespace infertune
