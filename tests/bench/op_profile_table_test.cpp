// bench --profile's table (bench/llama_bench/op_profile_table.h) from hand-made totals: per-step calls and
// milliseconds, the share of the step, the matmuls' GB/s and idle thread share, the untimed remainder, and
// the all-matmuls line.
#include "bench/llama_bench/op_profile_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infertune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

OpTotals& of(OpProfileTotals& totals, ProfiledOp op) { return totals[static_cast<size_t>(op)]; }

TEST(OpProfileTable, PerStepFiguresRatesAndTheRemainder) {
  OpProfileTotals totals{};
  of(totals, ProfiledOp::step) = {.calls = 4, .wall_ns = 40'000'000};  // 10 ms per step
  // 4 ms per step streaming 8 MB per call: 2 GB/s; threads busy 3 of 4 thread-ms: 25% idle.
  of(totals, ProfiledOp::ffn_up) = {
      .calls = 4, .wall_ns = 16'000'000, .busy_ns = 24'000'000, .thread_ns = 32'000'000, .weight_bytes = 32'000'000};
  of(totals, ProfiledOp::output) = {.calls = 4, .wall_ns = 8'000'000, .weight_bytes = 64'000'000};
  of(totals, ProfiledOp::norm) = {.calls = 8, .wall_ns = 4'000'000};
  const std::string table = op_profile_table(totals, "tg4");
  EXPECT_THAT(table, HasSubstr("profile of tg4: 4 steps, 10.000 ms per step"));
  EXPECT_THAT(table, HasSubstr("| ffn_up | 1.0 | 4.000 | 40.0 | 2.0 | 25% |"));
  EXPECT_THAT(table, HasSubstr("| output | 1.0 | 2.000 | 20.0 | 8.0 |  |"));
  EXPECT_THAT(table, HasSubstr("| norm | 2.0 | 1.000 | 10.0 |  |  |"));
  EXPECT_THAT(table, HasSubstr("| other | | 3.000 | 30.0 | | |"));
  // 96 MB in 24 ms; idle over the threads measured (ffn_up's) only.
  EXPECT_THAT(table, HasSubstr("| **all matmuls** | 2.0 | 6.000 | 60.0 | 4.0 | 25% |"));
  EXPECT_THAT(table, Not(HasSubstr("attn_q")));  // ops that never ran are left out
}

TEST(OpProfileTable, NoStepSaysSo) {
  const OpProfileTotals totals{};
  EXPECT_THAT(op_profile_table(totals, "pp8"), HasSubstr("profile of pp8: no forward step was timed"));
}

}  // namespace
}  // namespace infertune
