#include "engine/synth/presets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/synth/synthetic_vocab.h"

namespace infertune {
namespace {

struct Shape {
  ModelArch arch;
  uint32_t n_embd, n_layers, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
  float rope_base, rms_eps;
  bool tied;
};

constexpr uint32_t kTinySlidingWindow = 32;
constexpr uint32_t kTinyExperts = 16;
constexpr uint32_t kTinyExpertsUsed = 4;
constexpr uint32_t kTinyExpertFfn = 128;

ModelConfig make_config(const Shape& s) {
  ModelConfig c;
  c.arch = s.arch;
  c.n_embd = s.n_embd;
  c.n_layers = s.n_layers;
  c.n_head = s.n_head;
  c.n_head_kv = s.n_head_kv;
  c.head_dim = s.n_embd / s.n_head;
  c.head_dim_v = c.head_dim;
  c.n_rot = c.head_dim;
  c.n_ff = s.n_ff;
  c.n_vocab = s.n_vocab;
  c.n_ctx_train = s.n_ctx;
  c.rope_freq_base = s.rope_base;
  c.rms_eps = s.rms_eps;
  c.tied_output = s.tied;
  c.tokens.bos = kSynthBosId;
  c.tokens.eos = kSynthEosId;
  c.tokens.unk = kSynthUnkId;
  return c;
}

ModelConfig gemma3_270m() {
  ModelConfig c = make_config({ModelArch::Gemma3, 640, 18, 4, 1, 2048, 262144, 32768, 1000000.0f, 1e-6f, true});
  c.head_dim = c.head_dim_v = c.n_rot = 256;
  c.sliding_window = 512;
  derive_arch_constants(c);
  return c;
}

// Gemma 2: heads of head_dim, every other layer sliding over 4096 positions, attention scores soft-capped at 50 and
// the logits at 30, the output tied.
ModelConfig gemma2(const Shape& s, uint32_t head_dim) {
  ModelConfig c = make_config(s);
  c.head_dim = c.head_dim_v = c.n_rot = head_dim;
  c.sliding_window = 4096;
  c.attn_logit_softcap = 50.0f;
  c.final_logit_softcap = 30.0f;
  derive_arch_constants(c);
  return c;
}

// The tiny gemma2's caps are low enough to change its scores and logits (about unit spread), so that a test notices
// a cap left out; Gemma 2's own 50 and 30 would leave a random tiny model's values alone.
constexpr float kTinyGemma2AttnSoftcap = 2.0f;
constexpr float kTinyGemma2FinalSoftcap = 1.0f;

// Qwen3's heads are 128 wide whatever n_embd / n_head is.
ModelConfig qwen3(const Shape& s) {
  ModelConfig c = make_config(s);
  c.head_dim = c.head_dim_v = c.n_rot = 128;
  return c;
}

// A mixture of experts on top of a dense shape: n_expert experts of width n_ff_exp, n_used per token.
ModelConfig with_experts(ModelConfig c, uint32_t n_expert, uint32_t n_used, uint32_t n_ff_exp) {
  c.n_expert = n_expert;
  c.n_expert_used = n_used;
  c.n_ff_exp = n_ff_exp;
  return c;
}

ModelConfig with_shared_expert(ModelConfig c, uint32_t n_ff_shexp) {
  c.n_ff_shexp = n_ff_shexp;
  return c;
}

// gpt-oss: 64-wide heads, YaRN stretching a 4096-token rope (base 150000) 32 times, every other layer sliding over
// 128 positions.
ModelConfig gpt_oss(ModelConfig c, uint32_t head_dim, uint32_t sliding_window) {
  c.head_dim = c.head_dim_v = c.n_rot = head_dim;
  c.rope_freq_base = 150000.0f;
  c.rope_scaling_type = "yarn";
  c.rope_scaling_factor = 32.0f;
  c.rope_scaling_orig_ctx = 4096;
  c.sliding_window = sliding_window;
  derive_arch_constants(c);
  return c;
}

// phi3 with LongRoPE: frequency factors for contexts past orig_ctx, and cos and sin scaled as llama.cpp's converter
// computes it from the stretch s = context_length / orig_ctx: sqrt(1 + ln s / ln orig_ctx).
ModelConfig with_longrope(ModelConfig c, uint32_t orig_ctx) {
  c.has_longrope_factors = true;
  c.rope_scaling_orig_ctx = orig_ctx;
  const double stretch = static_cast<double>(c.n_ctx_train) / orig_ctx;
  c.rope_scaling_attn_factor =
      stretch > 1 ? static_cast<float>(std::sqrt(1 + std::log(stretch) / std::log(static_cast<double>(orig_ctx)))) : 1;
  return c;
}

// Only the first n_rot dimensions of each head rotate (Phi-4-mini: 96 of 128).
ModelConfig with_partial_rope(ModelConfig c, uint32_t n_rot) {
  c.n_rot = n_rot;
  return c;
}

constexpr uint32_t kPhi3OriginalContext = 4096;
constexpr uint32_t kTinyPhi3OriginalContext = 256;  // a test's -c 512 takes the long factors, -c 256 the short

const std::vector<SynthPreset>& preset_table() {
  using enum ModelArch;
  static const std::vector<SynthPreset> presets = {
      // The shape of ../shared/fixtures/models/fixture-{llama,qwen2}-f32.gguf; the one preset that takes
      // any --arch (llama unless given), as the fixtures exist in both.
      {"tiny", "dim 256, 4 layers, GQA 8/2, ffn 512, vocab 512 (like fixture-llama-f32); any --arch",
       make_config({Llama, 256, 4, 8, 2, 512, 512, 2048, 10000.0f, 1e-5f, false}), true},
      {"llama-1b", "Llama-3.2-1B shape (tied output)",
       make_config({Llama, 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0f, 1e-5f, true})},
      {"llama-3b", "Llama-3.2-3B shape (tied output)",
       make_config({Llama, 3072, 28, 24, 8, 8192, 128256, 131072, 500000.0f, 1e-5f, true})},
      {"llama-8b", "Llama-3-8B shape",
       make_config({Llama, 4096, 32, 32, 8, 14336, 128256, 8192, 500000.0f, 1e-5f, false})},
      {"qwen2.5-0.5b", "Qwen2.5-0.5B shape (tied output)",
       make_config({Qwen2, 896, 24, 14, 2, 4864, 151936, 32768, 1000000.0f, 1e-6f, true})},
      {"qwen2.5-1.5b", "Qwen2.5-1.5B shape (tied output)",
       make_config({Qwen2, 1536, 28, 12, 2, 8960, 151936, 32768, 1000000.0f, 1e-6f, true})},
      {"qwen2.5-7b", "Qwen2.5-7B shape",
       make_config({Qwen2, 3584, 28, 28, 4, 18944, 152064, 32768, 1000000.0f, 1e-6f, false})},
      {"gemma3-270m", "Gemma-3-270M shape (tied output, 256-wide heads, sliding window 512)", gemma3_270m()},
      {"gemma2-2b", "Gemma-2-2B shape (256-wide heads, every other layer sliding over 4096, soft caps 50 and 30)",
       gemma2({Gemma2, 2304, 26, 8, 4, 9216, 256000, 8192, 10000.0f, 1e-6f, true}, 256)},
      {"gemma2-9b", "Gemma-2-9B shape",
       gemma2({Gemma2, 3584, 42, 16, 8, 14336, 256000, 8192, 10000.0f, 1e-6f, true}, 256)},
      {"gemma2-27b", "Gemma-2-27B shape (queries scaled by n_embd / n_head)",
       gemma2({Gemma2, 4608, 46, 32, 16, 36864, 256000, 8192, 10000.0f, 1e-6f, true}, 128)},
      {"qwen3-0.6b", "Qwen3-0.6B shape (tied output, 128-wide heads)",
       qwen3({Qwen3, 1024, 28, 16, 8, 3072, 151936, 40960, 1000000.0f, 1e-6f, true})},
      {"qwen3-8b", "Qwen3-8B shape", qwen3({Qwen3, 4096, 36, 32, 8, 12288, 151936, 40960, 1000000.0f, 1e-6f, false})},
      {"qwen3-30b-a3b", "Qwen3-30B-A3B shape (128 experts of 768, 8 per token)",
       with_experts(qwen3({Qwen3Moe, 2048, 48, 32, 4, 6144, 151936, 40960, 1000000.0f, 1e-6f, false}), 128, 8, 768)},
      {"qwen1.5-moe-a2.7b", "Qwen1.5-MoE-A2.7B shape (60 experts of 1408, 4 per token, a shared expert of 5632)",
       with_shared_expert(
           with_experts(make_config({Qwen2Moe, 2048, 24, 16, 16, 5632, 151936, 8192, 1000000.0f, 1e-6f, false}), 60, 4,
                        1408),
           5632)},
      {"gpt-oss-20b", "gpt-oss-20b shape (32 experts of 2880, 4 per token, sinks, sliding window 128)",
       gpt_oss(with_experts(make_config({GptOss, 2880, 24, 64, 8, 2880, 201088, 131072, 150000.0f, 1e-5f, false}), 32,
                            4, 2880),
               64, 128)},
      {"gpt-oss-120b", "gpt-oss-120b shape (128 experts of 2880, 4 per token, sinks, sliding window 128)",
       gpt_oss(with_experts(make_config({GptOss, 2880, 36, 64, 8, 2880, 201088, 131072, 150000.0f, 1e-5f, false}), 128,
                            4, 2880),
               64, 128)},
      {"phi-3-mini", "Phi-3-mini-4k shape (fused q/k/v and gate/up)",
       make_config({Phi3, 3072, 32, 32, 32, 8192, 32064, 4096, 10000.0f, 1e-5f, false})},
      {"phi-3.5-mini", "Phi-3.5-mini shape (LongRoPE from 4096 to 131072)",
       with_longrope(make_config({Phi3, 3072, 32, 32, 32, 8192, 32064, 131072, 10000.0f, 1e-5f, false}),
                     kPhi3OriginalContext)},
      {"phi-4", "Phi-4 (14B) shape",
       make_config({Phi3, 5120, 40, 40, 10, 17920, 100352, 16384, 250000.0f, 1e-5f, false})},
      {"phi-4-mini", "Phi-4-mini shape (tied output, LongRoPE, 96 of 128 dimensions rotated)",
       with_partial_rope(
           with_longrope(make_config({Phi3, 3072, 32, 24, 8, 8192, 200064, 131072, 10000.0f, 1e-5f, true}),
                         kPhi3OriginalContext),
           96)},
      {"mixtral-8x7b", "Mixtral-8x7B shape (8 experts of 14336, 2 per token)",
       with_experts(make_config({Llama, 4096, 32, 32, 8, 14336, 32000, 32768, 1000000.0f, 1e-5f, false}), 8, 2, 14336)},
  };
  return presets;
}

// "--heads 8", marked "(the preset's)" when the flag was not given: errors name what to change.
std::string describe(std::string_view flag, const std::optional<uint32_t>& override, uint32_t value) {
  return fmt::format("{} {}{}", flag, value, override ? "" : " (the preset's)");
}

Status check_nonzero(const ShapeOverrides& o) {
  const std::pair<const char*, const std::optional<uint32_t>*> flags[] = {
      {"--dim", &o.n_embd}, {"--layers", &o.n_layers}, {"--heads", &o.n_head}, {"--kv-heads", &o.n_head_kv},
      {"--ffn", &o.n_ff},   {"--vocab", &o.n_vocab},   {"--ctx", &o.n_ctx},
  };
  for (const auto& [flag, value] : flags) {
    if (*value && **value == 0) return fail("{} 0: must be at least 1", flag);
  }
  return {};
}

// --experts, --experts-used and --expert-ffn. A llama expert is as wide as --ffn (Mixtral's files say no other
// width); --experts 0 makes a llama dense again.
Status apply_expert_overrides(ModelConfig& c, const ShapeOverrides& o) {
  if (!o.n_expert && !o.n_expert_used && !o.n_ff_exp) {
    if (c.arch == ModelArch::Llama && c.is_moe()) c.n_ff_exp = c.n_ff;
    return {};
  }
  if (c.arch != ModelArch::Llama && !is_moe_arch(c.arch)) {
    return fail("--experts: {} has no mixture-of-experts form (llama, qwen2moe, qwen3moe and gpt-oss have)",
                model_arch_name(c.arch));
  }
  c.n_expert = o.n_expert.value_or(c.n_expert);
  if (c.n_expert == 0) {
    if (is_moe_arch(c.arch)) return fail("--experts 0: a {} model has experts", c.arch);
    c.n_expert_used = c.n_ff_exp = 0;
    return {};
  }
  c.n_expert_used = o.n_expert_used.value_or(c.n_expert_used != 0 ? c.n_expert_used : std::min(2u, c.n_expert));
  if (c.n_expert_used == 0 || c.n_expert_used > c.n_expert) {
    return fail("{} must be between 1 and {}", describe("--experts-used", o.n_expert_used, c.n_expert_used),
                describe("--experts", o.n_expert, c.n_expert));
  }
  if (c.arch == ModelArch::Llama) {
    if (o.n_ff_exp) return fail("--expert-ffn: a llama expert is as wide as --ffn");
    c.n_ff_exp = c.n_ff;
    return {};
  }
  c.n_ff_exp = o.n_ff_exp.value_or(c.n_ff_exp != 0 ? c.n_ff_exp : c.n_ff);
  if (c.n_ff_exp == 0) return fail("--expert-ffn 0: must be at least 1");
  return {};
}

// A head size of n_embd / n_head must be whole and even (rope rotates pairs).
Status check_head_split(const ModelConfig& c, const ShapeOverrides& o) {
  if (c.n_embd % c.n_head != 0) {
    return fail("{} is not divisible by {} (the head size must be whole)", describe("--dim", o.n_embd, c.n_embd),
                describe("--heads", o.n_head, c.n_head));
  }
  if (c.n_embd / c.n_head % 2 != 0) {
    return fail("{} / {} gives an odd head size {}: rotary embeddings need an even one",
                describe("--dim", o.n_embd, c.n_embd), describe("--heads", o.n_head, c.n_head), c.n_embd / c.n_head);
  }
  return {};
}

Result<ModelConfig> apply_overrides(ModelConfig c, const ShapeOverrides& o) {
  if (Status s = check_nonzero(o); !s) return s.error();
  c.n_embd = o.n_embd.value_or(c.n_embd);
  c.n_layers = o.n_layers.value_or(c.n_layers);
  c.n_head = o.n_head.value_or(c.n_head);
  c.n_head_kv = o.n_head_kv.value_or(c.n_head_kv);
  c.n_ff = o.n_ff.value_or(c.n_ff);
  c.n_vocab = o.n_vocab.value_or(c.n_vocab);
  c.n_ctx_train = o.n_ctx.value_or(c.n_ctx_train);
  if (Status s = apply_expert_overrides(c, o); !s) return s.error();
  if (c.n_head % c.n_head_kv != 0) {
    return fail("{} does not divide {} (each KV head serves a whole number of query heads)",
                describe("--kv-heads", o.n_head_kv, c.n_head_kv), describe("--heads", o.n_head, c.n_head));
  }
  if (c.n_vocab < kSynthMinVocab) {
    return fail("--vocab {}: the synthetic vocabulary needs at least {} tokens (3 special + 256 byte tokens)",
                c.n_vocab, kSynthMinVocab);
  }
  // A preset's own head size (gemma3's, qwen3's and gpt-oss's are not n_embd / n_head) holds until --dim or --heads
  // changes the shape.
  if (o.n_embd || o.n_head || c.head_dim == 0) {
    if (Status s = check_head_split(c, o); !s) return s.error();
    c.head_dim = c.n_embd / c.n_head;
    c.head_dim_v = c.head_dim;
    c.n_rot = c.head_dim;
  }
  derive_arch_constants(c);
  if (Status s = validate_hparams(c); !s) return s.error();
  return c;
}

}  // namespace

std::span<const SynthPreset> synth_presets() { return preset_table(); }

const SynthPreset* find_synth_preset(std::string_view name) {
  for (const SynthPreset& p : preset_table()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string synth_preset_names() {
  std::string names;
  for (const SynthPreset& p : preset_table()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

Result<ResolvedModel> resolve_synth_model(const std::optional<std::string>& arch,
                                          const std::optional<std::string>& preset, const ShapeOverrides& overrides) {
  std::optional<ModelArch> wanted_arch;
  if (arch) {
    wanted_arch = model_arch_from_name(*arch);
    if (!wanted_arch) return fail("--arch '{}' is not supported (supported: {})", *arch, supported_arch_names());
  }
  const SynthPreset* chosen = nullptr;
  if (preset) {
    chosen = find_synth_preset(*preset);
    if (!chosen) return fail("--preset '{}' is unknown (presets: {})", *preset, synth_preset_names());
    if (wanted_arch && chosen->config.arch != *wanted_arch && !chosen->any_arch) {
      return fail("--preset {} is a {} model, but --arch {} was given", *preset, model_arch_name(chosen->config.arch),
                  *arch);
    }
  } else if (wanted_arch) {
    chosen = find_synth_preset("tiny");
  } else {
    return fail("give --preset (one of: {}) or --arch", synth_preset_names());
  }
  ModelConfig base = chosen->config;
  if (wanted_arch) base.arch = *wanted_arch;
  // The tiny gemma2 and gemma3 slide over a window short enough for test prompts to cross it.
  if (base.arch == ModelArch::Gemma3 && base.sliding_window == 0) base.sliding_window = kTinySlidingWindow;
  if (base.arch == ModelArch::Gemma2 && chosen->any_arch) {
    base.sliding_window = kTinySlidingWindow;
    base.attn_logit_softcap = kTinyGemma2AttnSoftcap;
    base.final_logit_softcap = kTinyGemma2FinalSoftcap;
    base.tied_output = true;
  }
  // The tiny qwen3moe, qwen2moe and gpt-oss: enough experts that a test prompt's tokens go to different ones.
  if (is_moe_arch(base.arch) && !base.is_moe()) {
    base = with_experts(base, kTinyExperts, kTinyExpertsUsed, kTinyExpertFfn);
  }
  if (base.arch == ModelArch::Qwen2Moe && !base.has_shared_expert()) base = with_shared_expert(base, base.n_ff);
  if (base.arch == ModelArch::GptOss && base.sliding_window == 0)
    base = gpt_oss(base, base.head_dim, kTinySlidingWindow);
  // The tiny phi3 has what the Phi-3.5 and Phi-4-mini files have: LongRoPE factors and a partly rotated head.
  if (base.arch == ModelArch::Phi3 && chosen->any_arch) {
    base = with_partial_rope(with_longrope(base, kTinyPhi3OriginalContext), base.n_rot * 3 / 4);
  }
  auto config = apply_overrides(std::move(base), overrides);
  if (!config) return config.error();
  return ResolvedModel{std::string(chosen->name), std::move(*config)};
}

}  // namespace infertune
