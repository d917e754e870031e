#pragma once
// The context a recommendation's command lines run with, and the memory it costs. A trial is measured at the
// context its workload needs when the sweep leaves -c to it (-c 128 for a 64 + 64 token test), which is not a
// context anyone chats with. So the command lines carry the larger of the candidate's context and a target:
// --min-ctx N when given, else 4096 or the model's training context when that is smaller. The speeds stay the
// measured ones (both engines attend over the cells in use, not over the whole reservation); the memory does not:
// the memory model (sweeps/plan/memory_model.h) predicts what the command's context costs when full -- weights,
// KV cache and compute buffers -- and that is the figure --max-mem is checked against and the recommendation
// prints beside the command.
#include <cstdint>
#include <vector>

#include "sweeps/plan/trial_plan.h"
#include "sweeps/recommend/recommend.h"

namespace infertune {

inline constexpr int64_t kDefaultServingContext = 4096;

// Sets each candidate's command_ctx and, where its model file can be read here, command_memory (else
// command_memory_note says why not). `min_ctx` 0: the default target.
void assign_serving_contexts(std::vector<Candidate>& candidates, int64_t min_ctx, const ModelShapeFn& shapes);

}  // namespace infertune
