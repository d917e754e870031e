#include "reports/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "reports/html/html_page.h"
#include "reports/html/html_table.h"
#include "reports/html/html_text.h"
#include "reports/report/report_charts.h"
#include "reports/report/report_tables.h"
#include "sweeps/store/metric_names.h"

namespace infertune {
namespace {

std::string definition(std::string_view term, std::string_view value) {
  if (value.empty()) return "";
  return fmt::format("<dt>{}</dt><dd>{}</dd>", html_escape(term), html_escape(value));
}

// The features a person compares between hosts (vector widths and dot-product instructions).
std::string isa_summary(const std::string& features) {
  static const std::regex interesting("^(avx.*|fma|f16c|amx.*|sse4_2|.*vnni.*|.*bf16.*|.*fp16.*)$");
  std::string out;
  size_t start = 0;
  while (start <= features.size()) {
    const size_t end = std::min(features.find(' ', start), features.size());
    const std::string f = features.substr(start, end - start);
    if (!f.empty() && std::regex_match(f, interesting)) out += (out.empty() ? "" : " ") + f;
    start = end + 1;
  }
  return out;
}

std::string rate_text(const nlohmann::json& probe, std::initializer_list<const char*> path, const char* unit) {
  const nlohmann::json* node = &probe;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return "";
    node = &(*node)[key];
  }
  if (!node->is_object() || !node->contains("best") || !(*node)["best"].is_number()) return "";
  return fmt::format("{:.1f} {} ({} threads)", (*node)["best"].get<double>(), unit, node->value("threads", 0));
}

std::string gpu_text(const nlohmann::json& gpus) {
  if (!gpus.is_array() || gpus.empty()) return "none";
  std::string out;
  for (const auto& g : gpus) {
    out += fmt::format("{}{} ({:.0f} GiB)", out.empty() ? "" : ", ", g.value("name", std::string("?")),
                       static_cast<double>(g.value("memory_bytes", int64_t(0))) / (1u << 30));
  }
  return out;
}

std::string host_card(const ReportSweep& s) {
  const ReportHost& h = s.host;
  std::string dl;
  dl += definition("CPU", h.cpu_model);
  dl += definition("ISA", isa_summary(h.cpu_features));
  dl += definition("cores / threads", fmt::format("{} / {}", h.physical_cores, h.hardware_threads));
  dl += definition("NUMA nodes", std::to_string(h.numa_nodes.is_array() ? h.numa_nodes.size() : 0));
  dl += definition("memory", fmt::format("{:.1f} GiB", static_cast<double>(h.memory_bytes) / (1u << 30)));
  dl += definition("read bandwidth", rate_text(h.probe, {"bandwidth", "read_all_cores"}, "GB/s"));
  dl += definition("one core reads", rate_text(h.probe, {"bandwidth", "read_one_core"}, "GB/s"));
  dl += definition("f32 FMA peak", rate_text(h.probe, {"compute", "f32_fma", "all_cores"}, "GFLOP/s"));
  dl += definition("int8 dot peak", rate_text(h.probe, {"compute", "int8_dot", "all_cores"}, "GOP/s"));
  dl += definition("GPUs", gpu_text(h.gpus));
  dl += definition("fingerprint", h.fingerprint);
  const ReportBuild& b = s.build;
  std::string build;
  build += definition("version", b.version);
  build += definition("commit", b.git_commit);
  build += definition("compiler", b.compiler + " " + b.build_type);
  build += definition("backends", b.backends);
  build += definition("kernels", b.kernel_variants);
  build += definition("flags", b.flags);
  const size_t ok = s.count("ok");
  std::string sweep;
  sweep += definition("status", std::string(to_string(s.sweep.status)));
  sweep += definition("started", s.sweep.started_at);
  sweep += definition("finished", s.sweep.finished_at);
  sweep += definition("trials", fmt::format("{} ok, {} not ok, {} in all", ok, s.trials.size() - ok, s.trials.size()));
  return fmt::format(R"(<div class="card"><h3>{}</h3><dl>{}</dl><h3>Build</h3><dl>{}</dl><h3>Sweep</h3><dl>{}</dl>)"
                     R"(<details><summary>spec</summary><pre class="cmd">{}</pre></details></div>)",
                     html_escape(s.name), dl, build, sweep, html_escape(s.sweep.spec));
}

std::string noise_badge(const ScenarioRecommendation& sc) {
  if (!sc.margin) return R"(<span class="badge warn">no runner-up</span>)";
  if (!sc.margin->within_noise) return R"(<span class="badge warn">one repetition: noise unknown</span>)";
  return *sc.margin->within_noise ? R"(<span class="badge warn">within noise</span>)"
                                  : R"(<span class="badge ok">outside noise</span>)";
}

std::string scenario_card(const ReportSweep& s, const ScenarioRecommendation& sc, bool show_sweep) {
  const std::string heading = fmt::format("{}{}", to_string(sc.scenario), show_sweep ? " — " + s.name : std::string());
  if (!sc.winner) {
    return fmt::format(
        R"(<div class="card"><h3>{}</h3><p><span class="badge bad">no recommendation</span> {}</p></div>)",
        html_escape(heading), html_escape(sc.no_winner_reason));
  }
  const Candidate& c = s.recommendation->candidates[*sc.winner];
  std::string score;
  if (sc.winner_score) {
    score = fmt::format("{:.4g} {}", sc.winner_score->value, sc.score_unit);
    if (sc.winner_score->ci95_half_width) score += fmt::format(" ± {:.3g}", *sc.winner_score->ci95_half_width);
  }
  std::string notes;
  for (const std::string& n : sc.commands.notes) notes += "<li>" + html_escape(n) + "</li>";
  return fmt::format(R"(<div class="card"><h3>{}</h3><p class="score">{}</p><p>{}</p><p>{} {}</p>)"
                     R"(<p class="note">{}</p><pre class="cmd">{}</pre><pre class="cmd">{}</pre>{}</div>)",
                     html_escape(heading), html_escape(score), html_escape(candidate_label(c)), noise_badge(sc),
                     sc.margin ? html_escape(sc.margin->text()) : "", html_escape(sc.rule),
                     html_escape(sc.commands.infertune), html_escape(sc.commands.llama_cpp),
                     notes.empty() ? "" : "<ul class=\"note\">" + notes + "</ul>");
}

std::string figures(const std::vector<FigureChart>& charts) {
  std::string out = R"(<div class="charts">)";
  for (const FigureChart& f : charts) {
    out += "<figure>" + render_svg_chart(f.chart) + "<figcaption>" + html_escape(f.caption) + "</figcaption></figure>";
  }
  return out + "</div>";
}

std::string roofline_bars(const std::vector<ReportSweep>& sweeps) {
  struct Bar {
    std::string label;
    double percent;
  };
  std::vector<Bar> bars;
  for (const ReportSweep& s : sweeps) {
    for (const ReportTrial& t : s.trials) {
      const SampleSummary* pct = t.ok() ? t.metric(metric::kBandwidthPercent) : nullptr;
      if (!pct) continue;
      bars.push_back(
          {fmt::format("{}{} (trial {})", sweeps.size() > 1 ? s.name + ": " : "", t.key.label, t.id), pct->mean});
    }
  }
  if (bars.empty()) return R"(<p class="note">No trial generated tokens, so none has a bandwidth figure.</p>)";
  std::ranges::stable_sort(bars, [](const Bar& a, const Bar& b) { return a.percent > b.percent; });
  std::string out;
  if (bars.front().percent > 100) {
    // The engine cannot read faster than the memory; the host's figure was measured low (on a busy machine).
    out += fmt::format(
        R"(<p class="note"><span class="badge warn">bandwidth figure too low</span> {} of these trials read weights faster )"
        R"(than the host's measured bandwidth, so that figure is below what the memory delivers (the probe ran while )"
        R"(the machine was busy?). Measure it again on a quiet machine: <code>infertune probe --refresh</code>.</p>)",
        std::ranges::count_if(bars, [](const Bar& b) { return b.percent > 100; }));
  }
  out += R"(<div class="bars">)";
  for (const Bar& b : bars) {
    out += fmt::format(
        R"(<div class="bar-row"><span class="label" title="{0}">{0}</span><span class="track"><span class="fill{3}" style="width:{1:.1f}%;display:block"></span></span><span class="value">{2:.1f}%</span></div>)",
        html_escape(b.label), std::clamp(b.percent, 0.0, 100.0), b.percent, b.percent > 100 ? " over" : "");
  }
  return out + "</div>";
}

const NamedTable* find_table(const std::vector<NamedTable>& tables, std::string_view id) {
  const auto it = std::ranges::find_if(tables, [&](const NamedTable& t) { return t.id == id; });
  return it == tables.end() ? nullptr : &*it;
}

std::string section(std::string_view id, std::string_view title, std::string_view note, std::string_view content) {
  return fmt::format(R"(<section id="{}"><h2>{}</h2>{}{}</section>)", id, html_escape(title),
                     note.empty() ? "" : "<p class=\"note\">" + html_escape(note) + "</p>", content);
}

std::string recommendations_html(const std::vector<ReportSweep>& sweeps) {
  std::string cards;
  for (const ReportSweep& s : sweeps) {
    if (!s.recommendation) {
      cards += fmt::format(
          R"(<div class="card"><h3>{}</h3><p><span class="badge bad">no recommendation</span> {}</p></div>)",
          html_escape(s.name), html_escape(s.recommendation_error));
      continue;
    }
    for (const ScenarioRecommendation& sc : s.recommendation->scenarios)
      cards += scenario_card(s, sc, sweeps.size() > 1);
  }
  return R"(<div class="cards">)" + cards + "</div>";
}

}  // namespace

std::string html_report(const HtmlReportInput& input) {
  const std::vector<ReportSweep>& sweeps = input.sweeps;
  const std::vector<NamedTable> tables = report_tables(sweeps);
  size_t n_trials = 0, n_failed = 0;
  for (const ReportSweep& s : sweeps) {
    n_trials += s.trials.size();
    n_failed += s.trials.size() - s.count("ok");
  }
  std::string names;
  for (const ReportSweep& s : sweeps) names += (names.empty() ? "" : "; ") + s.name;

  std::string body = fmt::format(
      R"(<header class="page"><h1>infertune report</h1><p>{} — {} trials, {} not ok — generated {}</p></header>)",
      html_escape(names), n_trials, n_failed, html_escape(input.generated_at));
  body +=
      R"(<nav><a href="#hosts">Host and build</a><a href="#recommendations">Recommendations</a>)"
      R"(<a href="#pareto-front">Pareto front</a><a href="#dimensions">Tokens/s by setting</a><a href="#memory">Memory</a>)"
      R"(<a href="#quality">Speed and quality</a>)"
      R"(<a href="#roofline">Bandwidth</a>)";
  if (!input.history_html.empty()) body += R"(<a href="#history">History</a>)";
  if (sweeps.size() > 1) body += R"(<a href="#side-by-side">Side by side</a>)";
  body += R"(<a href="#failed-trials">Failed trials</a><a href="#all-trials">All trials</a></nav><main>)";

  std::string hosts = R"(<div class="cards">)";
  for (const ReportSweep& s : sweeps) hosts += host_card(s);
  body += section("hosts", "Host and build", "", hosts + "</div>");

  body += section("recommendations", "Recommendations",
                  "The configuration to run for each scenario, with its score's 95% interval and its margin over the "
                  "runner-up. Within noise means the two intervals overlap: either is a sound choice.",
                  recommendations_html(sweeps));

  std::string pareto = figures(pareto_charts(sweeps));
  if (const NamedTable* t = find_table(tables, "pareto"))
    pareto += html_table(t->table, {"pareto", true, false, false});
  body += section("pareto-front", "Pareto front", "", pareto);

  const std::vector<FigureChart> dims = dimension_charts(sweeps);
  body += section(
      "dimensions", "Tokens/s against each swept setting", "",
      dims.empty() ? R"(<p class="note">No setting took more than one value among the ok trials.</p>)" : figures(dims));

  const std::vector<FigureChart> memory = memory_charts(sweeps);
  body += section("memory", "Predicted and measured memory", "",
                  memory.empty() ? R"(<p class="note">No trial has both figures.</p>)" : figures(memory));

  const std::vector<FigureChart> quality = quality_charts(sweeps);
  std::string quality_html = quality.empty() ? "" : figures(quality);
  for (const std::string& note : quality_notes(sweeps))
    quality_html += R"(<p class="note">)" + html_escape(note) + "</p>";
  if (quality_html.empty()) {
    quality_html = R"(<p class="note">No quantization variant of a base model has quality figures (a sweep over )"
                   R"(--base-model and --quant-types measures them).</p>)";
  }
  body += section("quality", "Speed against quality",
                  "Each quantization variant's perplexity and KL divergence against the sweep's base model, next to "
                  "its throughput.",
                  quality_html);

  body += section("roofline", "Memory bandwidth reached (roofline %)",
                  "Bytes of weights (and KV cache) read per generated token x tokens/s, as a share of the host's "
                  "measured read bandwidth. Generation is memory-bound: near 100% the engine cannot go faster on "
                  "this host.",
                  roofline_bars(sweeps));

  if (!input.history_html.empty()) {
    body += section("history", "History across builds",
                    "The same configuration measured by sweeps of different builds, in time order; dashed red lines "
                    "mark change points (a shift larger than the noise and the minimum change).",
                    input.history_html);
  }
  if (const NamedTable* t = find_table(tables, "comparison")) {
    body += section("side-by-side", "Side by side",
                    "Each configuration's main metric (aggregate tokens/s for batched workloads, else tg, else pp) "
                    "in every sweep, and its ratio to the first sweep.",
                    html_table(t->table, {"comparison", true, true, false}));
  }
  const NamedTable* failed = find_table(tables, "failed");
  body += section("failed-trials", "Failed trials", "",
                  failed ? html_table(failed->table, {"failed", true, false, true})
                         : R"(<p class="note"><span class="badge ok">none</span> every trial finished ok.</p>)");
  if (const NamedTable* t = find_table(tables, "trials")) {
    body += section("all-trials", "All trials",
                    "Click a column to sort; type to filter. Throughputs are means (± the 95% interval's half-width), "
                    "latencies medians, memory in MiB.",
                    html_table(t->table, {"trials", true, true, false}));
  }
  body += "</main>";
  return html_page("infertune report — " + names, body);
}

}  // namespace infertune
