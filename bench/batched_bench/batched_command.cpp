// `infertune batched-bench`: llama-batched-bench over this engine. Loads the model once, starts one placed
// thread pool and one Context with enough cells (-c, or the largest N_KV) and sequences (the largest
// -npl), then runs every combination (batched_matrix.h) on it and prints each row as it finishes.
// Exit status 0 when at least one combination ran, 1 when none did or the flags are bad.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "bench/batched_bench/batched_matrix.h"
#include "bench/batched_bench/batched_params.h"
#include "bench/batched_bench/batched_printer.h"
#include "bench/batched_bench/batched_runner.h"
#include "bench/bench_commands.h"
#include "bench/llama_bench/model_facts.h"
#include "engine/model/model.h"
#include "engine/settings/make_context.h"
#include "kernels/ggml_type.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "batched-bench";

void warn(const std::string& text) { fmt::print(stderr, "{}: {}\n", kCommand, text); }

int run_batched_bench(const BatchedFlagText& text, BatchedParams& params) {
  if (Status s = resolve_batched_params(text, params); !s) return report_error(kCommand, s.error().message);
  const std::vector<BatchedCase> cases = expand_cases(params);
  if (cases.empty()) return report_error(kCommand, "nothing to run: -npp, -ntg and -npl give no combination");

  auto model = Model::load(params.model, {.use_mmap = params.settings.use_mmap, .repack = params.settings.repack});
  if (!model) return report_error(kCommand, "cannot load the model: " + model.error().message);
  for (const std::string& w : model->warnings()) warn("warning: " + w);
  const ModelFacts facts = model_facts(*model);

  EngineSettings settings = params.settings;
  ContextParams& cp = settings.context;
  if (cp.n_ctx == 0) cp.n_ctx = static_cast<uint32_t>(std::max<int64_t>(max_n_kv(cases), 1));
  cp.n_seq_max = static_cast<uint32_t>(max_n_pl(cases));
  auto placed = make_context(*model, settings);
  if (!placed) return report_error(kCommand, "cannot create the context: " + placed.error().message);
  for (const std::string& w : placed->warnings) warn("warning: " + w);
  Context* ctx = placed->context.get();
  const PlacementPlan& plan = placed->placed->plan;
  if (params.warmup) {
    if (Status s = warm_up_batched(*ctx); !s) return report_error(kCommand, "warmup: " + s.error().message);
  }

  const BatchedRunInfo run{.model = params.model,
                           .kernel = facts.kernel,
                           .n_kv_max = ctx->n_ctx(),
                           .n_batch = ctx->n_batch(),
                           .n_ubatch = ctx->n_ubatch(),
                           .flash_attn = ctx->flash_attention(),
                           .shared_prompt = params.shared_prompt,
                           .n_threads = plan.n_threads,
                           .n_threads_batch = plan.n_threads_batch,
                           .n_threads_used = plan.n_workers(),
                           .type_k = std::string(ggml_type_name(ctx->params().type_k)),
                           .type_v = std::string(ggml_type_name(ctx->params().type_v))};
  std::unique_ptr<BatchedPrinter> printer = make_batched_printer(stdout, params.output, run);
  printer->header();
  size_t succeeded = 0;
  for (const BatchedCase& c : cases) {
    const BatchedRow row = run_batched_case(*ctx, c);
    if (row.ok()) {
      ++succeeded;
    } else {
      warn(fmt::format("error: pp {}, tg {}, pl {}: {}", c.n_pp, c.n_tg, c.n_pl, row.error));
    }
    printer->row(row);
  }
  printer->footer();
  if (succeeded == 0) return report_error(kCommand, fmt::format("all {} combinations failed", cases.size()));
  return 0;
}

}  // namespace

void add_batched_bench_command(Subcommands& commands) {
  auto text = std::make_shared<BatchedFlagText>();
  auto params = std::make_shared<BatchedParams>();
  CLI::App* app = commands.add(kCommand,
                               "Measure batched decoding as llama-batched-bench does: for each prompt length, "
                               "generation length and number of parallel sequences, the prompt and generation "
                               "speeds of all sequences together",
                               [text, params] { return run_batched_bench(*text, *params); });
  add_batched_flags(*app, *text, *params);
  commands.add_aliases(kCommand, batched_flag_aliases());
}

}  // namespace infertune
