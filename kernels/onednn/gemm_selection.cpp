#include "kernels/onednn/gemm_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <string>

#include "kernels/matmul/matmul_registry.h"
#include "kernels/onednn/onednn_matmul.h"

namespace infertune {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool is_float_type(GgmlType type) { return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16; }

double work(const MatmulProblem& p) {
  return static_cast<double>(p.n_rows) * static_cast<double>(p.n_cols) * static_cast<double>(p.n_tokens);
}

// The rows a measurement times: the first eighth of the problem's, at least 256 (whole 16-row granules),
// so that measuring costs a fraction of one product while each thread's share stays a realistic GEMM.
MatmulProblem measurement_sample(const MatmulProblem& p) {
  size_t rows = std::max<size_t>(p.n_rows / 8, 256);
  if (rows >= p.n_rows) return p;
  rows = rows / 16 * 16;
  MatmulProblem sample = p;
  sample.n_rows = rows;
  sample.weights = p.weights.first(p.weights.size() / p.n_rows * rows);
  return sample;  // y: the first n_tokens x rows values of p.y, rewritten by the final run
}

// Each backend is timed this many times per measurement; the minimum counts (the least disturbed run).
constexpr int kTimedRuns = 2;

}  // namespace

Result<GemmMode> parse_gemm_mode(std::string_view text) {
  if (text.empty() || text == "auto") return GemmMode::automatic;
  if (text == "own") return GemmMode::own;
  if (text == "onednn") return GemmMode::onednn;
  return fail("INFERTUNE_GEMM={}: expected auto, own or onednn", text);
}

std::string_view gemm_mode_name(GemmMode mode) {
  switch (mode) {
    case GemmMode::automatic:
      return "auto";
    case GemmMode::own:
      return "own";
    case GemmMode::onednn:
      return "onednn";
  }
  return "?";
}

std::string_view gemm_backend_name(GemmBackend backend) { return backend == GemmBackend::own ? "own" : "onednn"; }

GemmShape gemm_shape(const MatmulProblem& p, unsigned n_threads) {
  return {p.type, p.n_rows, p.n_cols, std::bit_ceil(std::max<size_t>(p.n_tokens, 1)), n_threads};
}

bool float_gemm_applies(const MatmulProblem& p) { return is_float_type(p.type) && p.n_tokens > 1; }

GemmSelector::GemmSelector(GemmMode mode, Clock clock, double min_work)
    : mode_(mode), clock_(clock ? std::move(clock) : Clock(steady_seconds)), min_work_(min_work) {}

std::optional<GemmBackend> GemmSelector::choice(const GemmShape& shape) const {
  std::lock_guard lock(mutex_);
  auto it = measured_.find(shape);
  if (it == measured_.end()) return std::nullopt;
  return it->second.chosen;
}

void GemmSelector::prefer_own(const GemmShape& shape) {
  std::lock_guard lock(mutex_);
  GemmMeasurement& m = measured_[shape];
  m.shape = shape;
  m.chosen = GemmBackend::own;
}

std::vector<GemmMeasurement> GemmSelector::measurements() const {
  std::lock_guard lock(mutex_);
  std::vector<GemmMeasurement> out;
  for (const auto& [shape, m] : measured_) out.push_back(m);
  return out;
}

Result<GemmBackend> GemmSelector::measure(const MatmulProblem& problem, const GemmShape& shape, MatmulFn own,
                                          MatmulFn onednn, const RunRows& run_rows) {
  const MatmulProblem sample = measurement_sample(problem);
  // The warm-up run takes oneDNN's primitive creation and the first touch of the sampled weights.
  if (Status s = run_rows(onednn, sample); !s) return s.error();
  double best[2] = {1e300, 1e300};
  for (int round = 0; round < kTimedRuns; ++round) {
    for (GemmBackend backend : {GemmBackend::own, GemmBackend::onednn}) {
      const double start = clock_();
      if (Status s = run_rows(backend == GemmBackend::own ? own : onednn, sample); !s) return s.error();
      best[static_cast<int>(backend)] = std::min(best[static_cast<int>(backend)], clock_() - start);
    }
  }
  GemmMeasurement m{shape, best[0], best[1], best[1] < best[0] ? GemmBackend::onednn : GemmBackend::own};
  std::lock_guard lock(mutex_);
  measured_.emplace(shape, m);
  return m.chosen;
}

Result<GemmBackend> GemmSelector::run(const MatmulProblem& problem, unsigned n_threads, MatmulFn own, MatmulFn onednn,
                                      const RunRows& run_rows) {
  GemmBackend backend = GemmBackend::own;
  if (onednn && float_gemm_applies(problem) && !matmul_registry().forced()) {
    if (mode_ == GemmMode::onednn) {
      backend = GemmBackend::onednn;
    } else if (mode_ == GemmMode::automatic && work(problem) >= min_work_) {
      const GemmShape shape = gemm_shape(problem, n_threads);
      const std::optional<GemmBackend> kept = choice(shape);
      if (kept) {
        backend = *kept;
      } else {
        auto chosen = measure(problem, shape, own, onednn, run_rows);
        if (!chosen) return chosen.error();
        backend = *chosen;
      }
    }
  }
  if (Status s = run_rows(backend == GemmBackend::own ? own : onednn, problem); !s) return s.error();
  ++runs_[static_cast<int>(backend)];
  const GemmShape shape = gemm_shape(problem, n_threads);
  std::lock_guard lock(mutex_);
  GemmShapeRuns& counts = shape_runs_[shape];
  counts.shape = shape;
  ++(backend == GemmBackend::own ? counts.own : counts.onednn);
  return backend;
}

std::vector<GemmShapeRuns> GemmSelector::shape_runs() const {
  std::lock_guard lock(mutex_);
  std::vector<GemmShapeRuns> out;
  for (const auto& [shape, counts] : shape_runs_) out.push_back(counts);
  return out;
}

GemmUsage gemm_usage_between(GemmMode mode, const std::vector<GemmShapeRuns>& before,
                             const std::vector<GemmShapeRuns>& after) {
  GemmUsage usage{mode, 0, 0};
  for (const GemmShapeRuns& now : after) {
    size_t own = now.own, onednn = now.onednn;
    auto earlier = std::find_if(before.begin(), before.end(), [&](const auto& b) { return b.shape == now.shape; });
    if (earlier != before.end()) {
      own -= std::min(own, earlier->own);
      onednn -= std::min(onednn, earlier->onednn);
    }
    if (own + onednn == 0) continue;
    ++usage.shapes;
    if (onednn > 0) ++usage.onednn_shapes;
  }
  return usage;
}

std::string gemm_usage_text(const GemmUsage& u) {
  if (u.shapes == 0) return "";
  if (u.mode == GemmMode::automatic) return fmt::format("auto(onednn {}/{} shapes)", u.onednn_shapes, u.shapes);
  if (u.onednn_shapes == 0) return "own";
  if (u.onednn_shapes == u.shapes) return "onednn";
  return fmt::format("{}(onednn {}/{} shapes)", gemm_mode_name(u.mode), u.onednn_shapes, u.shapes);
}

namespace {

struct ProcessSelector {
  std::optional<std::string> env_error;  // an invalid INFERTUNE_GEMM
  std::unique_ptr<GemmSelector> from_env;
  GemmSelector* current = nullptr;
};

ProcessSelector& process_selector() {
  static ProcessSelector p = [] {
    ProcessSelector r;
    const char* env = std::getenv("INFERTUNE_GEMM");
    auto mode = parse_gemm_mode(env ? env : "");
    if (!mode) r.env_error = mode.error().message;
    r.from_env = std::make_unique<GemmSelector>(mode ? *mode : GemmMode::automatic);
    r.current = r.from_env.get();
    return r;
  }();
  return p;
}

}  // namespace

GemmSelector& gemm_selector() { return *process_selector().current; }

Status run_float_gemm(const MatmulProblem& problem, MatmulFn own, unsigned n_threads, const RunRows& run_rows) {
  const ProcessSelector& process = process_selector();
  if (process.env_error && process.current == process.from_env.get()) return fail("{}", *process.env_error);
  GemmSelector& selector = gemm_selector();
  const bool usable = onednn_supports(problem.type);
  if (selector.mode() == GemmMode::onednn && !usable && float_gemm_applies(problem)) {
    return fail("INFERTUNE_GEMM=onednn: oneDNN {} here (onednn: {})",
                onednn_built() ? fmt::format("cannot compute {} weights", ggml_type_name(problem.type))
                               : std::string("is not built"),
                onednn_summary());
  }
  auto backend = selector.run(problem, n_threads, own, usable ? onednn_matmul : nullptr, run_rows);
  if (!backend) return backend.error();
  if (auto failure = take_onednn_failure()) {
    if (selector.mode() == GemmMode::onednn) return fail("{}", *failure);
    selector.prefer_own(gemm_shape(problem, n_threads));  // the rows were computed by `own` instead
  }
  return {};
}

ScopedGemmMode::ScopedGemmMode(GemmMode mode)
    : replacement_(std::make_unique<GemmSelector>(mode)), saved_(process_selector().current) {
  process_selector().current = replacement_.get();
}

ScopedGemmMode::~ScopedGemmMode() { process_selector().current = saved_; }

}  // namespace infertune
