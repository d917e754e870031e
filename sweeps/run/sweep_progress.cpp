#include "sweeps/run/sweep_progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <set>
#include <string_view>
#include <vector>

#include "engine/settings/settings_table.h"

namespace infertune {

void TrialTimes::add(const TrialCost& trial, double seconds, int runs) {
  if (!std::isfinite(seconds) || seconds < 0) return;
  const double n = std::max(runs, 1);
  WorkloadTimes& w = by_workload_[trial.workload];
  Mean& per_run = w.per_run_by_threads[trial.threads];
  per_run.sum += seconds / n;
  ++per_run.count;
  w.runs.sum += n;
  ++w.runs.count;
  w.weight_bytes.sum += double(trial.weight_bytes);
  ++w.weight_bytes.count;
  total_s_ += seconds;
  ++count_;
}

// Seconds per run of the workload at `threads`: measured, or the most measured thread count's times the ratio
// between the two counts that the other workloads measured at both (their geometric mean; none: 1).
std::optional<double> TrialTimes::per_run_at(const WorkloadTimes& w, int threads) const {
  if (auto it = w.per_run_by_threads.find(threads); it != w.per_run_by_threads.end()) return it->second.value();
  const auto most = std::ranges::max_element(w.per_run_by_threads, {}, [](const auto& e) { return e.second.count; });
  if (most == w.per_run_by_threads.end()) return std::nullopt;
  double log_ratio = 0;
  size_t ratios = 0;
  for (const auto& [name, other] : by_workload_) {
    const auto at = other.per_run_by_threads.find(threads);
    const auto from = other.per_run_by_threads.find(most->first);
    if (at == other.per_run_by_threads.end() || from == other.per_run_by_threads.end()) continue;
    log_ratio += std::log(at->second.value() / from->second.value());
    ++ratios;
  }
  return most->second.value() * (ratios > 0 ? std::exp(log_ratio / double(ratios)) : 1.0);
}

std::optional<double> TrialTimes::predict(const TrialCost& trial, int max_runs) const {
  if (auto it = by_workload_.find(trial.workload); it != by_workload_.end()) {
    const WorkloadTimes& w = it->second;
    const std::optional<double> per_run = per_run_at(w, trial.threads);
    double runs = w.runs.value();
    if (max_runs > 0) runs = std::min(runs, double(max_runs));
    const double mean_bytes = w.weight_bytes.value();
    const double size =
        mean_bytes > 0 && trial.weight_bytes > 0 ? 0.5 + 0.5 * double(trial.weight_bytes) / mean_bytes : 1.0;
    if (per_run) return *per_run * size * runs;
  }
  if (count_ == 0) return std::nullopt;
  return total_s_ / static_cast<double>(count_);
}

std::optional<double> TrialTimes::eta_s(const std::vector<TrialCost>& remaining, int max_runs) const {
  if (count_ == 0) return std::nullopt;
  double sum = 0;
  for (const TrialCost& t : remaining) sum += *predict(t, max_runs);
  return sum;
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

namespace {

// Config keys as bench's flags without their dashes, in the order short_config prints them: the model, its
// quant, then the sweep's settings in the settings table's order.
struct KeyFlag {
  std::string key, flag;
};

const std::vector<KeyFlag>& key_flags() {
  static const std::vector<KeyFlag> flags = [] {
    std::vector<KeyFlag> out{{"model", "m"}, {"quant", "q"}};
    for (const Setting* s : settings_of(Command::sweep)) {
      const std::string_view flag = s->shown_flag();
      out.push_back({std::string(s->config_key), std::string(flag.substr(flag.find_first_not_of('-')))});
    }
    return out;
  }();
  return flags;
}

std::string value_text(const std::string& key, const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return key == "model" ? std::filesystem::path(s).filename().string() : s;
  }
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump();
}

}  // namespace

std::vector<std::string> varying_config_keys(const SweepPlan& plan) {
  std::vector<std::string> keys;
  for (const KeyFlag& k : key_flags()) {
    std::set<std::string> values;
    for (const PlannedTrial& t : plan.trials) {
      if (t.skipped()) continue;
      auto it = t.config.find(k.key);
      values.insert(it == t.config.end() ? std::string() : it->dump());
    }
    if (values.size() > 1) keys.push_back(k.key);
  }
  return keys;
}

std::string short_config(const nlohmann::json& config, const std::vector<std::string>& keys) {
  std::string out;
  for (const KeyFlag& k : key_flags()) {
    if (std::ranges::find(keys, k.key) == keys.end()) continue;
    auto it = config.find(k.key);
    if (it == config.end()) continue;
    if (!out.empty()) out += ' ';
    out += fmt::format("{} {}", k.flag, value_text(k.key, *it));
  }
  return out;
}

std::string format_progress_bar(const ProgressState& s, size_t width) {
  constexpr size_t kBarCells = 20;
  const double fraction = s.total == 0 ? 1.0 : std::min(1.0, double(s.done) / double(s.total));
  const auto filled = static_cast<size_t>(fraction * kBarCells);
  std::string line =
      fmt::format("[{}{}] {}/{}", std::string(filled, '#'), std::string(kBarCells - filled, '-'), s.done, s.total);
  if (s.failed > 0) line += fmt::format("  {} failed", s.failed);
  std::string times = fmt::format("  {} elapsed", format_duration(s.elapsed_s));
  if (s.eta_s) times += fmt::format(", ETA {}", format_duration(*s.eta_s));
  std::string current = s.current.empty() ? "" : "  " + s.current;
  // The current trial is what gives way when the terminal is narrow.
  const size_t fixed = line.size() + times.size();
  if (fixed + current.size() > width) {
    current = fixed + 5 < width ? current.substr(0, width - fixed - 3) + ".." : "";
  }
  line += current + times;
  if (line.size() > width) line.resize(width);
  return line;
}

std::string format_finished_line(const FinishedTrialLine& l) {
  std::string what = l.workload;
  if (!l.config.empty()) what += " " + l.config;
  std::string result;
  if (l.status == TrialStatus::ok) {
    result = l.metric.empty() || !l.value ? "no metric" : fmt::format("{} {:.2f}", l.metric, *l.value);
  } else {
    result = l.reason.substr(0, l.reason.find('\n'));
  }
  return fmt::format("[{}/{}] {:<7} {}: {} ({:.1f}s)", l.done, l.total, to_string(l.status), what, result,
                     l.duration_s);
}

std::optional<double> mean_of_metric(const std::vector<Sample>& samples, const std::string& metric) {
  double sum = 0;
  size_t n = 0;
  for (const Sample& s : samples) {
    if (s.metric != metric || s.is_warmup) continue;
    sum += s.value;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / double(n);
}

size_t terminal_columns(std::FILE* stream) {
  winsize ws{};
  if (ioctl(fileno(stream), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) return ws.ws_col;
  return 80;
}

ProgressDisplay::ProgressDisplay(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {
  if (terminal_) ticker_ = std::thread([this] { tick(); });
}

ProgressDisplay::~ProgressDisplay() { finish(); }

void ProgressDisplay::tick() {
  std::unique_lock lock(mutex_);
  while (!finished_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (!finished_ && state_) draw_locked();
  }
}

void ProgressDisplay::clear_bar_locked() {
  if (bar_shown_) fmt::print(out_, "\r\033[K");
  bar_shown_ = false;
}

void ProgressDisplay::draw_locked() {
  ProgressState shown = *state_;
  const double since = std::chrono::duration<double>(Clock::now() - state_at_).count();
  shown.elapsed_s += since;
  if (shown.eta_s) shown.eta_s = std::max(0.0, *shown.eta_s - since);
  // One column short of the width, so the cursor never wraps onto a new line.
  fmt::print(out_, "\r\033[K{}", format_progress_bar(shown, terminal_columns(out_) - 1));
  bar_shown_ = true;
  std::fflush(out_);
}

void ProgressDisplay::update(const ProgressState& state) {
  if (!terminal_) return;
  std::lock_guard lock(mutex_);
  if (finished_) return;
  state_ = state;
  state_at_ = Clock::now();
  draw_locked();
}

void ProgressDisplay::trial_finished(const FinishedTrialLine& line) {
  if (terminal_) return;
  std::lock_guard lock(mutex_);
  fmt::print(out_, "{}\n", format_finished_line(line));
  std::fflush(out_);
}

void ProgressDisplay::note(const std::string& message) {
  std::lock_guard lock(mutex_);
  const bool redraw = bar_shown_;
  clear_bar_locked();
  fmt::print(out_, "{}\n", message);
  if (redraw && state_) draw_locked();
  std::fflush(out_);
}

void ProgressDisplay::finish() {
  {
    std::lock_guard lock(mutex_);
    if (bar_shown_) fmt::print(out_, "\n");
    bar_shown_ = false;
    finished_ = true;
    std::fflush(out_);
  }
  wake_.notify_all();
  if (ticker_.joinable() && ticker_.get_id() != std::this_thread::get_id()) ticker_.join();
}

}  // namespace infertune
