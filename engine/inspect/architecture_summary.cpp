#include "engine/inspect/architecture_summary.h"

#include <fmt/format.h>

#include "engine/model/model_config.h"

namespace infertune {

std::string architecture_summary_text(const GgufFile& file) {
  const Result<ModelConfig> config = read_model_config(file);
  if (!config) return fmt::format("architecture: not loadable: {}", config.error().message);
  const ModelConfig& c = *config;
  const std::string ffn =
      c.is_moe() ? fmt::format("FFN {} experts of {} ({} per token)", c.n_expert, c.n_ff_exp, c.n_expert_used)
                 : fmt::format("FFN {}", c.n_ff);
  return fmt::format(
      "architecture: {}, {} layers, dim {}, {} heads ({} KV heads, head dim {}), {}, vocab {}, "
      "trained context {}, rope base {:g}, rms eps {:g}, {} output\n"
      "model check: ok (hyper-parameters agree with the tensors)",
      c.arch, c.n_layers, c.n_embd, c.n_head, c.n_head_kv, c.head_dim, ffn, c.n_vocab, c.n_ctx_train, c.rope_freq_base,
      c.rms_eps, c.tied_output ? "tied" : "separate");
}

nlohmann::json architecture_summary_json(const GgufFile& file) {
  const Result<ModelConfig> config = read_model_config(file);
  if (!config) return {{"loadable", false}, {"error", config.error().message}};
  const ModelConfig& c = *config;
  return {{"loadable", true},
          {"arch", c.arch},
          {"n_layers", c.n_layers},
          {"n_embd", c.n_embd},
          {"n_head", c.n_head},
          {"n_head_kv", c.n_head_kv},
          {"head_dim", c.head_dim},
          {"n_ff", c.n_ff},
          {"n_vocab", c.n_vocab},
          {"n_ctx_train", c.n_ctx_train},
          {"rope_freq_base", c.rope_freq_base},
          {"rms_eps", c.rms_eps},
          {"tied_output", c.tied_output},
          {"n_expert", c.n_expert},
          {"n_expert_used", c.n_expert_used},
          {"n_ff_exp", c.n_ff_exp}};
}

}  // namespace infertune
