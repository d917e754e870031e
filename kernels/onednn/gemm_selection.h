#pragma once
// Which backend multiplies float weights (F32 / F16 / BF16) in prompt batches: our own kernel (the matmul
// registry's) or oneDNN (kernels/onednn/onednn_matmul.h), chosen by measurement.
//
// INFERTUNE_GEMM=auto|own|onednn (unset or empty: auto):
//   auto    the first problem of each shape — weight type, rows, columns, batch size rounded up to a power
//           of two, threads — is run on both backends and timed; the faster one serves that shape from then
//           on (kept in memory for the life of the process). Problems under 2^24 multiply-adds (a fraction
//           of a millisecond) run our kernel unmeasured: too short to time reliably, and what either
//           backend would save there is smaller than the measurement.
//   own     always our kernel.
//   onednn  oneDNN for every problem of a type it supports on this CPU; an error when it supports none
//           (not built, or no type usable here).
// One-token problems (matvecs: memory-bound, our kernels read the weights once) and every other weight type
// always run our kernel, and so does every problem while a kernel variant is forced (INFERTUNE_KERNEL,
// ScopedMatmulVariant), so that variant comparisons never see oneDNN.
#include <atomic>
#include <compare>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/matmul/matmul.h"
#include "kernels/result.h"

namespace infertune {

enum class GemmMode { automatic, own, onednn };
enum class GemmBackend { own, onednn };

// "auto", "own", "onednn" ("" is auto); anything else is an error naming the value.
Result<GemmMode> parse_gemm_mode(std::string_view text);
std::string_view gemm_mode_name(GemmMode mode);
std::string_view gemm_backend_name(GemmBackend backend);

// What a measurement is kept for.
struct GemmShape {
  GgmlType type = GgmlType::F32;
  size_t n_rows = 0;
  size_t n_cols = 0;
  size_t token_bucket = 0;  // n_tokens rounded up to a power of two
  unsigned n_threads = 1;
  auto operator<=>(const GemmShape&) const = default;
};

GemmShape gemm_shape(const MatmulProblem& problem, unsigned n_threads);

// Whether a problem is one the selection decides: a float weight type and more than one token.
bool float_gemm_applies(const MatmulProblem& problem);

// Runs fn over all rows of `problem` — the one being computed, or for a measurement a sample of its first
// rows — split between the caller's threads.
using RunRows = std::function<Status(MatmulFn fn, const MatmulProblem& problem)>;

struct GemmMeasurement {
  GemmShape shape;
  double own_seconds = 0;
  double onednn_seconds = 0;
  GemmBackend chosen = GemmBackend::own;
};

// How many problems of one shape each backend computed (measurement samples excluded).
struct GemmShapeRuns {
  GemmShape shape;
  size_t own = 0;
  size_t onednn = 0;
};

// What a span of work (between two GemmSelector::shape_runs() snapshots) ran: the selector's mode, and the
// shapes that had problems in the span, and how many of them ran on oneDNN at least once.
struct GemmUsage {
  GemmMode mode = GemmMode::automatic;
  size_t shapes = 0;
  size_t onednn_shapes = 0;
};

GemmUsage gemm_usage_between(GemmMode mode, const std::vector<GemmShapeRuns>& before,
                             const std::vector<GemmShapeRuns>& after);

// "own" / "onednn" when every shape ran on one backend in mode own / onednn; in auto mode
// "auto(onednn K/N shapes)"; "" when no shape ran (no float-weight batch products).
std::string gemm_usage_text(const GemmUsage& usage);

class GemmSelector {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic

  static constexpr double kMinMeasuredWork = 1 << 24;  // multiply-adds; see auto above

  // Default clock: std::chrono::steady_clock. `min_work`: auto mode's threshold (tests lower it).
  explicit GemmSelector(GemmMode mode, Clock clock = {}, double min_work = kMinMeasuredWork);

  GemmMode mode() const { return mode_; }

  // Computes the problem's outputs with `own` or `onednn` (null: oneDNN cannot run this problem) per the
  // mode and, in auto mode, the shape's measurement — taken now when there is none yet, on a sample of the
  // problem (its first rows: an eighth, at least 256): a warm-up run of oneDNN, then each backend twice,
  // alternating; the faster minimum wins. The whole problem is then computed by the chosen backend (the
  // samples' outputs are overwritten). Returns that backend.
  Result<GemmBackend> run(const MatmulProblem& problem, unsigned n_threads, MatmulFn own, MatmulFn onednn,
                          const RunRows& run_rows);

  // The kept choice for a shape (auto mode), if measured.
  std::optional<GemmBackend> choice(const GemmShape& shape) const;
  // From now on the shape runs on our kernel (after oneDNN failed on it).
  void prefer_own(const GemmShape& shape);
  std::vector<GemmMeasurement> measurements() const;
  // How many problems each backend computed (measurement samples excluded).
  size_t runs(GemmBackend backend) const { return runs_[static_cast<int>(backend)].load(); }
  // The same per shape, every shape computed so far (by this selector), in shape order.
  std::vector<GemmShapeRuns> shape_runs() const;

 private:
  Result<GemmBackend> measure(const MatmulProblem& problem, const GemmShape& shape, MatmulFn own, MatmulFn onednn,
                              const RunRows& run_rows);

  GemmMode mode_;
  Clock clock_;
  double min_work_;
  mutable std::mutex mutex_;
  std::map<GemmShape, GemmMeasurement> measured_;  // guarded by mutex_
  std::map<GemmShape, GemmShapeRuns> shape_runs_;  // guarded by mutex_
  std::atomic<size_t> runs_[2] = {0, 0};
};

// The process-wide selector, its mode from INFERTUNE_GEMM (read once). An invalid value is reported by
// run_float_gemm.
GemmSelector& gemm_selector();

// The problem computed on the caller's threads (run_rows) per the process-wide selector, `own` being the
// registry's kernel for its type. Errors: an invalid INFERTUNE_GEMM, INFERTUNE_GEMM=onednn without a usable
// oneDNN, a failing run_rows, oneDNN failing in onednn mode (auto mode falls back to `own` for the shape).
Status run_float_gemm(const MatmulProblem& problem, MatmulFn own, unsigned n_threads, const RunRows& run_rows);

// Replaces the process-wide selector with a fresh one in `mode` for the object's lifetime (no measurements
// carried over either way). For tests and benchmarks; not while another thread runs matmuls.
class ScopedGemmMode {
 public:
  explicit ScopedGemmMode(GemmMode mode);
  ~ScopedGemmMode();
  ScopedGemmMode(const ScopedGemmMode&) = delete;
  ScopedGemmMode& operator=(const ScopedGemmMode&) = delete;

 private:
  std::unique_ptr<GemmSelector> replacement_;
  GemmSelector* saved_;
};

}  // namespace infertune
