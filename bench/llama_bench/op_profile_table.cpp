#include "bench/llama_bench/op_profile_table.h"

#include <fmt/format.h>

namespace infertune {
namespace {

bool is_matmul(ProfiledOp op) { return op >= ProfiledOp::attn_qkv && op <= ProfiledOp::matmul; }

std::string idle_text(const OpTotals& t) {
  if (t.thread_ns == 0) return "";
  return fmt::format("{:.0f}%", 100.0 * (1.0 - double(t.busy_ns) / double(t.thread_ns)));
}

std::string rate_text(uint64_t bytes, uint64_t ns) {
  return ns == 0 || bytes == 0 ? "" : fmt::format("{:.1f}", double(bytes) / ns);
}

}  // namespace

std::string op_profile_table(const OpProfileTotals& totals, std::string_view test) {
  const OpTotals& step = totals[static_cast<size_t>(ProfiledOp::step)];
  if (step.calls == 0 || step.wall_ns == 0) return fmt::format("profile of {}: no forward step was timed\n", test);
  const double steps = double(step.calls);
  std::string out =
      fmt::format("\nprofile of {}: {} steps, {:.3f} ms per step\n\n", test, step.calls, step.wall_ns / steps / 1e6);
  out += "| op | calls/step | ms/step | % of step | weights GB/s | threads idle |\n";
  out += "|---|--:|--:|--:|--:|--:|\n";
  uint64_t covered = 0;
  OpTotals matmuls;
  for (size_t i = 0; i < totals.size(); ++i) {
    const auto op = static_cast<ProfiledOp>(i);
    const OpTotals& t = totals[i];
    if (op == ProfiledOp::step || t.calls == 0) continue;
    covered += t.wall_ns;
    if (is_matmul(op)) {
      matmuls.calls += t.calls;
      matmuls.wall_ns += t.wall_ns;
      matmuls.weight_bytes += t.weight_bytes;
      matmuls.busy_ns += t.busy_ns;
      matmuls.thread_ns += t.thread_ns;
    }
    out += fmt::format("| {} | {:.1f} | {:.3f} | {:.1f} | {} | {} |\n", profiled_op_name(op), t.calls / steps,
                       t.wall_ns / steps / 1e6, 100.0 * t.wall_ns / step.wall_ns, rate_text(t.weight_bytes, t.wall_ns),
                       idle_text(t));
  }
  const uint64_t other = step.wall_ns > covered ? step.wall_ns - covered : 0;
  out += fmt::format("| other | | {:.3f} | {:.1f} | | |\n", other / steps / 1e6, 100.0 * other / step.wall_ns);
  out += fmt::format("| **all matmuls** | {:.1f} | {:.3f} | {:.1f} | {} | {} |\n\n", matmuls.calls / steps,
                     matmuls.wall_ns / steps / 1e6, 100.0 * matmuls.wall_ns / step.wall_ns,
                     rate_text(matmuls.weight_bytes, matmuls.wall_ns), idle_text(matmuls));
  return out;
}

}  // namespace infertune
