#include "bench/loadgen/load_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace infertune {

using nlohmann::json;

std::string level_name(const LoadLevel& level) {
  return level.kind == LoadLevel::Kind::closed ? fmt::format("c={}", level.concurrency)
                                               : fmt::format("rate={:g}/s", level.rate);
}

namespace {

json percentiles_json(const Percentiles& p, double scale) {
  return {{"p50", p.p50 * scale}, {"p95", p.p95 * scale}, {"p99", p.p99 * scale}, {"mean", p.mean * scale}};
}

json summary_json(const LevelSummary& s, const LoadOptions& o) {
  json j = {{"mode", s.level.kind == LoadLevel::Kind::closed ? "closed" : "open"},
            {"level", level_name(s.level)},
            {"concurrency", s.level.kind == LoadLevel::Kind::closed ? json(s.level.concurrency) : json(nullptr)},
            {"rate", s.level.kind == LoadLevel::Kind::open ? json(s.level.rate) : json(nullptr)},
            {"requests", s.requests},
            {"errors", s.errors},
            {"ttft_ms", percentiles_json(s.ttft_s, 1e3)},
            {"itl_ms", percentiles_json(s.itl_s, 1e3)},
            {"tpot_ms", percentiles_json(s.tpot_s, 1e3)},
            {"e2e_s", percentiles_json(s.e2e_s, 1)},
            {"output_tokens", s.output_tokens},
            {"prompt_tokens", s.prompt_tokens},
            {"output_tokens_per_s", s.output_tokens_per_s},
            {"requests_per_s", s.requests_per_s},
            {"goodput_rps", s.goodput_rps},
            {"slo_attainment", s.slo_attainment},
            {"wall_s", s.wall_s},
            {"max_tokens", o.max_tokens},
            {"api", o.api == LoadApi::chat ? "chat" : "completions"}};
  if (o.slo_ttft_s) j["slo_ttft_ms"] = *o.slo_ttft_s * 1e3;
  if (o.slo_itl_s) j["slo_itl_ms"] = *o.slo_itl_s * 1e3;
  if (!s.first_error.empty()) j["first_error"] = s.first_error;
  return j;
}

std::string markdown(const std::vector<LevelSummary>& summaries) {
  std::string out =
      "| level | requests | errors | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms | TPOT p50 ms | e2e p50 s | "
      "e2e p99 s | output t/s | req/s | goodput req/s | SLO met |\n"
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const LevelSummary& s : summaries) {
    out += fmt::format(
        "| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.2f} | {:.2f} | {:.2f} | {:.3f} | "
        "{:.3f} | {:.0f}% |\n",
        level_name(s.level), s.requests, s.errors, s.ttft_s.p50 * 1e3, s.ttft_s.p99 * 1e3, s.itl_s.p50 * 1e3,
        s.itl_s.p99 * 1e3, s.tpot_s.p50 * 1e3, s.e2e_s.p50, s.e2e_s.p99, s.output_tokens_per_s, s.requests_per_s,
        s.goodput_rps, s.slo_attainment * 100);
  }
  return out;
}

std::string csv(const std::vector<LevelSummary>& summaries) {
  std::string out =
      "level,requests,errors,ttft_p50_ms,ttft_p95_ms,ttft_p99_ms,itl_p50_ms,itl_p95_ms,itl_p99_ms,tpot_p50_ms,"
      "e2e_p50_s,e2e_p95_s,e2e_p99_s,output_tokens_per_s,requests_per_s,goodput_rps,slo_attainment\n";
  for (const LevelSummary& s : summaries) {
    out += fmt::format(
        "{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.4f},{:.4f},{:.3f},{:.4f},{:.4f},{:.4f}\n",
        level_name(s.level), s.requests, s.errors, s.ttft_s.p50 * 1e3, s.ttft_s.p95 * 1e3, s.ttft_s.p99 * 1e3,
        s.itl_s.p50 * 1e3, s.itl_s.p95 * 1e3, s.itl_s.p99 * 1e3, s.tpot_s.p50 * 1e3, s.e2e_s.p50, s.e2e_s.p95,
        s.e2e_s.p99, s.output_tokens_per_s, s.requests_per_s, s.goodput_rps, s.slo_attainment);
  }
  return out;
}

}  // namespace

std::string format_summaries(const std::vector<LevelSummary>& summaries, const LoadOptions& options,
                             LoadFormat format) {
  switch (format) {
    case LoadFormat::md:
      return markdown(summaries);
    case LoadFormat::csv:
      return csv(summaries);
    case LoadFormat::json: {
      json all = json::array();
      for (const LevelSummary& s : summaries) all.push_back(summary_json(s, options));
      return all.dump(2) + "\n";
    }
    case LoadFormat::jsonl: {
      std::string out;
      for (const LevelSummary& s : summaries) out += summary_json(s, options).dump() + "\n";
      return out;
    }
  }
  return {};
}

}  // namespace infertune
