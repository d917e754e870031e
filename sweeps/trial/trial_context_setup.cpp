#include "sweeps/trial/trial_context_setup.h"

namespace infertune {

ContextParams trial_context_params(const TrialConfig& c, const PlacementPlan& plan, ThreadPool* pool) {
  ContextParams params;
  params.n_ctx = c.n_ctx;
  params.n_threads = plan.n_threads;
  params.n_threads_batch = plan.n_threads_batch;
  params.n_batch = c.n_batch;
  params.n_ubatch = c.n_ubatch;
  params.n_seq_max = c.n_parallel;
  params.type_k = c.type_k;
  params.type_v = c.type_v;
  params.flash_attn = c.flash_attn;
  params.pool = pool;
  return params;
}

Result<TrialContext> start_trial_context(const Model& model, const TrialConfig& c) {
  if (c.n_gpu_layers > 0) {
    return fail("config field 'n_gpu_layers': {} needs a GPU backend, which the forward pass does not have",
                c.n_gpu_layers);
  }
  TrialContext t;
  auto placed = start_placed_pool(c.placement);
  if (!placed) {
    return fail("config fields 'threads' / 'threads_batch' / 'numa' / 'cpu_mask': {}", placed.error().message);
  }
  t.placed = std::move(*placed);
  t.warnings = t.placed->warnings();
  auto ctx = Context::create(model, trial_context_params(c, t.placed->plan, t.placed->pool.get()));
  if (!ctx) {
    return fail("config fields 'n_ctx' / 'n_batch' / 'n_ubatch' / 'n_parallel' / 'type_k' / 'type_v': {}",
                ctx.error().message);
  }
  t.context = std::make_unique<Context>(std::move(*ctx));
  return t;
}

}  // namespace infertune
