#pragma once
// The Pareto front over (throughput: higher is better, reply time: lower, peak RSS: lower): the eligible
// candidates no other eligible candidate beats on one of the three without losing on another. Compared on
// the point scores (means), not their intervals. Candidates missing one of the three are not on it.
#include <vector>

#include "sweeps/recommend/recommend.h"

namespace infertune {

// True when `a` is at least as good as `b` on all three and better on one. Both must have all three.
bool dominates(const Candidate& a, const Candidate& b);

// Indices into `candidates`, in their order.
std::vector<size_t> pareto_front(const std::vector<Candidate>& candidates);

}  // namespace infertune
