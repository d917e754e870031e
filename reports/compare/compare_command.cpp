// `infertune compare`: the CI performance-regression gate (docs/compare.md). Two forms:
//
//   infertune compare BASELINE CANDIDATE [--metric tg,pp] [--threshold 5%]     two results stores (or sweeps)
//   infertune compare --bin OLD --bin NEW -m MODEL [bench flags]             runs both, ABBA blocks
//
// Exit status: 0 PASS, 1 WARN, 2 FAIL, 3 INCONCLUSIVE (verdict.h), 4 bad input or an error.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <memory>

#include "bench/llama_bench/bench_flags.h"
#include "reports/compare/abba_runner.h"
#include "reports/compare/compare_output.h"
#include "reports/compare/comparison.h"
#include "reports/compare/noise_thresholds.h"
#include "reports/compare/store_side.h"
#include "reports/reports_commands.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "compare";

struct CompareFlags {
  std::vector<std::string> sides;  // BASELINE CANDIDATE
  std::vector<std::string> bins;
  std::vector<std::string> baseline_env, candidate_env;
  int blocks = 16;
  double block_timeout_s = 600;
  std::string metrics;
  std::string threshold = "5%";
  std::string noise_from;
  std::string min_threshold = "1%";
  std::string warn_above = "1%";
  int resamples = 4000;
  uint64_t seed = 20240601;
  std::string format = "table";
  std::string output, markdown_file, json_file;
  bool quiet = false;
  BenchFlagText bench;
  std::vector<CLI::Option*> bench_options;  // what --bin passes through
  CLI::App* app = nullptr;
};

int compare_error(const std::string& message) {
  fmt::print(stderr, "infertune {}: {}\n", kCommand, message);
  return kCompareErrorExitStatus;
}

// "5%", "5" or "2.5%": a percentage in (0, 100), as a fraction.
Result<double> parse_percent(const std::string& text, const char* flag) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !(value > 0 && value < 100)) {
    return fail("{}: '{}' is not a percentage between 0 and 100 (e.g. 5%)", flag, text);
  }
  return value / 100;
}

// The bench flags the user gave, as long options again, for both binaries.
std::vector<std::string> pass_through_arguments(const CompareFlags& f) {
  std::vector<std::string> args;
  for (const CLI::Option* opt : f.bench_options) {
    if (opt->count() == 0) continue;
    const std::string name = opt->get_lnames().empty() ? "-" + opt->get_snames().front() : "--" + opt->get_lnames().front();
    if (opt->get_expected_min() == 0) {
      args.push_back(name);
      continue;
    }
    for (const std::string& value : opt->results()) {
      args.push_back(name);
      args.push_back(value);
    }
  }
  return args;
}

Status check_environment(const std::vector<std::string>& entries, const char* flag) {
  for (const std::string& e : entries) {
    const size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) return fail("{} {}: expected NAME=VALUE", flag, e);
  }
  return {};
}

bool is_llama_bench(const std::string& path) {
  return std::filesystem::path(path).filename().string().find("llama-bench") != std::string::npos;
}

Result<AbbaResult> run_binaries(const CompareFlags& f) {
  if (f.bins.size() != 2) return fail("--bin: give it twice, the baseline's binary then the candidate's");
  if (!f.sides.empty()) return fail("--bin runs the binaries itself: give no BASELINE CANDIDATE stores with it");
  if (f.bench.models.empty()) return fail("--bin needs a model: -m MODEL");
  if (f.blocks < 2 || f.blocks % 2 != 0) return fail("--blocks {}: an even number of at least 2 (e.g. 16)", f.blocks);
  if (Status s = check_environment(f.baseline_env, "--baseline-env"); !s) return s.error();
  if (Status s = check_environment(f.candidate_env, "--candidate-env"); !s) return s.error();
  if (auto params = resolve_bench_params(f.bench); !params) return params.error();
  auto old_path = resolve_executable(f.bins[0]);
  if (!old_path) return old_path.error();
  auto new_path = resolve_executable(f.bins[1]);
  if (!new_path) return new_path.error();
  const BenchBinary baseline{"baseline", *old_path, f.baseline_env, is_llama_bench(*old_path)};
  const BenchBinary candidate{"candidate", *new_path, f.candidate_env, is_llama_bench(*new_path)};
  AbbaPlan plan;
  plan.blocks = f.blocks;
  plan.bench_arguments = pass_through_arguments(f);
  plan.block_timeout_s = f.block_timeout_s;
  plan.progress = !f.quiet;
  if (!f.quiet) {
    std::string args;
    for (const std::string& a : plan.bench_arguments) args += " " + a;
    fmt::print(stderr, "compare: {} ABBA blocks of{} -o jsonl\n  baseline  {}\n  candidate {}\n", plan.blocks, args,
               baseline.path, candidate.path);
    if (f.blocks % 4 != 0) fmt::print(stderr, "compare: note: --blocks {} is not a multiple of 4, so ABBA is unbalanced\n", f.blocks);
  }
  return run_abba(baseline, candidate, plan);
}

Status apply_thresholds(const CompareFlags& f, const MeasuredSide& candidate, CompareSettings& settings,
                        ComparisonReport& extra) {
  const bool automatic = f.threshold == "auto" || !f.noise_from.empty();
  if (!automatic) {
    auto t = parse_percent(f.threshold, "--threshold");
    if (!t) return t.error();
    settings.default_threshold = *t;
    extra.threshold_source = "--threshold " + threshold_text(*t);
    return {};
  }
  if (f.noise_from.empty()) return fail("--threshold auto needs --noise-from AA_STORE (A/A runs of this host)");
  if (f.app->get_option("--threshold")->count() > 0 && f.threshold != "auto") {
    return fail("--threshold {} and --noise-from: give one (--noise-from derives the thresholds)", f.threshold);
  }
  auto floor = parse_percent(f.min_threshold, "--min-threshold");
  if (!floor) return floor.error();
  auto noise = noise_thresholds_from_store(f.noise_from, *floor);
  if (!noise) return noise.error();
  settings.thresholds = noise->by_metric;
  extra.threshold_source = noise->description + fmt::format(", at least {}", threshold_text(*floor));
  const auto& hosts = noise->host_fingerprints;
  if (!candidate.host_fingerprint.empty() &&
      std::find(hosts.begin(), hosts.end(), candidate.host_fingerprint) == hosts.end()) {
    extra.notes.push_back(fmt::format("the A/A runs are of another host than the candidate's ({}): their noise may "
                                      "not be this host's",
                                      candidate.host_fingerprint));
  }
  return {};
}

// A compared metric the A/A runs did not measure was judged by the default threshold: say so.
void note_metrics_without_noise(ComparisonReport& report) {
  for (const GeometricMean& g : report.geometric_means) {
    if (!report.settings.thresholds.contains(std::string(g.metric.store_name))) {
      report.notes.push_back(fmt::format("the A/A runs have no {}: its threshold is the default {}",
                                         g.metric.store_name, threshold_text(report.settings.default_threshold)));
    }
  }
}

Status write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail("cannot write {}", path);
  out << text;
  out.close();
  if (!out) return fail("cannot write {}", path);
  return {};
}

Status write_outputs(const CompareFlags& f, CompareFormat format, const ComparisonReport& report) {
  const std::string text = format_compare(report, format);
  if (f.output.empty()) {
    fmt::print("{}", text);
    std::fflush(stdout);
  } else if (Status s = write_file(f.output, text); !s) {
    return fail("--output: {}", s.error().message);
  }
  if (!f.markdown_file.empty()) {
    if (Status s = write_file(f.markdown_file, format_compare_markdown(report)); !s) return fail("--markdown: {}", s.error().message);
  }
  if (!f.json_file.empty()) {
    if (Status s = write_file(f.json_file, format_compare_json(report)); !s) return fail("--json: {}", s.error().message);
  }
  return {};
}

int run_compare(CompareFlags& f) {
  if (!f.app->remaining().empty()) return compare_error(fmt::format("unknown argument '{}'", f.app->remaining().front()));
  const auto format = parse_compare_format(f.format);
  if (!format) return compare_error(fmt::format("-o: unknown format '{}' (table, md, json)", f.format));
  CompareSettings settings;
  settings.metrics_given = !f.metrics.empty();
  if (settings.metrics_given) {
    auto metrics = parse_metric_list(f.metrics);
    if (!metrics) return compare_error(metrics.error().message);
    settings.metrics = *metrics;
  } else {
    settings.metrics = default_compare_metrics();
  }
  auto warn = parse_percent(f.warn_above, "--warn-above");
  if (!warn) return compare_error(warn.error().message);
  settings.warn_margin = *warn;
  if (f.resamples < 100) return compare_error("--resamples: at least 100");
  settings.resamples = f.resamples;
  settings.seed = f.seed;

  ComparisonReport extra;  // thresholds' source and notes, gathered before the comparison
  MeasuredSide baseline, candidate;
  if (!f.bins.empty()) {
    auto sides = run_binaries(f);
    if (!sides) return compare_error(sides.error().message);
    baseline = std::move(sides->baseline);
    candidate = std::move(sides->candidate);
    settings.design = CompareDesign::paired_blocks;
    extra.mode = "binaries";
  } else {
    if (!f.baseline_env.empty() || !f.candidate_env.empty()) return compare_error("--baseline-env / --candidate-env go with --bin");
    if (f.sides.size() != 2) {
      return compare_error("give BASELINE and CANDIDATE (results stores, e.g. base.db or runs.db:3), or --bin OLD --bin NEW");
    }
    auto b = load_store_side(parse_store_selection(f.sides[0]), "baseline");
    if (!b) return compare_error(b.error().message);
    auto c = load_store_side(parse_store_selection(f.sides[1]), "candidate");
    if (!c) return compare_error(c.error().message);
    baseline = std::move(*b);
    candidate = std::move(*c);
    settings.design = CompareDesign::independent;
    extra.mode = "stores";
  }
  if (Status s = apply_thresholds(f, candidate, settings, extra); !s) return compare_error(s.error().message);

  ComparisonReport report = compare_sides(baseline, candidate, settings);
  report.mode = extra.mode;
  report.threshold_source = extra.threshold_source;
  report.notes.insert(report.notes.begin(), extra.notes.begin(), extra.notes.end());
  if (!f.noise_from.empty()) note_metrics_without_noise(report);
  if (Status s = write_outputs(f, *format, report); !s) return compare_error(s.error().message);
  if (!report.compared_anything()) {
    return compare_error(fmt::format("nothing compared: no configuration has a chosen metric ({}) measured on both "
                                     "sides; see 'not compared' above",
                                     f.metrics.empty() ? "tg, pp, pg, aggregate" : f.metrics));
  }
  return exit_status_of(report.verdict);
}

void add_bench_pass_through(CLI::App& app, CompareFlags& f) {
  add_bench_flags(app, f.bench);
  // compare has its own -o (the report's format) and progress, reads the rows of -o only and runs models, not
  // --list-devices; -m is needed by --bin only.
  for (const char* own : {"--output", "--output-err", "--progress", "--list-devices"}) {
    app.remove_option(app.get_option(own));
  }
  app.get_option("--model")->required(false);
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames().empty() || opt->get_lnames().front() == "help") continue;
    opt->group("Bench flags for --bin, passed to both binaries' bench (comma lists, ranges)");
    f.bench_options.push_back(opt);
  }
}

}  // namespace

void add_compare_command(Subcommands& commands) {
  auto f = std::make_shared<CompareFlags>();
  CLI::App* app = commands.add(
      kCommand,
      "The performance-regression gate: compare a candidate with a baseline (two results stores, or two "
      "infertune binaries run in ABBA blocks). Exit status: 0 PASS, 1 WARN, 2 FAIL, 3 INCONCLUSIVE, 4 error",
      [f] { return run_compare(*f); });
  f->app = app;
  // Unknown arguments reach run_compare, which refuses them with exit status 4 (not CLI11's own status).
  app->allow_extras();
  add_bench_pass_through(*app, *f);  // first: it replaces bench's -o and --output by compare's
  commands.add_aliases(kCommand, bench_flag_aliases());
  app->add_option("stores", f->sides, "BASELINE CANDIDATE: results stores, each FILE (its latest sweep) or FILE:SWEEP")
      ->expected(0, 2);
  app->add_option("--metric", f->metrics,
                  "Metrics, comma list: tg, pp, pg, aggregate (t/s, higher is better), ttft, itl, e2e, load (ms, "
                  "lower is better), all (default: tg,pp,pg,aggregate)");
  app->add_option("--threshold", f->threshold,
                  "The worsening tolerated, e.g. 5% (a throughput down or a latency up by more fails); auto: from "
                  "--noise-from")
      ->capture_default_str();
  app->add_option("--noise-from", f->noise_from,
                  "A results store with A/A runs of this host (two sweeps of one spec and build): per-metric thresholds "
                  "from their run-to-run spread");
  app->add_option("--min-threshold", f->min_threshold, "The least threshold --noise-from may give")
      ->capture_default_str();
  app->add_option("--warn-above", f->warn_above,
                  "WARN (exit 1) only for a worsening, sure at 95%, beyond this (and within the threshold)")
      ->capture_default_str();
  app->add_option("--bin", f->bins, "--bin OLD --bin NEW: run both binaries' bench in ABBA blocks (PATH, or a name in "
                                    "PATH; a llama-bench binary is run without the bench subcommand)");
  app->add_option("--baseline-env", f->baseline_env, "NAME=VALUE in the baseline binary's environment (repeatable)");
  app->add_option("--candidate-env", f->candidate_env,
                  "NAME=VALUE in the candidate binary's environment (repeatable), e.g. INFERTUNE_FAULT_SLOWDOWN=0.2");
  app->add_option("--blocks", f->blocks, "Bench runs of both binaries together, in ABBA order (even; 16: 8 pairs)")
      ->capture_default_str();
  app->add_option("--block-timeout", f->block_timeout_s, "Seconds one bench run may take")->capture_default_str();
  app->add_option("-o,--format", f->format, "stdout: table, md (a pull-request comment) or json")->capture_default_str();
  app->add_option("--output", f->output, "Write that to FILE instead of stdout");
  app->add_option("--markdown", f->markdown_file, "Also write the Markdown to FILE");
  app->add_option("--json", f->json_file, "Also write the JSON to FILE");
  app->add_option("--resamples", f->resamples, "Bootstrap resamples (store comparisons)")->capture_default_str();
  app->add_option("--seed", f->seed, "Bootstrap seed (the same seed gives the same intervals)")->capture_default_str();
  app->add_flag("-q,--quiet", f->quiet, "No progress on stderr");
}

}  // namespace infertune
