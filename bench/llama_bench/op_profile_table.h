#pragma once
// bench --profile's report: where a forward step's time went, op by op (engine/arch/op_profile.h).
#include <string>
#include <string_view>

#include "engine/arch/op_profile.h"

namespace infertune {

// A Markdown table of the ops' share of a step: calls and milliseconds per step (a step is one forward call:
// one generated token, or one ubatch of a prompt), % of the step, the weights' streaming rate (GB/s) of the
// matmuls, and the share of thread time the op's threads sat idle (wake-ups, waiting for the slowest
// thread). `other` is step time no op timer covered. Titled with `test` (pp512, tg128, ...).
std::string op_profile_table(const OpProfileTotals& totals, std::string_view test);

}  // namespace infertune
