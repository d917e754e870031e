// `infertune bench`: llama-bench over this engine. Expands the flags into tests (test_matrix.h), runs
// them (bench_runner.h) and prints each result as it finishes (printer.h: -o on stdout, -oe on stderr).
// Exit status 0 when at least one test ran, 1 when every test failed or the flags are bad.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "bench/bench_commands.h"
#include "bench/llama_bench/bench_flags.h"
#include "bench/llama_bench/bench_progress.h"
#include "bench/llama_bench/bench_runner.h"
#include "bench/llama_bench/device_list.h"
#include "bench/llama_bench/op_profile_table.h"
#include "bench/llama_bench/printer.h"
#include "bench/llama_bench/roofline.h"
#include "bench/llama_bench/run_info.h"
#include "bench/llama_bench/test_matrix.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "bench";

// Reading weights faster than the probe's bandwidth means the probe's figure is off (measured while the
// machine was busy, or before a hardware change): say so once, since every roofline % of the run is off too.
void warn_if_above_roofline(const BenchResult& result, const RunInfo& run, BenchProgress& progress, bool& warned) {
  const auto pct = roofline_percent(result, run.read_bandwidth);
  if (warned || !pct || *pct <= 100) return;
  warned = true;
  progress.note(
      fmt::format("warning: {} read weights at {:.0f}% of the host probe's {:.1f} GB/s read bandwidth; the "
                  "probe was probably measured on a busy machine (re-measure on an idle one: infertune "
                  "probe --refresh)",
                  test_name(result.test), *pct, *roofline_gbps(result, run.read_bandwidth)));
}

// The -o printer on stdout, and the -oe one on stderr when given.
struct Printers {
  std::vector<std::pair<std::FILE*, std::unique_ptr<ResultPrinter>>> all;

  Printers(const BenchParams& params, const RunInfo& run) {
    all.emplace_back(stdout, make_printer(stdout, params.output, params, run));
    if (params.output_err) all.emplace_back(stderr, make_printer(stderr, *params.output_err, params, run));
  }
  template <class Print>
  void each(Print print) {
    for (auto& [file, printer] : all) {
      print(*printer);
      std::fflush(file);
    }
  }
};

int run_bench(const BenchFlagText& text) {
  if (text.list_devices) {
    std::fputs(device_list_text(visible_devices()).c_str(), stdout);
    return 0;
  }
  auto params = resolve_bench_params(text);
  if (!params) return report_error(kCommand, params.error().message);
  const std::vector<BenchTest> tests = expand_tests(*params);
  if (tests.empty()) return report_error(kCommand, "nothing to run: -p, -n and -pg give no test");

  BenchProgress progress(params->progress, tests.size());
  const RunInfo run = gather_run_info(*params, progress);
  Printers printers(*params, run);
  printers.each([](ResultPrinter& p) { p.header(); });

  BenchRunner runner(*params, progress);
  size_t succeeded = 0;
  bool warned_roofline = false;
  for (size_t i = 0; i < tests.size(); ++i) {
    const BenchResult result = runner.run(tests[i], i);
    progress.clear();
    if (result.ok()) {
      ++succeeded;
    } else {
      progress.note(fmt::format("error: {} ({}): {}", test_name(tests[i]), tests[i].model, result.error));
    }
    printers.each([&](ResultPrinter& p) { p.row(result); });
    if (result.profile) std::fputs(op_profile_table(*result.profile, test_name(tests[i])).c_str(), stderr);
    warn_if_above_roofline(result, run, progress, warned_roofline);
  }
  printers.each([](ResultPrinter& p) { p.footer(); });
  if (succeeded == 0) return report_error(kCommand, fmt::format("all {} tests failed", tests.size()));
  return 0;
}

}  // namespace

void add_bench_command(Subcommands& commands) {
  auto text = std::make_shared<BenchFlagText>();
  CLI::App* app = commands.add(kCommand,
                               "Measure prompt processing (pp) and generation (tg) speed, as llama-bench does: "
                               "every combination of the given parameter lists",
                               [text] { return run_bench(*text); });
  add_bench_flags(*app, *text);
  commands.add_aliases(kCommand, bench_flag_aliases());
}

}  // namespace infertune
