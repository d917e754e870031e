#include "engine/arch/op_profile.h"

#include <chrono>
#include <mutex>

namespace infertune {
namespace {

constexpr std::array<std::string_view, static_cast<size_t>(ProfiledOp::count)> kNames = {
    "step",   "embed",       "norm",        "quantize",  "attn_qkv", "attn_q",   "attn_k",
    "attn_v", "attn_output", "ffn_gate_up", "ffn_gate",  "ffn_up",   "ffn_down", "output",
    "matmul", "rope",        "kv_store",    "attention", "silu",     "residual", "logit_cap"};

std::mutex g_mutex;  // guards g_totals (adds come from the calling thread; busy time from every thread)
OpProfileTotals g_totals;

OpTotals& totals_of(ProfiledOp op) { return g_totals[static_cast<size_t>(op)]; }

}  // namespace

std::atomic<bool> OpProfile::enabled_{false};

std::string_view profiled_op_name(ProfiledOp op) { return kNames[static_cast<size_t>(op)]; }

ProfiledOp profiled_op_of_weight(std::string_view name) {
  if (name.ends_with(".weight")) name.remove_suffix(7);
  if (name == "output" || name == "token_embd") return ProfiledOp::output;  // token_embd: a tied output
  if (name.starts_with("blk.")) name.remove_prefix(name.find('.', 4) + 1);
  for (ProfiledOp op : {ProfiledOp::attn_q, ProfiledOp::attn_k, ProfiledOp::attn_v, ProfiledOp::attn_output,
                        ProfiledOp::ffn_gate, ProfiledOp::ffn_up, ProfiledOp::ffn_down}) {
    if (name == profiled_op_name(op)) return op;
  }
  return ProfiledOp::matmul;
}

void OpProfile::enable(bool on) {
  std::lock_guard lock(g_mutex);
  if (on) g_totals = {};
  enabled_.store(on, std::memory_order_relaxed);
}

OpProfileTotals OpProfile::totals() {
  std::lock_guard lock(g_mutex);
  return g_totals;
}

void OpProfile::add(ProfiledOp op, uint64_t wall_ns, uint64_t weight_bytes) {
  std::lock_guard lock(g_mutex);
  OpTotals& t = totals_of(op);
  ++t.calls;
  t.wall_ns += wall_ns;
  t.weight_bytes += weight_bytes;
}

void OpProfile::add_threads(ProfiledOp op, uint64_t wall_ns, unsigned threads, uint64_t busy_ns) {
  std::lock_guard lock(g_mutex);
  OpTotals& t = totals_of(op);
  t.thread_ns += wall_ns * threads;
  t.busy_ns += busy_ns;
}

uint64_t profile_clock_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

Status run_timed_ranges(ProfiledOp op, const ParallelFor& threads, size_t n_items, ParallelFor::RangeFn fn,
                        size_t min_chunk, size_t granule, RangeSplit split) {
  const auto run = [&](ParallelFor::RangeFn ranges_fn) {
    return split == RangeSplit::balanced ? threads.run_balanced(n_items, ranges_fn, min_chunk, granule)
                                         : threads.run(n_items, ranges_fn, min_chunk, granule);
  };
  if (!OpProfile::enabled()) return run(fn);
  std::atomic<uint64_t> busy{0};
  const uint64_t start = profile_clock_ns();
  const Status s = run([&](size_t begin, size_t end) {
    const uint64_t t0 = profile_clock_ns();
    fn(begin, end);
    busy.fetch_add(profile_clock_ns() - t0, std::memory_order_relaxed);
  });
  OpProfile::add_threads(op, profile_clock_ns() - start, threads.threads_for(n_items, min_chunk, granule), busy.load());
  return s;
}

}  // namespace infertune
