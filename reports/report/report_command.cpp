// `infertune report --db results.db [--db more.db] [--sweep ID ...|--all-sweeps] [-o FILE]
// [--format html|csv|md]`: the report of one or more sweeps, from one or more results stores, each opened
// read-only.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "reports/report/history_section.h"
#include "reports/report/html_report.h"
#include "reports/report/report_tables.h"
#include "reports/reports_commands.h"
#include "sweeps/export/table_format.h"
#include "sweeps/store/time_text.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "report";

struct ReportFlags {
  std::vector<std::string> dbs;
  std::vector<int64_t> sweeps;
  bool all_sweeps = false;
  std::string output;
  std::string format;
};

// --format, else the output file's extension, else html.
Result<std::string> chosen_format(const ReportFlags& flags) {
  std::string format = flags.format;
  if (format.empty()) {
    const std::string ext = std::filesystem::path(flags.output).extension().string();
    format = ext == ".csv" ? "csv" : ext == ".md" || ext == ".markdown" ? "md" : "html";
  }
  if (format != "html" && format != "csv" && format != "md") {
    return fail("--format {}: expected html, csv or md", format);
  }
  return format;
}

// Written next to the destination and renamed over it, so a failure never leaves half a report.
Status write_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return fail("-o {}: cannot open for writing", path.string());
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) return fail("-o {}: cannot write", path.string());
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) return fail("-o {}: {}", path.string(), error.message());
  return {};
}

Status write_stdout(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) return fail("cannot write to stdout");
  return {};
}

std::string markdown_report(const std::vector<NamedTable>& tables) {
  std::string out = "# infertune report\n";
  for (const NamedTable& t : tables) out += fmt::format("\n## {}\n\n{}", t.title, format_markdown(t.table));
  return out;
}

// CSV is one table per file: FILE.csv holds every trial, FILE.<table>.csv each other table. On stdout, the
// trials alone.
Status write_csv(const ReportFlags& flags, const std::vector<NamedTable>& tables) {
  const auto trials = std::ranges::find_if(tables, [](const NamedTable& t) { return t.id == "trials"; });
  if (flags.output.empty() || flags.output == "-") return write_stdout(format_csv(trials->table));
  const std::filesystem::path path(flags.output);
  for (const NamedTable& t : tables) {
    std::filesystem::path file = path;
    if (t.id != "trials") file.replace_extension(t.id + path.extension().string());
    if (Status s = write_file(file, format_csv(t.table)); !s) return s;
    fmt::print(stderr, "infertune report: wrote {} ({} rows)\n", file.string(), t.table.rows.size());
  }
  return {};
}

Result<std::vector<ReportSweep>> load_all(const ReportFlags& flags) {
  std::vector<ReportSweep> sweeps;
  for (const std::string& db : flags.dbs) {
    auto loaded = load_report_sweeps(db, {flags.sweeps, flags.all_sweeps});
    if (!loaded) return loaded.error();
    for (ReportSweep& s : *loaded) sweeps.push_back(std::move(s));
  }
  // Two stores with the same file name in different folders: name them by path instead.
  for (size_t i = 0; i < sweeps.size(); ++i) {
    for (size_t j = i + 1; j < sweeps.size(); ++j) {
      if (sweeps[i].name == sweeps[j].name && sweeps[i].store != sweeps[j].store) {
        sweeps[i].name = fmt::format("{}, sweep {}", sweeps[i].store.string(), sweeps[i].sweep.id);
        sweeps[j].name = fmt::format("{}, sweep {}", sweeps[j].store.string(), sweeps[j].sweep.id);
      }
    }
  }
  return sweeps;
}

std::vector<std::filesystem::path> stores(const ReportFlags& flags) { return {flags.dbs.begin(), flags.dbs.end()}; }

int run_report(const ReportFlags& flags) {
  auto format = chosen_format(flags);
  if (!format) return report_error(kCommand, format.error().message);
  if (flags.all_sweeps && !flags.sweeps.empty()) return report_error(kCommand, "--sweep and --all-sweeps exclude each other");
  auto sweeps = load_all(flags);
  if (!sweeps) return report_error(kCommand, sweeps.error().message);
  const std::vector<NamedTable> tables = report_tables(*sweeps);

  Status written;
  if (*format == "csv") {
    written = write_csv(flags, tables);
  } else {
    const std::string text =
        *format == "md" ? markdown_report(tables) : html_report({*sweeps, history_section_html(stores(flags)), utc_now_text()});
    written = flags.output.empty() || flags.output == "-" ? write_stdout(text) : write_file(flags.output, text);
    if (written && !flags.output.empty() && flags.output != "-") {
      fmt::print(stderr, "infertune report: wrote {} ({} sweeps, {:.0f} KiB)\n", flags.output, sweeps->size(),
                 static_cast<double>(text.size()) / 1024.0);
    }
  }
  if (!written) return report_error(kCommand, written.error().message);
  return 0;
}

}  // namespace

void add_report_command(Subcommands& commands) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* sub = commands.add(
      "report",
      "A report of sweeps for people (one self-contained HTML page with charts) or for spreadsheets and pull "
      "requests (CSV, Markdown); several sweeps or stores side by side",
      [flags] { return run_report(*flags); });
  sub->add_option("--db", flags->dbs, "A results store (SQLite file); repeat to compare stores side by side")
      ->required();
  sub->add_option("--sweep", flags->sweeps, "Report these sweeps (repeat; default: the latest sweep of each store)");
  sub->add_flag("--all-sweeps", flags->all_sweeps, "Report every sweep of each store");
  sub->add_option("-o,--output", flags->output,
                  "Write to FILE (default stdout). CSV writes FILE.csv (all trials) and FILE.<table>.csv for the "
                  "other tables");
  sub->add_option("--format", flags->format, "html, csv or md (default: from the -o extension, else html)");
}

}  // namespace infertune
