// `infertune recommend --db results.db [--sweep ID] [--scenario latency|throughput|mixed|serving|all] [--max-mem SIZE]
// [--min-ctx N] [--max-quality-loss PCT] [--max-kld X] [--json FILE] [-o table|json]`: the recommended configurations
// of a sweep (recommend.h).
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "sweeps/recommend/recommend.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/store/results_store.h"
#include "sweeps/sweeps_commands.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "recommend";

struct RecommendFlags {
  std::string db;
  std::optional<int64_t> sweep;
  std::string scenario = "all";
  std::string max_mem;
  int64_t min_ctx = 0;
  std::string max_quality_loss;  // "1%", "0.5"
  std::optional<double> max_kld;
  std::string json_file;
  std::string output = "table";
};

Result<RecommendOptions> options_from(const RecommendFlags& flags) {
  RecommendOptions options;
  options.store_recommendations = false;  // a reader: the sweep records its own recommendations
  if (flags.scenario != "all") {
    auto scenario = parse_scenario(flags.scenario);
    if (!scenario) return fail("--scenario {}: expected latency, throughput, mixed, serving or all", flags.scenario);
    options.scenarios = {*scenario};
  }
  if (!flags.max_mem.empty()) {
    auto bytes = parse_byte_size(flags.max_mem, "--max-mem");
    if (!bytes) return bytes.error();
    options.max_mem_bytes = *bytes;
  }
  if (flags.min_ctx < 0) return fail("--min-ctx {}: must not be negative", flags.min_ctx);
  options.min_ctx = flags.min_ctx;
  if (!flags.max_quality_loss.empty()) {
    auto percent = parse_percent(flags.max_quality_loss, "--max-quality-loss");
    if (!percent) return percent.error();
    options.max_quality_loss_pct = *percent;
  }
  if (flags.max_kld) {
    if (!std::isfinite(*flags.max_kld) || *flags.max_kld < 0)
      return fail("--max-kld {}: must be a number 0 or above", *flags.max_kld);
    options.max_kld = flags.max_kld;
  }
  return options;
}

Result<int64_t> chosen_sweep(ResultsStore& store, const RecommendFlags& flags) {
  if (flags.sweep) return *flags.sweep;
  auto latest = store.latest_sweep_id();
  if (!latest) return latest.error();
  if (!*latest) return fail("results store {}: has no sweeps", flags.db);
  return **latest;
}

Status write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail("--json {}: cannot open for writing", path);
  out << text;
  out.close();
  if (!out) return fail("--json {}: cannot write", path);
  return {};
}

int run_recommend(const RecommendFlags& flags) {
  if (flags.output != "table" && flags.output != "json")
    return report_error(kCommand, fmt::format("-o {}: expected table or json", flags.output));
  auto options = options_from(flags);
  if (!options) return report_error(kCommand, options.error().message);
  // Read-only: a mistyped path leaves no database behind, and another SQLite file is refused untouched.
  auto store = ResultsStore::open_read_only(flags.db);
  if (!store) return report_error(kCommand, store.error().message);
  auto sweep = chosen_sweep(*store, flags);
  if (!sweep) return report_error(kCommand, sweep.error().message);
  auto report = recommend_sweep(*store, *sweep, *options);
  if (!report) return report_error(kCommand, report.error().message);

  const std::string json = recommendation_json(*report).dump(2) + "\n";
  if (!flags.json_file.empty()) {
    if (Status s = write_file(flags.json_file, json); !s) return report_error(kCommand, s.error().message);
  }
  const std::string text = flags.output == "json" ? json : format_recommendation_text(*report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!report->has_recommendation()) {
    const std::string why =
        report->no_candidates_reason.empty() ? "no scenario has a winner" : report->no_candidates_reason;
    return report_error(kCommand, fmt::format("{}: no recommendation: {}", flags.db, why));
  }
  return 0;
}

}  // namespace

void add_recommend_command(Subcommands& commands) {
  auto flags = std::make_shared<RecommendFlags>();
  CLI::App* sub = commands.add("recommend",
                               "The configuration to run per scenario (latency, throughput, mixed), with the "
                               "Pareto front and ready command lines, from a sweep's results",
                               [flags] { return run_recommend(*flags); });
  sub->add_option("--db", flags->db, "The results store (SQLite file)")->required();
  sub->add_option("--sweep", flags->sweep, "The sweep (default: the latest)");
  sub->add_option("--scenario", flags->scenario, "latency, throughput, mixed, serving (sweeps with --serve) or all")
      ->capture_default_str();
  sub->add_option("--max-mem", flags->max_mem,
                  "Only configurations whose peak RSS (predicted or measured, the larger) fits, and whose "
                  "predicted memory at the command lines' context (--min-ctx) does: 8G, 512M, bytes");
  sub->add_option("--min-ctx", flags->min_ctx,
                  "The context the command lines run with, at least: a smaller configuration's -c is raised to it and "
                  "its memory predicted there (0: 4096, or the model's training context when smaller)")
      ->capture_default_str();
  sub->add_option("--max-quality-loss", flags->max_quality_loss,
                  "Only quantization variants whose perplexity is at most this much above the base model's (1%); "
                  "variants without quality figures (synthetic, models used as given) are kept and said so");
  sub->add_option("--max-kld", flags->max_kld,
                  "Only quantization variants whose mean KL divergence from the base model is at most this (0.05)");
  sub->add_option("--json", flags->json_file, "Also write the JSON document to FILE");
  sub->add_option("-o,--output", flags->output, "stdout: table or json")->capture_default_str();
}

}  // namespace infertune
