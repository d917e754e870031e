#include "reports/compare/abba_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "sweeps/run/worker_process.h"

namespace infertune {
namespace {

using Clock = std::chrono::steady_clock;

// The fields of a bench row that say what was run (llama-bench's names), with the flag a label shows them
// by. Everything else (timings, build, CPU names, test_time) differs between the sides or between runs. Not
// --numa and --prio: one value per run, the same flags go to both sides, and llama-bench does not print them.
struct ParameterField {
  const char* field;
  const char* flag;
};
constexpr std::array kParameterFields{
    ParameterField{"model_filename", "-m"},
    ParameterField{"n_prompt", "-p"},
    ParameterField{"n_gen", "-n"},
    ParameterField{"n_depth", "-d"},
    ParameterField{"n_batch", "-b"},
    ParameterField{"n_ubatch", "-ub"},
    ParameterField{"n_threads", "-t"},
    ParameterField{"cpu_mask", "-C"},
    ParameterField{"cpu_strict", "--cpu-strict"},
    ParameterField{"poll", "--poll"},
    ParameterField{"type_k", "-ctk"},
    ParameterField{"type_v", "-ctv"},
    ParameterField{"n_gpu_layers", "-ngl"},
    ParameterField{"flash_attn", "-fa"},
    ParameterField{"use_mmap", "-mmp"},
};

// llama-bench replaced use_mmap (-mmp) with load_mode (-lm): a row with only load_mode gets the use_mmap it
// implies, so that it matches bench's row (which has both) and an older llama-bench's.
void add_use_mmap_from_load_mode(const nlohmann::json& row, nlohmann::json& parameters) {
  if (parameters.contains("use_mmap")) return;
  auto mode = row.find("load_mode");
  if (mode == row.end() || !mode->is_string()) return;
  const std::string text = mode->get<std::string>();
  parameters["use_mmap"] = text == "auto" || text == "mmap" || text == "mmap+mlock";
}

int64_t int_field(const nlohmann::json& row, const char* name) {
  auto it = row.find(name);
  return it != row.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string test_name_of(const nlohmann::json& row) {
  if (auto it = row.find("test"); it != row.end() && it->is_string()) return it->get<std::string>();
  const int64_t p = int_field(row, "n_prompt");
  const int64_t n = int_field(row, "n_gen");
  if (p > 0 && n > 0) return fmt::format("pp{}+tg{}", p, n);
  return p > 0 ? fmt::format("pp{}", p) : fmt::format("tg{}", n);
}

std::string text_of(const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// "model.gguf tg16": a bench row's (or its parameters') model file name and test, for people.
std::string row_label(const nlohmann::json& row) {
  const std::string model = row.contains("model_filename") ? text_of(row["model_filename"]) : "";
  return fmt::format("{} {}", std::filesystem::path(model).filename().string(), test_name_of(row));
}

// A test on one side only, where the other side ran the same model and test under other parameters (a flag one
// binary defaults differently, such as llama-bench's -ngl -1 against bench's 0): say which, so the user can pass
// it to both.
void note_parameter_mismatches(const std::map<std::string, nlohmann::json>& baseline,
                               const std::map<std::string, nlohmann::json>& candidate,
                               std::vector<std::string>& notes) {
  constexpr std::array kSameTest = {"model_filename", "n_prompt", "n_gen", "n_depth"};
  for (const auto& [base_key, base] : baseline) {
    if (candidate.contains(base_key)) continue;
    for (const auto& [cand_key, cand] : candidate) {
      if (baseline.contains(cand_key)) continue;
      if (!std::ranges::all_of(kSameTest, [&](const char* f) {
            return base.value(f, nlohmann::json()) == cand.value(f, nlohmann::json());
          })) {
        continue;
      }
      std::string differences;
      for (const ParameterField& f : kParameterFields) {
        const nlohmann::json a = base.value(f.field, nlohmann::json()), b = cand.value(f.field, nlohmann::json());
        if (a != b)
          differences +=
              fmt::format("{}{} ({}) {} vs {}", differences.empty() ? "" : ", ", f.field, f.flag, a.dump(), b.dump());
      }
      notes.push_back(
          fmt::format("{} ran with other parameters on each side ({}: baseline vs candidate): give "
                      "those flags to both to compare it",
                      row_label(base), differences));
      break;
    }
  }
}

// Labels: model file, test, and every parameter whose value differs between the configurations.
void label_configurations(std::vector<MeasuredConfiguration>& configurations,
                          const std::map<std::string, nlohmann::json>& parameters) {
  std::map<std::string, std::set<std::string>> values;
  for (const auto& [key, p] : parameters) {
    for (const ParameterField& f : kParameterFields)
      values[f.field].insert(p.contains(f.field) ? p[f.field].dump() : "");
  }
  for (MeasuredConfiguration& c : configurations) {
    const nlohmann::json& p = parameters.at(c.key);
    std::string label = c.label;
    for (const ParameterField& f : kParameterFields) {
      if (std::string_view(f.field) == "model_filename" || std::string_view(f.field) == "n_prompt" ||
          std::string_view(f.field) == "n_gen" || values[f.field].size() < 2 || !p.contains(f.field)) {
        continue;
      }
      label += fmt::format(" {} {}", f.flag, text_of(p[f.field]));
    }
    c.label = label;
  }
}

struct BlockOutput {
  std::vector<BenchRow> rows;
};

std::string block_name(const BenchBinary& binary, int side_block, int block, int blocks) {
  return fmt::format("{} binary {} (block {} of {}, its {} run)", binary.name, binary.path, block + 1, blocks,
                     side_block + 1);
}

std::string stderr_text(const std::vector<std::string>& lines) {
  std::string text;
  const size_t first = lines.size() > 6 ? lines.size() - 6 : 0;
  for (size_t i = first; i < lines.size(); ++i) text += (text.empty() ? "" : " | ") + lines[i];
  return text.empty() ? "(no stderr)" : text;
}

Result<BlockOutput> run_block(const BenchBinary& binary, const AbbaPlan& plan, const std::string& where) {
  WorkerCommand command;
  command.executable = binary.path;
  if (!binary.llama_bench) command.arguments.push_back("bench");
  command.arguments.insert(command.arguments.end(), plan.bench_arguments.begin(), plan.bench_arguments.end());
  command.arguments.insert(command.arguments.end(), {"-o", "jsonl"});
  command.extra_environment = binary.environment;
  auto process = WorkerProcess::start(command);
  if (!process) return fail("{}: cannot start: {}", where, process.error().message);
  process->close_input();
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(plan.block_timeout_s * 1000));
  BlockOutput output;
  for (int line_number = 1;; ++line_number) {
    WorkerProcess::Line line = process->next_line(deadline);
    if (line.state == WorkerProcess::LineState::closed) break;
    if (line.state == WorkerProcess::LineState::deadline) {
      process->kill_group();
      process->finish(std::chrono::milliseconds(0));
      return fail("{}: no result within {} s (--block-timeout); killed", where, plan.block_timeout_s);
    }
    if (line.state == WorkerProcess::LineState::too_long) {
      process->kill_group();
      process->finish(std::chrono::milliseconds(0));
      return fail("{}: stdout line {} is too long to be bench's jsonl", where, line_number);
    }
    if (line.text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto row = parse_bench_row(line.text);
    if (!row) {
      process->kill_group();
      const WorkerExit exit = process->finish(std::chrono::milliseconds(0));
      (void)exit;
      return fail("{}: stdout line {} is not a bench jsonl result ({}): '{}'", where, line_number, row.error().message,
                  line.text.substr(0, 120));
    }
    output.rows.push_back(std::move(*row));
  }
  const WorkerExit exit = process->finish(std::chrono::seconds(30));
  if (!exit.exited || exit.exit_code != 0) {
    return fail("{}: {}; stderr: {}", where, exit.describe(), stderr_text(process->stderr_tail()));
  }
  if (output.rows.empty())
    return fail("{}: printed no result (stderr: {})", where, stderr_text(process->stderr_tail()));
  return output;
}

// Adds one block's rows to its side: block `index` of that side. Every block must run the same tests.
Status add_block(MeasuredSide& side, std::map<std::string, nlohmann::json>& parameters, const BlockOutput& block,
                 int index, const std::string& where) {
  std::map<std::string, std::vector<const BenchRow*>> rows_by_key;
  for (const BenchRow& row : block.rows) rows_by_key[row.key].push_back(&row);
  if (index > 0 && rows_by_key.size() != side.configurations.size()) {
    return fail("{}: ran {} tests, its first block ran {}", where, rows_by_key.size(), side.configurations.size());
  }
  for (const auto& [key, rows] : rows_by_key) {
    auto it = std::find_if(side.configurations.begin(), side.configurations.end(),
                           [&](const MeasuredConfiguration& c) { return c.key == key; });
    if (it == side.configurations.end()) {
      if (index > 0) return fail("{}: ran {}, which its first block did not", where, rows.front()->label);
      side.configurations.push_back({key, rows.front()->label, true, "", {}});
      parameters[key] = rows.front()->parameters;
      it = std::prev(side.configurations.end());
    }
    std::vector<double> values;
    for (const BenchRow* row : rows) {
      if (!row->error.empty() && it->ok) {
        it->ok = false;
        it->failure = fmt::format("bench error in its block {}: {}", index + 1, row->error);
      }
      values.insert(values.end(), row->samples_ts.begin(), row->samples_ts.end());
    }
    if (!values.empty()) it->groups[rows.front()->metric].push_back(std::move(values));
  }
  return {};
}

void print_progress(const BenchBinary& binary, int block, int blocks, double block_s, Clock::time_point started) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  const double eta = elapsed / (block + 1) * (blocks - block - 1);
  const bool terminal = isatty(fileno(stderr)) != 0;
  fmt::print(stderr, "{}compare: block {}/{} {} {:.1f} s, ETA {:.0f} s{}", terminal ? "\r\033[K" : "", block + 1,
             blocks, binary.name, block_s, eta, terminal && block + 1 < blocks ? "" : "\n");
  std::fflush(stderr);
}

}  // namespace

bool abba_baseline_runs(int block) {
  const int position = block % 4;
  return position == 0 || position == 3;
}

Result<std::string> resolve_executable(const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (text.find('/') != std::string::npos) {
    const fs::path path = fs::absolute(text, error);
    if (!fs::is_regular_file(path, error) || access(path.c_str(), X_OK) != 0) {
      return fail("--bin {}: not an executable file", text);
    }
    return path.string();
  }
  const char* search = std::getenv("PATH");
  std::string_view dirs = search != nullptr ? search : "";
  while (!dirs.empty()) {
    const size_t colon = std::min(dirs.find(':'), dirs.size());
    const fs::path candidate = fs::path(std::string(dirs.substr(0, colon))) / text;
    if (fs::is_regular_file(candidate, error) && access(candidate.c_str(), X_OK) == 0) {
      return fs::absolute(candidate, error).string();
    }
    dirs = colon < dirs.size() ? dirs.substr(colon + 1) : std::string_view();
  }
  return fail("--bin {}: no such executable in PATH", text);
}

Result<BenchRow> parse_bench_row(const std::string& line) {
  const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
  if (row.is_discarded() || !row.is_object()) return fail("not a JSON object");
  auto samples = row.find("samples_ts");
  if (samples == row.end() || !samples->is_array()) return fail("no samples_ts array");
  BenchRow result;
  for (const nlohmann::json& v : *samples) {
    if (!v.is_number()) return fail("samples_ts holds {}", v.dump());
    result.samples_ts.push_back(v.get<double>());
  }
  if (!row.contains("n_prompt") || !row.contains("n_gen")) return fail("no n_prompt / n_gen");
  for (const ParameterField& f : kParameterFields) {
    if (auto it = row.find(f.field); it != row.end()) result.parameters[f.field] = *it;
  }
  add_use_mmap_from_load_mode(row, result.parameters);
  result.key = result.parameters.dump();
  const int64_t p = int_field(row, "n_prompt");
  const int64_t n = int_field(row, "n_gen");
  result.metric = p > 0 && n > 0 ? "pg_tps" : p > 0 ? "pp_tps" : "tg_tps";
  result.label = row_label(row);
  if (auto it = row.find("error"); it != row.end() && !it->is_null()) {
    result.error = text_of(*it);
    if (result.error.empty()) result.error = "(no message)";
  }
  if (result.error.empty() && result.samples_ts.empty()) return fail("no samples and no error");
  return result;
}

Result<AbbaResult> run_abba(const BenchBinary& baseline, const BenchBinary& candidate, const AbbaPlan& plan) {
  AbbaResult result;
  result.baseline.name = baseline.name;
  result.candidate.name = candidate.name;
  std::map<std::string, nlohmann::json> base_parameters, cand_parameters;
  int runs[2] = {0, 0};
  const auto started = Clock::now();
  for (int block = 0; block < plan.blocks; ++block) {
    const bool is_base = abba_baseline_runs(block);
    const BenchBinary& binary = is_base ? baseline : candidate;
    int& side_block = runs[is_base ? 0 : 1];
    const std::string where = block_name(binary, side_block, block, plan.blocks);
    const auto block_started = Clock::now();
    auto output = run_block(binary, plan, where);
    if (!output) return output.error();
    MeasuredSide& side = is_base ? result.baseline : result.candidate;
    if (Status s = add_block(side, is_base ? base_parameters : cand_parameters, *output, side_block, where); !s) {
      return s.error();
    }
    ++side_block;
    if (plan.progress) {
      print_progress(binary, block, plan.blocks, std::chrono::duration<double>(Clock::now() - block_started).count(),
                     started);
    }
  }
  label_configurations(result.baseline.configurations, base_parameters);
  label_configurations(result.candidate.configurations, cand_parameters);
  note_parameter_mismatches(base_parameters, cand_parameters, result.baseline.notes);
  auto describe = [&](const BenchBinary& b, int n) {
    std::string env;
    for (const std::string& e : b.environment) env += e + " ";
    return fmt::format("{}{}{} ({} blocks)", env, b.path, b.llama_bench ? "" : " bench", n);
  };
  result.baseline.description = describe(baseline, runs[0]);
  result.candidate.description = describe(candidate, runs[1]);
  return result;
}

}  // namespace infertune
