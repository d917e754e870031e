// format_recommendation_text: the summary table, each scenario's rule, runner-up, margin and command lines,
// then the Pareto front.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "engine/settings/command_line.h"
#include "engine/settings/settings_table.h"
#include "sweeps/recommend/candidates.h"
#include "sweeps/recommend/recommend.h"
#include "sweeps/spec/config_fields.h"

namespace infertune {
namespace {

using Row = std::vector<std::string>;

// Columns padded to their widest cell, two spaces apart.
std::string aligned(const std::vector<Row>& rows, const std::string& indent) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const Row& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

using Shown = std::pair<std::string, std::string>;  // flag, value

// The candidate's model ("" flag) and every setting the sweep takes, as its short flag and canonical value,
// in the settings table's order; a value that means "not set" (-C 0x0, --numa none, -ngl 0, -np 1) is "", so
// that it is left out of the text as llama.cpp's own command lines leave it out.
std::vector<Shown> shown_settings(const Candidate& c) {
  std::string model = std::filesystem::path(c.model_path).filename().string();
  if (const std::string quant = config_text(c.config, "quant"); !quant.empty()) model += " (" + quant + ")";
  std::vector<Shown> shown{{"", model}};
  const EngineSettings settings = read_config_fields_or_defaults(c.config);
  for (const Setting* s : settings_of(Command::sweep)) {
    const std::string value = s->read(settings);
    shown.emplace_back(s->shown_flag(), is_unset_value(*s, value) ? "" : value);
  }
  return shown;
}

std::string settings_text(const std::vector<Shown>& settings) {
  std::vector<std::string> parts;
  for (const auto& [flag, value] : settings) {
    if (!value.empty()) parts.push_back(flag.empty() ? value : flag + " " + value);
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

// Which settings differ between the candidates: the table shows only those, the rest is said once.
std::vector<bool> varying_settings(const std::vector<Candidate>& candidates) {
  std::vector<bool> varies;
  std::vector<Shown> first;
  for (const Candidate& c : candidates) {
    const std::vector<Shown> s = shown_settings(c);
    if (first.empty()) {
      first = s;
      varies.assign(s.size(), false);
    }
    for (size_t i = 0; i < s.size(); ++i) varies[i] = varies[i] || s[i] != first[i];
  }
  return varies;
}

std::vector<Shown> pick_settings(const Candidate& c, const std::vector<bool>& which, bool wanted) {
  std::vector<Shown> all = shown_settings(c), picked;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < which.size() && which[i] == wanted) picked.push_back(all[i]);
  }
  return picked;
}

// What tells the candidate apart from the others (everything when there is only one).
std::string config_summary(const RecommendationReport& r, const Candidate& c) {
  const std::vector<bool> varies = varying_settings(r.candidates);
  if (std::ranges::none_of(varies, [](bool v) { return v; })) return settings_text(shown_settings(c));
  return settings_text(pick_settings(c, varies, true));
}

std::string common_settings_line(const RecommendationReport& r) {
  const std::vector<bool> varies = varying_settings(r.candidates);
  if (r.candidates.size() < 2 || std::ranges::none_of(varies, [](bool v) { return v; })) return "";
  return "every configuration: " + settings_text(pick_settings(r.candidates.front(), varies, false)) + "\n";
}

std::string number(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : "-"; }

std::string with_interval(const std::optional<Estimate>& e) {
  if (!e) return "-";
  if (!e->ci95_half_width || e->value == 0) return fmt::format("{:.2f}", e->value);
  return fmt::format("{:.2f} ±{:.1f}%", e->value, *e->ci95_half_width / std::abs(e->value) * 100);
}

std::string memory(const Candidate& c) { return c.peak_rss_bytes ? human_bytes(*c.peak_rss_bytes) : "-"; }

std::string quality_increase(const Candidate& c) {
  const auto increase = c.quality ? c.quality->ppl_increase_pct() : std::nullopt;
  return increase ? fmt::format("{:+.2f}%", *increase) : "-";
}

std::string quality_kld(const Candidate& c) {
  return c.quality && c.quality->kld_mean ? fmt::format("{:.5f}", *c.quality->kld_mean) : "-";
}

Row metric_cells(const RecommendationReport& r, const Candidate& c) {
  Row cells{with_interval(c.throughput_tps),
            with_interval(c.latency_ms),
            number(c.ttft_ms),
            number(c.itl_p50_ms),
            number(c.itl_p95_ms),
            memory(c)};
  if (r.has_quality()) {
    cells.push_back(quality_increase(c));
    cells.push_back(quality_kld(c));
  }
  return cells;
}

Row metric_header(const RecommendationReport& r) {
  Row header{"tokens/s", "reply ms", "TTFT ms", "ITL p50", "ITL p95", "peak RSS"};
  if (r.has_quality()) {
    header.push_back("PPL vs base");
    header.push_back("KLD");
  }
  return header;
}

std::string heading(const RecommendationReport& r) {
  const size_t excluded = static_cast<size_t>(
      std::ranges::count_if(r.candidates, [](const Candidate& c) { return !c.excluded_reason.empty(); }));
  std::string text = fmt::format("Recommendations for sweep {}: {} trials ({} ok), {} configurations", r.sweep_id,
                                 r.n_trials, r.n_ok, r.candidates.size());
  if (excluded > 0) text += fmt::format(", {} excluded by the constraints", excluded);
  std::vector<std::string> constraints;
  if (r.options.max_mem_bytes) constraints.push_back("--max-mem " + human_bytes(int64_t(*r.options.max_mem_bytes)));
  if (const std::string budget = quality_budget_text(r.options); !budget.empty()) constraints.push_back(budget);
  if (!constraints.empty()) text += fmt::format(" ({})", fmt::join(constraints, ", "));
  return text + "\n";
}

std::string summary_table(const RecommendationReport& r) {
  std::vector<Row> rows;
  Row header{"scenario", "config"};
  const Row metric_names = metric_header(r);
  header.insert(header.end(), metric_names.begin(), metric_names.end());
  header.push_back("margin");
  rows.push_back(header);
  for (const ScenarioRecommendation& s : r.scenarios) {
    if (!s.winner) {
      rows.push_back({std::string(to_string(s.scenario)), "none: " + s.no_winner_reason});
      continue;
    }
    const Candidate& c = r.candidates[*s.winner];
    Row row{std::string(to_string(s.scenario)), config_summary(r, c)};
    const Row metrics = metric_cells(r, c);
    row.insert(row.end(), metrics.begin(), metrics.end());
    row.push_back(s.margin ? s.margin->text() : "no runner-up");
    rows.push_back(row);
  }
  return aligned(rows, "");
}

// The context the command lines carry and its memory: "-c 4096 (the trials' -c 128, raised ...): 1.2 GiB
// when full (weights ..., KV cache ..., compute ...)".
std::string command_memory_text(const Candidate& c) {
  std::string text = fmt::format("-c {}", c.command_ctx);
  if (c.command_ctx > c.n_ctx())
    text += fmt::format(" (the trials' -c {}, raised to a context to serve; --min-ctx sets it)", c.n_ctx());
  if (!c.command_memory) return text + ": " + c.command_memory_note;
  const MemoryPrediction& m = *c.command_memory;
  return text + fmt::format(": {} when full (weights {}, KV cache {}, compute {}; predicted)",
                            human_bytes(int64_t(m.total())), human_bytes(int64_t(m.weights)),
                            human_bytes(int64_t(m.kv)), human_bytes(int64_t(m.compute)));
}

std::string scenario_details(const RecommendationReport& r, const ScenarioRecommendation& s) {
  std::string text = fmt::format("\n{}: {}\n", to_string(s.scenario), s.rule);
  if (!s.winner) return text + "  no recommendation: " + s.no_winner_reason + "\n";
  std::vector<Row> rows;
  auto add = [&](const char* role, size_t index, const std::optional<Estimate>& score) {
    rows.push_back({role, fmt::format("#{}", index), config_summary(r, r.candidates[index]),
                    fmt::format("score {} {}", with_interval(score), s.score_unit)});
  };
  add("winner", *s.winner, s.winner_score);
  if (s.runner_up) add("runner-up", *s.runner_up, s.runner_up_score);
  text += aligned(rows, "  ");
  text +=
      "  " + (s.margin ? s.margin->text() : std::string("no runner-up: the only configuration that qualifies")) + "\n";
  text += "  " + command_memory_text(r.candidates[*s.winner]) + "\n";
  if (r.measured_by_llama_cpp) {
    text += "  " + s.commands.llama_cpp + "\n";
    text += "  " + s.commands.infertune + "   (the same configuration on infertune, not measured here)\n";
  } else {
    text += "  " + s.commands.infertune + "\n";
    text += "  " + s.commands.llama_cpp + "\n";
  }
  for (const std::string& note : s.commands.notes) text += "  note: " + note + "\n";
  return text;
}

std::string pareto_table(const RecommendationReport& r) {
  const char* objectives = r.has_quality() ? "throughput up, reply time down, peak RSS down, KLD down"
                                           : "throughput up, reply time down, peak RSS down";
  std::string text = fmt::format("\nPareto front ({}): {} configuration{}\n", objectives, r.pareto_front.size(),
                                 r.pareto_front.size() == 1 ? "" : "s");
  const size_t missing = static_cast<size_t>(std::ranges::count_if(r.candidates, [](const Candidate& c) {
    return c.excluded_reason.empty() && !(c.throughput_tps && c.latency_ms && c.peak_rss_bytes);
  }));
  if (missing > 0)
    text += fmt::format("  ({} eligible configurations lack a throughput, reply time or peak RSS and are left out)\n",
                        missing);
  if (r.pareto_front.empty()) return text;
  std::vector<Row> rows;
  Row header{"#", "config"};
  const Row metric_names = metric_header(r);
  header.insert(header.end(), metric_names.begin(), metric_names.end());
  rows.push_back(header);
  for (size_t i : r.pareto_front) {
    Row row{fmt::format("#{}", i), config_summary(r, r.candidates[i])};
    const Row metrics = metric_cells(r, r.candidates[i]);
    row.insert(row.end(), metrics.begin(), metrics.end());
    rows.push_back(row);
  }
  return text + aligned(rows, "  ");
}

// Every configuration a constraint excluded, with its reason.
std::string excluded_list(const RecommendationReport& r) {
  std::vector<Row> rows;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const Candidate& c = r.candidates[i];
    if (!c.excluded_reason.empty()) rows.push_back({fmt::format("#{}", i), config_summary(r, c), c.excluded_reason});
  }
  if (rows.empty()) return "";
  return fmt::format("\nExcluded ({}):\n", rows.size()) + aligned(rows, "  ");
}

// Each variant's quality against the sweep's base model, or why it has none.
std::string quality_table(const RecommendationReport& r) {
  if (!r.has_quality()) return "";
  std::vector<Row> rows{{"#", "config", "PPL", "base PPL", "PPL vs base", "mean KLD", "KLD p99", "same top", "on"}};
  std::vector<std::string> without;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const Candidate& c = r.candidates[i];
    if (!c.quality) continue;
    const VariantQualityRecord& q = *c.quality;
    if (q.status != QualityStatus::measured) {
      without.push_back(fmt::format("#{} {}: {}", i, config_summary(r, c), q.reason));
      continue;
    }
    rows.push_back({fmt::format("#{}", i), config_summary(r, c),
                    q.ppl ? fmt::format("{:.4f} ±{:.4f}", *q.ppl, q.ppl_error.value_or(0)) : "-", number(q.base_ppl),
                    quality_increase(c), quality_kld(c), q.kld_p99 ? fmt::format("{:.5f}", *q.kld_p99) : "-",
                    q.same_top ? fmt::format("{:.1f}%", *q.same_top * 100) : "-",
                    fmt::format("{}, {} positions", q.corpus, q.positions.value_or(0))});
  }
  std::string text = "\nQuality against the base model (perplexity and KL divergence, once per variant):\n";
  if (rows.size() > 1) text += aligned(rows, "  ");
  for (const std::string& w : without) text += "  " + w + "\n";
  return text;
}

std::string noise_rule() {
  return "Scores are means over the measured repetitions; ± is the 95% confidence interval (Student t). A margin is "
         "within noise when the winner's and the runner-up's intervals overlap.\n";
}

}  // namespace

std::string format_recommendation_text(const RecommendationReport& r) {
  std::string text = heading(r);
  for (const std::string& note : r.quality_notes) text += "quality: " + note + "\n";
  if (!r.no_candidates_reason.empty())
    return text + "No recommendation: " + r.no_candidates_reason + "\n" + excluded_list(r) + quality_table(r);
  if (r.throughput_basis) text += "throughput basis: " + r.throughput_basis->description + "\n";
  if (r.latency_basis) text += "latency basis (reply time): " + r.latency_basis->description + "\n";
  text += common_settings_line(r);
  text += noise_rule() + "\n";
  text += summary_table(r);
  text += excluded_list(r);
  text += quality_table(r);
  for (const ScenarioRecommendation& s : r.scenarios) text += scenario_details(r, s);
  return text + pareto_table(r);
}

}  // namespace infertune
