// run_trial on the fixture model, one test per workload kind (the served one through a real server and its
// clients): which metrics each repetition holds and how many values (one itl_ms per gap between tokens), the
// warmup flagged as repetition 0, the main metric, the stop flag, and the errors of a context that cannot hold
// the workload.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "engine/model/model.h"
#include "kernels/cuda/cuda_devices.h"
#include "kernels/cuda/nvml.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/trial_executor.h"
#include "test_support.h"

namespace infertune {
namespace {

const Model& fixture_model() {
  static const Model model = [] {
    auto m = Model::load(test::fixture_path("models/fixture-llama-f32.gguf").string());
    if (!m) throw std::runtime_error(m.error().message);
    return std::move(*m);
  }();
  return model;
}

nlohmann::json config_for(const nlohmann::json& workload, int n_ctx, int n_parallel = 1) {
  return {{"model", "fixture"}, {"quant", ""},        {"n_gpu_layers", 0},    {"mmap", true},
          {"threads", 1},       {"threads_batch", 1}, {"numa", "none"},       {"cpu_mask", "0x0"},
          {"n_ctx", n_ctx},     {"n_batch", 16},      {"n_ubatch", 8},        {"n_parallel", n_parallel},
          {"type_k", "f16"},    {"type_v", "f16"},    {"flash_attn", "auto"}, {"workload", workload}};
}

nlohmann::json workload(const char* kind, int n_prompt, int n_gen, int depth = 0, int n_parallel = 1) {
  return {{"kind", kind}, {"n_prompt", n_prompt}, {"n_gen", n_gen}, {"depth", depth}, {"n_parallel", n_parallel}};
}

// Two timed repetitions exactly, after a warmup: the tests count values per repetition.
const TrialSettings kTwoReps{.warmup = true, .min_reps = 2, .max_reps = 2, .ci_target = 0.03};
const TrialEnvironment kEnvironment{.host_read_bandwidth_gbs = 20.0};

TrialMeasurement run(const nlohmann::json& config, const TrialSettings& settings = kTwoReps) {
  auto m = run_trial(fixture_model(), config, settings, kEnvironment);
  EXPECT_TRUE(m) << m.error().message;
  return m ? *m : TrialMeasurement{};
}

// (metric, repetition) -> number of values; and every sample's warmup flag is that of repetition 0.
std::map<std::pair<std::string, int64_t>, int> counts(const TrialMeasurement& m) {
  std::map<std::pair<std::string, int64_t>, int> n;
  for (const Sample& s : m.samples) {
    ++n[{s.metric, s.repetition}];
    EXPECT_EQ(s.is_warmup, s.repetition == 0) << s.metric << " rep " << s.repetition;
    EXPECT_TRUE(std::isfinite(s.value) && s.value >= 0) << s.metric << " = " << s.value;
  }
  return n;
}

// The workload's own metrics of a repetition (without the utilization every run gets).
std::set<std::string> workload_metrics_of(const TrialMeasurement& m, int64_t repetition) {
  const std::set<std::string> utilization{
      metric::kCpuBusyShare,         metric::kInstructions,   metric::kCycles,           metric::kLlcMisses,
      metric::kInstructionsPerCycle, metric::kGpuBusyPercent, metric::kGpuVramPeakBytes, metric::kGpuMemoryClockMhz};
  std::set<std::string> names;
  for (const Sample& s : m.samples) {
    if (s.repetition == repetition && !utilization.contains(s.metric)) names.insert(s.metric);
  }
  return names;
}

TEST(TrialWorkload, PromptAtDepth) {
  const auto m = run(config_for(workload("pp", 24, 0, 8), 32));
  EXPECT_EQ(m.main_metric, metric::kPromptTokensPerSecond);
  EXPECT_EQ(m.repetitions, 2);
  auto n = counts(m);
  for (int64_t rep : {0, 1, 2}) {
    EXPECT_EQ((n[{metric::kPromptTokensPerSecond, rep}]), 1);
    EXPECT_EQ((n[{metric::kTimeToFirstTokenMs, rep}]), 1);
  }
  EXPECT_EQ(workload_metrics_of(m, 2),
            (std::set<std::string>{metric::kPromptTokensPerSecond, metric::kTimeToFirstTokenMs}));
  // At most one CPU busy share per run (none when a run is too short for the clock to see its CPU time).
  for (int64_t rep : {0, 1, 2}) EXPECT_LE((n[{metric::kCpuBusyShare, rep}]), 1);
  // The KV cache's bytes once, with the first timed repetition.
  EXPECT_EQ((n[{metric::kKvBytes, 1}]), 1);
  EXPECT_EQ((n[{metric::kKvBytes, 2}]), 0);
  EXPECT_TRUE(m.peak_rss_bytes.has_value());
}

// GPU utilization is sampled only when the trial offloads layers: a CPU-only trial has none of it and no
// warning about it, whether or not this host has NVML.
TEST(TrialWorkload, CpuOnlyTrialRecordsNoGpuMetrics) {
  const auto m = run(config_for(workload("tg", 0, 4), 16));
  for (const Sample& s : m.samples) EXPECT_NE(s.metric.rfind("gpu_", 0), 0u) << s.metric;
  for (const auto& w : m.warnings) EXPECT_EQ(w.find("GPU"), std::string::npos) << w;
}

TEST(TrialWorkload, GpuTrialRecordsGpuUtilizationWhereNvmlAnswers) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA GPU visible (or no CUDA backend in this build)";
  nlohmann::json config = config_for(workload("tg", 0, 4), 16);
  config["n_gpu_layers"] = 99;
  const auto m = run(config);
  auto n = counts(m);
  if (!nvml::nvml_available()) {
    EXPECT_EQ((n[{metric::kGpuBusyPercent, 1}]), 0);
    bool warned = false;
    for (const auto& w : m.warnings) warned |= w.find("GPU utilization not recorded") != std::string::npos;
    EXPECT_TRUE(warned);
    return;
  }
  for (int64_t rep : {0, 1, 2}) {
    EXPECT_EQ((n[{metric::kGpuBusyPercent, rep}]), 1);
    EXPECT_EQ((n[{metric::kGpuVramPeakBytes, rep}]), 1);
  }
  for (const Sample& s : m.samples) {
    if (s.metric == metric::kGpuBusyPercent) {
      EXPECT_LE(s.value, 100);
    }
    if (s.metric == metric::kGpuVramPeakBytes) {
      EXPECT_GT(s.value, 0);
    }
  }
}

TEST(TrialWorkload, GenerateHasOneItlPerGap) {
  const int n_gen = 6;
  const auto m = run(config_for(workload("tg", 0, n_gen, 4), 16));
  EXPECT_EQ(m.main_metric, metric::kGenTokensPerSecond);
  auto n = counts(m);
  for (int64_t rep : {0, 1, 2}) {
    EXPECT_EQ((n[{metric::kGenTokensPerSecond, rep}]), 1);
    EXPECT_EQ((n[{metric::kTimeToFirstTokenMs, rep}]), 1);
    EXPECT_EQ((n[{metric::kInterTokenLatencyMs, rep}]), n_gen - 1);
    EXPECT_EQ((n[{metric::kWeightReadGBs, rep}]), 1);
    EXPECT_EQ((n[{metric::kBandwidthPercent, rep}]), 1);
  }
  // tg_tps is the steps' rate: n_gen / (first step + every gap).
  double step_ms = 0, tps = 0, gbs = 0, pct = 0;
  for (const Sample& s : m.samples) {
    if (s.repetition != 1) continue;
    if (s.metric == metric::kTimeToFirstTokenMs || s.metric == metric::kInterTokenLatencyMs) step_ms += s.value;
    if (s.metric == metric::kGenTokensPerSecond) tps = s.value;
    if (s.metric == metric::kWeightReadGBs) gbs = s.value;
    if (s.metric == metric::kBandwidthPercent) pct = s.value;
  }
  EXPECT_NEAR(tps, 1000.0 * n_gen / step_ms, 1e-6 * tps);
  EXPECT_NEAR(pct, 100.0 * gbs / kEnvironment.host_read_bandwidth_gbs.value(), 1e-9 * pct);
}

TEST(TrialWorkload, PromptGenerateHasEveryLatency) {
  const int n_gen = 5;
  const auto m = run(config_for(workload("pp+tg", 12, n_gen), 24));
  EXPECT_EQ(m.main_metric, metric::kGenTokensPerSecond);
  auto n = counts(m);
  for (int64_t rep : {0, 1, 2}) {
    EXPECT_EQ((n[{metric::kPromptTokensPerSecond, rep}]), 1);
    EXPECT_EQ((n[{metric::kGenTokensPerSecond, rep}]), 1);
    EXPECT_EQ((n[{metric::kTimeToFirstTokenMs, rep}]), 1);
    EXPECT_EQ((n[{metric::kEndToEndLatencyMs, rep}]), 1);
    EXPECT_EQ((n[{metric::kInterTokenLatencyMs, rep}]), n_gen - 1);
  }
  // e2e covers ttft and every gap.
  double ttft = 0, gaps = 0, e2e = 0;
  for (const Sample& s : m.samples) {
    if (s.repetition != 2) continue;
    if (s.metric == metric::kTimeToFirstTokenMs) ttft = s.value;
    if (s.metric == metric::kInterTokenLatencyMs) gaps += s.value;
    if (s.metric == metric::kEndToEndLatencyMs) e2e = s.value;
  }
  EXPECT_GE(e2e * (1 + 1e-9), ttft + gaps);
}

TEST(TrialWorkload, BatchedFourSequencesGenerateEveryToken) {
  const int np = 4, n_prompt = 6, n_gen = 5;
  const auto m = run(config_for(workload("batched", n_prompt, n_gen, 0, np), np * (n_prompt + n_gen), np));
  EXPECT_EQ(m.main_metric, metric::kAggregateTokensPerSecond);
  auto n = counts(m);
  for (int64_t rep : {0, 1, 2}) {
    EXPECT_EQ((n[{metric::kTimeToFirstTokenMs, rep}]), np);
    EXPECT_EQ((n[{metric::kEndToEndLatencyMs, rep}]), np);
    EXPECT_EQ((n[{metric::kInterTokenLatencyMs, rep}]), np * (n_gen - 1));
    EXPECT_EQ((n[{metric::kAggregateTokensPerSecond, rep}]), 1);
    EXPECT_EQ((n[{metric::kPromptTokensPerSecond, rep}]), 1);
    EXPECT_EQ((n[{metric::kWeightReadGBs, rep}]), 1);
    // Each token was timestamped once: first tokens plus gaps are every generated token.
    EXPECT_EQ((n[{metric::kTimeToFirstTokenMs, rep}] + n[{metric::kInterTokenLatencyMs, rep}]), np * n_gen);
  }
  // aggregate_tps = all generated tokens / wall time, and the wall time covers the slowest request's e2e.
  double aggregate = 0, max_e2e = 0;
  for (const Sample& s : m.samples) {
    if (s.repetition != 1) continue;
    if (s.metric == metric::kAggregateTokensPerSecond) aggregate = s.value;
    if (s.metric == metric::kEndToEndLatencyMs) max_e2e = std::max(max_e2e, s.value);
  }
  EXPECT_LE(aggregate, 1000.0 * np * n_gen / max_e2e * (1 + 1e-9));
}

// A served workload: the server of `infertune serve` over the trial's context on a loopback port, loadgen's
// closed loop as its clients. Every request streams its n_gen tokens; each repetition is 4 requests per client;
// goodput counts the requests within the objective.
nlohmann::json served(int clients, int n_prompt, int n_gen, double slo_ttft_ms) {
  nlohmann::json w = workload("serve", n_prompt, n_gen);
  w["clients"] = clients;
  w["slo_ttft_ms"] = slo_ttft_ms;
  w["slo_itl_ms"] = 0.0;
  return w;
}

// (metric, repetition) -> its one value.
double value_of(const TrialMeasurement& m, const char* metric, int64_t repetition) {
  for (const Sample& s : m.samples) {
    if (s.metric == metric && s.repetition == repetition) return s.value;
  }
  ADD_FAILURE() << metric << " has no value in repetition " << repetition;
  return -1;
}

TEST(TrialWorkload, ServedClientsStreamEveryRequest) {
  const int np = 2, clients = 3, n_prompt = 12, n_gen = 4, requests = 4 * clients;
  const auto m = run(config_for(served(clients, n_prompt, n_gen, 3.6e6), 256, np));
  EXPECT_EQ(m.main_metric, metric::kAggregateTokensPerSecond);
  auto n = counts(m);
  for (int64_t rep : {0, 1, 2}) {
    EXPECT_EQ((n[{metric::kTimeToFirstTokenMs, rep}]), requests);
    EXPECT_EQ((n[{metric::kEndToEndLatencyMs, rep}]), requests);
    // One gap per streamed chunk after the first: at most one per token (a token that ends inside a UTF-8
    // character streams with the next).
    EXPECT_GT((n[{metric::kInterTokenLatencyMs, rep}]), 0);
    EXPECT_LE((n[{metric::kInterTokenLatencyMs, rep}]), requests * (n_gen - 1));
    for (const char* once : {metric::kAggregateTokensPerSecond, metric::kRequestsPerSecond, metric::kGoodputPerSecond})
      EXPECT_EQ((n[{once, rep}]), 1) << once;
    // An hour's objective: every request is good.
    EXPECT_DOUBLE_EQ(value_of(m, metric::kGoodputPerSecond, rep), value_of(m, metric::kRequestsPerSecond, rep));
    // Every request's n_gen tokens over the repetition's wall time.
    EXPECT_NEAR(value_of(m, metric::kAggregateTokensPerSecond, rep),
                n_gen * value_of(m, metric::kRequestsPerSecond, rep), 1e-6 * n_gen * requests);
  }
  EXPECT_EQ(workload_metrics_of(m, 2),
            (std::set<std::string>{metric::kTimeToFirstTokenMs, metric::kInterTokenLatencyMs,
                                   metric::kEndToEndLatencyMs, metric::kAggregateTokensPerSecond,
                                   metric::kRequestsPerSecond, metric::kGoodputPerSecond}));
}

TEST(TrialWorkload, ServedGoodputCountsOnlyRequestsWithinTheObjective) {
  // A first token within a microsecond: no request meets it.
  const auto m = run(config_for(served(2, 8, 3, 0.001), 128, 2));
  for (int64_t rep : {1, 2}) {
    EXPECT_EQ(value_of(m, metric::kGoodputPerSecond, rep), 0.0);
    EXPECT_GT(value_of(m, metric::kRequestsPerSecond, rep), 0.0);
  }
}

TEST(TrialWorkload, ServedWorkloadNeedsAClient) {
  auto m = run_trial(fixture_model(), config_for(served(0, 8, 3, 0), 128, 2), kTwoReps, kEnvironment);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("workload.clients"), std::string::npos) << m.error().message;
}

TEST(TrialWorkload, WithoutWarmupRepetitionsCountFromZero) {
  TrialSettings settings = kTwoReps;
  settings.warmup = false;
  const auto m = run(config_for(workload("tg", 0, 3), 8), settings);
  std::set<int64_t> reps;
  for (const Sample& s : m.samples) {
    EXPECT_FALSE(s.is_warmup);
    reps.insert(s.repetition);
  }
  EXPECT_EQ(reps, (std::set<int64_t>{0, 1}));
}

TEST(TrialWorkload, StopsAtMinRepsOrMaxReps) {
  const TrialSettings loose{.warmup = false, .min_reps = 2, .max_reps = 6, .ci_target = 1e6};
  auto m = run(config_for(workload("tg", 0, 2), 8), loose);
  EXPECT_EQ(m.repetitions, 2);
  EXPECT_TRUE(m.ci_target_met);
  const TrialSettings impossible{.warmup = false, .min_reps = 2, .max_reps = 4, .ci_target = 0};
  m = run(config_for(workload("tg", 0, 2), 8), impossible);
  // A zero target is met only by identical timings, which a clock of ns does not give.
  EXPECT_EQ(m.repetitions, 4);
  EXPECT_FALSE(m.ci_target_met);
}

TEST(TrialWorkload, StopFlagEndsTheTrialBeforeTheNextRepetition) {
  std::atomic<bool> stop{true};
  auto m = run_trial(fixture_model(), config_for(workload("tg", 0, 2), 8), kTwoReps, kEnvironment, &stop);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->repetitions, 0);
  EXPECT_TRUE(m->samples.empty());
}

TEST(TrialWorkload, ContextTooSmallNamesTheField) {
  auto m = run_trial(fixture_model(), config_for(workload("pp+tg", 16, 8, 16), 32), kTwoReps, kEnvironment);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("'n_ctx'"), std::string::npos) << m.error().message;
  nlohmann::json c = config_for(workload("batched", 4, 4, 0, 4), 32, 4);
  c["n_batch"] = 2;
  c["n_ubatch"] = 2;
  m = run_trial(fixture_model(), c, kTwoReps, kEnvironment);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("'n_batch'"), std::string::npos) << m.error().message;
  c = config_for(workload("tg", 0, 4), 8);
  c["n_gpu_layers"] = 99;
  m = run_trial(fixture_model(), c, kTwoReps, kEnvironment);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("'n_gpu_layers'"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace infertune
