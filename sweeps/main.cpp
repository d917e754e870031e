// The `infertune` binary: every area registers its subcommands here; the chosen one runs.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/bench_commands.h"
#include "engine/engine_commands.h"
#include "reports/reports_commands.h"
#include "sweeps/sweeps_commands.h"
#include "sweeps/version_info.h"

int main(int argc, char** argv) {
  CLI::App app{"infertune: a local LLM inference engine (GGUF) and the harness that tunes it", "infertune"};
  app.require_subcommand(0, 1);
  bool show_version = false;
  app.add_flag("--version", show_version, "Print version, git commit, compiled backends and CPU features");

  infertune::Subcommands commands(app);
  infertune::register_engine_commands(commands);
  infertune::register_bench_commands(commands);
  infertune::register_sweeps_commands(commands);
  infertune::register_reports_commands(commands);

  // llama.cpp's multi-letter short flags (-tb, -ngl, ...) reach CLI11 as their long forms, each subcommand's
  // own (a flag means what the chosen command says it means).
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  commands.rewrite_aliases(args);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(std::move(args));
  } catch (const CLI::ParseError& e) {
    // --help exits 0; any bad flag or value is bad input, exit status 1 (CLI11's own codes are 100-127).
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (show_version) {
    fmt::print("{}", infertune::version_report());
    return 0;
  }
  if (!commands.chosen()) {
    fmt::print("{}", app.help());
    return 2;
  }
  return commands.chosen()();
}
