#include "sweeps/trial/trial_workload.h"

#include "sweeps/store/metric_names.h"

namespace infertune {
namespace {

// What the context must hold for the workload; the planner sizes n_ctx so, a hand-written config may not.
Status check_fits(const Workload& w, const Context& ctx) {
  if (w.kind == WorkloadKind::Serve) {
    const uint64_t cells = uint64_t(w.n_prompt) + uint64_t(w.n_gen);
    if (cells > ctx.n_ctx()) {
      return fail("config field 'n_ctx': {} cells are fewer than one served request's {}", ctx.n_ctx(), cells);
    }
    return {};
  }
  if (w.kind == WorkloadKind::Batched) {
    const auto np = uint32_t(w.n_parallel);
    const uint64_t cells = uint64_t(np) * uint64_t(w.n_prompt + w.n_gen);
    if (np > ctx.n_seq_max()) {
      return fail("config field 'n_parallel': the context has {} sequences, the workload needs {}", ctx.n_seq_max(),
                  np);
    }
    if (np > ctx.n_batch()) {
      return fail(
          "config field 'n_batch': {} is below the workload's {} parallel sequences (one decode holds a "
          "token of each)",
          ctx.n_batch(), np);
    }
    if (cells > ctx.n_ctx()) {
      return fail("config field 'n_ctx': {} cells are fewer than the {} the workload's {} sequences need", ctx.n_ctx(),
                  cells, np);
    }
    return {};
  }
  const uint64_t cells = uint64_t(w.depth) + uint64_t(w.n_prompt) + uint64_t(w.n_gen);
  if (cells > ctx.n_ctx()) {
    return fail("config field 'n_ctx': {} cells are fewer than the {} the workload {} needs", ctx.n_ctx(), cells,
                w.name());
  }
  return {};
}

}  // namespace

void add_weight_bandwidth(SampleSink& sink, const WeightTraffic& traffic, double steps_per_second) {
  if (traffic.bytes_per_step == 0 || !(steps_per_second > 0)) return;
  const double gbs = double(traffic.bytes_per_step) * steps_per_second / 1e9;
  sink.add(metric::kWeightReadGBs, gbs);
  if (traffic.host_read_bandwidth_gbs && *traffic.host_read_bandwidth_gbs > 0) {
    sink.add(metric::kBandwidthPercent, 100.0 * gbs / *traffic.host_read_bandwidth_gbs);
  }
}

void add_gpu_usage(SampleSink& sink, const GpuUsage& usage) {
  sink.add(metric::kGpuBusyPercent, usage.mean_busy_percent);
  sink.add(metric::kGpuVramPeakBytes, double(usage.peak_memory_used_bytes));
  if (usage.mean_memory_clock_mhz > 0) sink.add(metric::kGpuMemoryClockMhz, usage.mean_memory_clock_mhz);
}

Result<std::unique_ptr<TrialWorkload>> make_trial_workload(const Workload& w, Context& ctx, const Model& model,
                                                           const WeightTraffic& traffic) {
  if (Status s = check_fits(w, ctx); !s) return s.error();
  switch (w.kind) {
    case WorkloadKind::Prompt:
      return make_prompt_workload(w, ctx);
    case WorkloadKind::Generate:
      return make_generate_workload(w, ctx, traffic);
    case WorkloadKind::PromptGenerate:
      return make_prompt_generate_workload(w, ctx, traffic);
    case WorkloadKind::Batched:
      return make_batched_workload(w, ctx, traffic);
    case WorkloadKind::Serve:
      return make_serve_workload(w, ctx, model);
  }
  return fail("workload kind {} is not known", static_cast<int>(w.kind));
}

}  // namespace infertune
