#pragma once
// The Pareto front over (throughput: higher is better, reply time: lower, peak RSS: lower, and for
// quantization variants the quality lost: the mean KL divergence from the sweep's base, lower): the eligible
// candidates no other eligible candidate beats on one objective without losing on another. Compared on the
// point scores (means), not their intervals. Candidates missing one of the first three are not on it.
//
// Quality counts between two candidates whose variants both have measured figures. Where only one of the two
// has them (a model file used as given, a synthetic variant, a failed measurement), neither beats the other:
// a faster file of unknown quality does not push a measured variant off the front, nor the other way round.
#include <optional>
#include <vector>

#include "sweeps/recommend/recommend.h"

namespace infertune {

// The candidate's mean KL divergence from the base, when its variant's quality was measured.
std::optional<double> quality_loss(const Candidate& c);

// True when `a` is at least as good as `b` on every objective they share and better on one. Both must have
// throughput, reply time and peak RSS.
bool dominates(const Candidate& a, const Candidate& b);

// Indices into `candidates`, in their order.
std::vector<size_t> pareto_front(const std::vector<Candidate>& candidates);

}  // namespace infertune
