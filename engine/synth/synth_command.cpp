// `infertune synth`: writes a synthetic GGUF model of a preset's shape (optionally overridden).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "engine/engine_commands.h"
#include "engine/synth/presets.h"
#include "engine/synth/synthesizer.h"

namespace infertune {
namespace {

struct SynthFlags {
  std::optional<std::string> arch;
  std::optional<std::string> preset;
  std::string type = "f16";
  bool pure = false;
  uint64_t seed = 1;
  unsigned threads = 0;
  std::string output;
  ShapeOverrides shape;
  // Rope scaling metadata ({arch}.rope.scaling.*), for models that exercise linear and YaRN scaling.
  std::optional<std::string> rope_scaling;
  std::optional<float> rope_scale;
  std::optional<uint32_t> rope_orig_ctx;
  std::optional<float> rope_attn_factor;
  bool list = false;
};

std::string help_text() {
  std::string text = "Presets:\n";
  for (const SynthPreset& p : synth_presets()) text += fmt::format("  {:14} {}\n", p.name, p.description);
  text +=
      "Types (--type; llama-quantize's names, any case; norms and biases stay f32; --pure puts every weight in\n"
      "the base type, e.g. --type q2_k --pure):\n";
  for (const FileType& ft : file_types()) text += fmt::format("  {:14} {}\n", ft.name, ft.summary);
  return text;
}

// A bar redrawn in place on a terminal; a line per 10% otherwise (logs, CI).
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(isatty(fileno(stderr)) != 0), start_(std::chrono::steady_clock::now()) {}

  void operator()(const SynthProgress& p) {
    const double fraction = p.bytes_total == 0 ? 1.0 : static_cast<double>(p.bytes_done) / p.bytes_total;
    const double elapsed = seconds();
    const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
    if (tty_) {
      const int width = 30;
      const int filled = static_cast<int>(fraction * width);
      fmt::print(stderr, "\r[{}{}] {:3.0f}%  {}/{} tensors  {:.1f} s, ETA {:.1f} s ", std::string(filled, '#'),
                 std::string(width - filled, ' '), fraction * 100, p.tensors_done, p.tensors_total, elapsed, eta);
      if (p.tensors_done == p.tensors_total) fmt::print(stderr, "\n");
    } else if (static_cast<int>(fraction * 10) > last_decile_ || p.tensors_done == p.tensors_total) {
      last_decile_ = static_cast<int>(fraction * 10);
      fmt::print(stderr, "synth: {:3.0f}% ({}/{} tensors, {:.1f} s)\n", fraction * 100, p.tensors_done, p.tensors_total,
                 elapsed);
    }
  }

  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  int last_decile_ = 0;
};

// Writes the --rope-* flags into the config; errors name the flag.
Status apply_rope_flags(const SynthFlags& flags, ModelConfig& c) {
  const bool any_value = flags.rope_scale || flags.rope_orig_ctx || flags.rope_attn_factor;
  if (!flags.rope_scaling) {
    if (any_value) return fail("--rope-scale, --rope-orig-ctx and --rope-attn-factor need --rope-scaling linear|yarn");
    return {};
  }
  if (*flags.rope_scaling != "none" && *flags.rope_scaling != "linear" && *flags.rope_scaling != "yarn") {
    return fail("--rope-scaling '{}': must be none, linear or yarn", *flags.rope_scaling);
  }
  if (*flags.rope_scaling == "none" && any_value) return fail("--rope-scaling none takes no other --rope-* flag");
  c.rope_scaling_type = *flags.rope_scaling;
  c.rope_scaling_factor = flags.rope_scale.value_or(1.0f);
  c.rope_scaling_orig_ctx = flags.rope_orig_ctx.value_or(*flags.rope_scaling == "yarn" ? c.n_ctx_train : 0);
  c.rope_scaling_attn_factor = flags.rope_attn_factor.value_or(1.0f);
  const std::pair<const char*, float> positive[] = {{"--rope-scale", c.rope_scaling_factor},
                                                    {"--rope-attn-factor", c.rope_scaling_attn_factor}};
  for (const auto& [flag, value] : positive) {
    if (!(value > 0) || !std::isfinite(value)) return fail("{} {}: must be positive and finite", flag, value);
  }
  if (flags.rope_orig_ctx && *flags.rope_orig_ctx == 0) return fail("--rope-orig-ctx 0: must be at least 1");
  return {};
}

int run_synth(const SynthFlags& flags) {
  if (flags.list) {
    fmt::print("{}", help_text());
    return 0;
  }
  auto model = resolve_synth_model(flags.arch, flags.preset, flags.shape);
  if (!model) return report_error("synth", model.error().message);
  if (Status s = apply_rope_flags(flags, model->config); !s) return report_error("synth", s.error().message);
  const auto file_type = file_type_from_name(flags.type);
  if (!file_type) {
    return report_error("synth", fmt::format("--type '{}' is unknown (types: {})", flags.type, file_type_names()));
  }
  SynthRequest request{model->config, model->preset, *file_type, {flags.pure}, flags.seed, flags.threads};
  const std::string output =
      flags.output.empty() ? fmt::format("{}-{}.gguf", model->preset, file_type->name) : flags.output;

  ProgressPrinter printer;
  auto summary = write_synthetic_model(request, output, [&printer](const SynthProgress& p) { printer(p); });
  if (!summary) return report_error("synth", summary.error().message);
  fmt::print(stderr, "synth: wrote {} ({} {}, {} layers, {:.3f} B params, {} tensors, {:.1f} MiB) in {:.1f} s\n",
             output, model->preset, file_type->name, request.config.n_layers, summary->n_params / 1e9,
             summary->n_tensors, summary->file_bytes / 1048576.0, printer.seconds());
  return 0;
}

}  // namespace

void add_synth_command(Subcommands& commands) {
  auto flags = std::make_shared<SynthFlags>();
  CLI::App* app = commands.add("synth", "Write a synthetic GGUF model (random weights) of a known model's shape",
                               [flags] { return run_synth(*flags); });
  app->footer(help_text());
  app->add_option("--arch", flags->arch, "Architecture: " + supported_arch_names() + " (implied by --preset)");
  app->add_option("--preset", flags->preset, "Model shape: " + synth_preset_names());
  app->add_option("--type", flags->type, "File type: a llama.cpp mix or a single type (default f16)");
  app->add_flag("--pure", flags->pure, "Every weight in --type's base type (no per-tensor mix), as llama-quantize");
  app->add_option("--seed", flags->seed, "Random seed (default 1); the same seed gives the same file");
  app->add_option("-t,--threads", flags->threads, "Threads (default: all hardware threads)");
  app->add_option("-o,--output", flags->output, "Output file (default <preset>-<type>.gguf)");
  app->add_option("--dim", flags->shape.n_embd, "Override the embedding width");
  app->add_option("--layers", flags->shape.n_layers, "Override the number of blocks");
  app->add_option("--heads", flags->shape.n_head, "Override the number of attention heads");
  app->add_option("--kv-heads", flags->shape.n_head_kv, "Override the number of KV heads");
  app->add_option("--ffn", flags->shape.n_ff, "Override the feed-forward width");
  app->add_option("--vocab", flags->shape.n_vocab, "Override the vocabulary size");
  app->add_option("--ctx", flags->shape.n_ctx, "Override the training context length");
  app->add_option("--experts", flags->shape.n_expert,
                  "Experts per block (a mixture of experts: llama as Mixtral, or qwen3moe); 0: dense (llama)");
  app->add_option("--experts-used", flags->shape.n_expert_used, "Experts the router picks per token");
  app->add_option("--expert-ffn", flags->shape.n_ff_exp, "An expert's feed-forward width (qwen3moe; llama's is --ffn)");
  app->add_option("--rope-scaling", flags->rope_scaling, "Write rope scaling metadata: none, linear or yarn");
  app->add_option("--rope-scale", flags->rope_scale, "Rope scaling factor (rope.scaling.factor, default 1)");
  app->add_option("--rope-orig-ctx", flags->rope_orig_ctx,
                  "Original context length (rope.scaling.original_context_length; yarn default: the context length)");
  app->add_option("--rope-attn-factor", flags->rope_attn_factor,
                  "rope.scaling.attn_factor (default 1, which is not written)");
  app->add_flag("--list", flags->list, "List presets and types, then exit");
}

}  // namespace infertune
