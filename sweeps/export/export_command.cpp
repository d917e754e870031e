// `infertune export --db results.db [--sweep ID] [--format csv|md|json] [-o FILE]`: one row per trial of the
// results store, with the stable columns of trial_table.h.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "sweeps/export/table_format.h"
#include "sweeps/export/trial_table.h"
#include "sweeps/store/results_store.h"
#include "sweeps/sweeps_commands.h"

namespace infertune {
namespace {

struct ExportOptions {
  std::string db;
  std::optional<int64_t> sweep;
  std::string format = "csv";
  std::string output;
};

Status write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) return fail("cannot write to stdout");
    return {};
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail("cannot open {} for writing", path);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return fail("cannot write {}", path);
  return {};
}

int run_export(const ExportOptions& options) {
  const auto format = parse_table_format(options.format);
  if (!format) return report_error("export", fmt::format("--format {}: expected csv, md or json", options.format));
  // Read-only: a mistyped path leaves no database behind, and another SQLite file is refused untouched.
  auto store = ResultsStore::open_read_only(options.db);
  if (!store) return report_error("export", store.error().message);
  auto table = read_trial_table(store->database(), options.sweep);
  if (!table) return report_error("export", table.error().message);
  if (Status s = write_output(options.output, format_table(*table, *format)); !s) {
    return report_error("export", s.error().message);
  }
  return 0;
}

}  // namespace

void add_export_command(Subcommands& commands) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* sub =
      commands.add("export", "Write the trials of a results store, one row per trial, as CSV, Markdown or JSON",
                   [options] { return run_export(*options); });
  sub->add_option("--db", options->db, "The results store (SQLite file)")->required();
  sub->add_option("--sweep", options->sweep, "Only this sweep's trials (default: every sweep)");
  sub->add_option("--format", options->format, "csv, md or json")->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write to FILE instead of stdout");
}

}  // namespace infertune
