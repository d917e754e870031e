#include "bench/llama_bench/bench_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <exception>
#include <thread>
#include <vector>

#include "bench/llama_bench/context_setup.h"
#include "bench/llama_bench/token_feed.h"
#include "bench/llama_bench/verbose_notes.h"
#include "engine/arch/op_profile.h"
#include "engine/context/context.h"
#include "engine/threading/placed_pool.h"
#include "kernels/onednn/gemm_selection.h"

namespace infertune {
namespace {

// Brings the cache to the test's starting point: empty, then -d positions. The depth is computed for the
// first repetition only; later ones drop what the previous repetition added (llama-bench restores a saved
// state instead: the same cache contents).
Status reset_to_depth(Context& ctx, const BenchTest& test, bool first, RandomTokens& tokens) {
  if (!first) return ctx.kv_cache().seq_rm(0, test.n_depth, -1);
  ctx.clear();
  return eval_prompt(ctx, test.n_depth, test.n_batch(), tokens);
}

// llama-bench's warmup: the prompt once, one generated token.
Status warm_up(Context& ctx, const BenchTest& test, RandomTokens& tokens) {
  if (test.n_prompt > 0) {
    if (Status s = eval_prompt(ctx, test.n_prompt, test.n_batch(), tokens); !s) return s;
  }
  if (test.n_gen > 0) return eval_gen(ctx, 1, tokens);
  return {};
}

// One repetition: back to the depth (untimed), then the prompt and the generated tokens, timed; in ns.
Result<uint64_t> time_repetition(Context& ctx, const BenchTest& test, bool first, RandomTokens& tokens) {
  if (Status s = reset_to_depth(ctx, test, first, tokens); !s) return s.error();
  const auto start = std::chrono::steady_clock::now();
  if (Status s = eval_prompt(ctx, test.n_prompt, test.n_batch(), tokens); !s) return s.error();
  if (Status s = eval_gen(ctx, test.n_gen, tokens); !s) return s.error();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// What multiplied the float weights since `before`. One-token products (a tg test) never reach the
// selection: they always run our kernels.
std::string gemm_text(const ModelFacts& facts, const std::vector<GemmShapeRuns>& before) {
  if (!facts.float_weights) return "";
  const GemmSelector& selector = gemm_selector();
  const std::string text = gemm_usage_text(gemm_usage_between(selector.mode(), before, selector.shape_runs()));
  return text.empty() ? "own" : text;
}

}  // namespace

Status BenchRunner::ensure_model(const BenchTest& test, size_t index) {
  if (loaded_for_ && loaded_for_->same_model_load(test)) {
    return load_error_.empty() ? Status{} : Status(fail("{}", load_error_));
  }
  gpu_weights_.clear();  // free the previous model's GPU upload and the model before loading the next
  model_.reset();
  facts_.reset();
  loaded_for_ = test;
  load_error_.clear();
  progress_.step(index, test_name(test), "loading " + test.model);
  const auto start = std::chrono::steady_clock::now();
  auto model = Model::load(test.model, {.use_mmap = test.settings.use_mmap, .repack = test.settings.repack});
  if (!model) {
    load_error_ = "cannot load the model: " + model.error().message;
    return fail("{}", load_error_);
  }
  for (const std::string& warning : model->warnings()) progress_.note("warning: " + warning);
  model_ = std::move(*model);
  facts_ = model_facts(*model_);
  if (params_.verbose) {
    const std::chrono::duration<double, std::milli> load_time = std::chrono::steady_clock::now() - start;
    progress_.note(load_note(test, model_->config().n_layers, *facts_, load_time.count()));
  }
  return {};
}

Status BenchRunner::measure(const BenchTest& test, size_t index, BenchResult& result) {
  const std::string name = test_name(test);
  if (Status s = check_engine_support(test); !s) return s;
  if (Status s = ensure_model(test, index); !s) return s;
  result.model = facts_;
  if (Status s = check_context_fits(model_->config(), test); !s) return s;

  auto placed = make_test_context(*model_, test, &gpu_weights_);
  if (!placed) return placed.error();
  for (const std::string& warning : placed->warnings) progress_.note(fmt::format("{}: warning: {}", name, warning));
  result.threads_used = placed->placed->plan.n_threads;
  if (params_.verbose) {
    for (const std::string& note : test_notes(name, test, placed->placed->plan)) progress_.note(note);
  }
  Context* ctx = placed->context.get();

  if (params_.delay_seconds > 0) {
    progress_.step(index, name, fmt::format("waiting {} s (--delay)", params_.delay_seconds));
    std::this_thread::sleep_for(std::chrono::seconds(params_.delay_seconds));
  }
  RandomTokens tokens(ctx->n_vocab());
  if (params_.warmup) {
    progress_.step(index, name, "warmup");
    if (Status s = warm_up(*ctx, test, tokens); !s) return s;
  }
  const std::vector<GemmShapeRuns> gemm_before = gemm_selector().shape_runs();
  if (params_.profile) OpProfile::enable(true);
  for (int rep = 0; rep < params_.repetitions; ++rep) {
    progress_.step(index, name, fmt::format("repetition {}/{}", rep + 1, params_.repetitions));
    auto ns = time_repetition(*ctx, test, rep == 0, tokens);
    if (!ns) {
      OpProfile::enable(false);
      return ns.error();
    }
    result.samples_ns.push_back(*ns);
  }
  if (params_.profile) {
    result.profile = OpProfile::totals();
    OpProfile::enable(false);
  }
  result.gemm = gemm_text(*facts_, gemm_before);
  return {};
}

BenchResult BenchRunner::run(const BenchTest& test, size_t index) {
  BenchResult result;
  result.test = test;
  result.test_time = utc_now();
  Status status;
  try {
    status = measure(test, index, result);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: one failed test must not end the run
    status = fail("{}", e.what());
  }
  if (!status) {
    result.error = status.error().message;
    result.samples_ns.clear();
  }
  return result;
}

}  // namespace infertune
