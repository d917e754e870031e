#pragma once
// Where a forward pass spends its time, op by op: timers around every building block of
// engine/arch/transformer_blocks.h, off unless a tool turns them on (`infertune bench --profile`).
//
// The profile is process-wide (one set of counters, like the matmul registry): a profiler answers "where
// does this process's time go", and threading a profile object through every block would put a parameter
// on each of them for a diagnostic. Off, a timer costs one relaxed load. On, two clock reads per op (tens of
// ns against ops of microseconds) and, inside parallel ops, one per thread range.
//
// Per op it counts calls, wall time, the weight bytes a matmul streamed, and for ops split between threads
// the time the threads were busy: wall x threads - busy is time threads sat idle in that op (waking up,
// waiting for the slowest thread), which is what barriers and uneven splits cost.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/threading/parallel_for.h"
#include "kernels/result.h"

namespace infertune {

enum class ProfiledOp : uint8_t {
  step,  // a whole forward call (one ubatch): the ops below plus what no timer covers
  embed,
  norm,
  quantize,  // activation quantization for the integer kernels
  attn_qkv,  // q, k and v as one job (linear_group)
  attn_q,
  attn_k,
  attn_v,
  attn_output,
  ffn_gate_up,  // gate and up as one job
  ffn_gate,
  ffn_up,
  ffn_down,
  output,  // the output projection (the logits)
  matmul,  // a product of any other weight
  rope,
  kv_store,
  attention,
  silu,
  residual,   // residual adds and biases
  logit_cap,  // the soft cap of the logits (gemma2, gemma3)
  count
};

std::string_view profiled_op_name(ProfiledOp op);

// The matmul op of a weight, from its GGUF name ("blk.3.attn_q.weight" -> attn_q).
ProfiledOp profiled_op_of_weight(std::string_view tensor_name);

struct OpTotals {
  uint64_t calls = 0;
  uint64_t wall_ns = 0;
  uint64_t busy_ns = 0;       // summed over the threads of parallel calls
  uint64_t thread_ns = 0;     // wall_ns x threads of parallel calls (busy_ns's capacity)
  uint64_t weight_bytes = 0;  // streamed by matmuls
};

using OpProfileTotals = std::array<OpTotals, static_cast<size_t>(ProfiledOp::count)>;

class OpProfile {
 public:
  static bool enabled() { return enabled_.load(std::memory_order_relaxed); }
  // Turns the timers on or off; turning them on clears the counters. Not while a forward pass runs.
  static void enable(bool on);
  static OpProfileTotals totals();

  static void add(ProfiledOp op, uint64_t wall_ns, uint64_t weight_bytes);
  // A parallel call's threads: busy_ns summed over `threads` threads that ran for wall_ns.
  static void add_threads(ProfiledOp op, uint64_t wall_ns, unsigned threads, uint64_t busy_ns);

 private:
  static std::atomic<bool> enabled_;
};

// Monotonic nanoseconds, for the timers.
uint64_t profile_clock_ns();

// Times its scope as `op` when profiling is on.
class OpTimer {
 public:
  explicit OpTimer(ProfiledOp op, uint64_t weight_bytes = 0)
      : op_(op), bytes_(weight_bytes), start_(OpProfile::enabled() ? profile_clock_ns() : 0) {}
  ~OpTimer() {
    if (start_ != 0) OpProfile::add(op_, profile_clock_ns() - start_, bytes_);
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  ProfiledOp op_;
  uint64_t bytes_;
  uint64_t start_;
};

// How run_timed_ranges splits the items: ParallelFor::run or ParallelFor::run_balanced.
enum class RangeSplit { fixed, balanced };

// threads.run (or run_balanced) of n_items, with the threads' busy time recorded for `op` when profiling is
// on (the op's wall time and calls come from its OpTimer).
Status run_timed_ranges(ProfiledOp op, const ParallelFor& threads, size_t n_items, ParallelFor::RangeFn fn,
                        size_t min_chunk = 1, size_t granule = 1, RangeSplit split = RangeSplit::fixed);

}  // namespace infertune
