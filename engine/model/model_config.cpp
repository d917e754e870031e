#include "engine/model/model_config.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <unordered_map>

#include "engine/model/arch_tensors.h"
#include "engine/tokenizer/tokenizer_metadata.h"

namespace infertune {
namespace {

struct ArchName {
  ModelArch arch;
  std::string_view name;
  RopeStyle rope;
};

constexpr ArchName kArchNames[] = {
    {ModelArch::Llama, "llama", RopeStyle::Interleaved}, {ModelArch::Qwen2, "qwen2", RopeStyle::Neox},
    {ModelArch::Gemma2, "gemma2", RopeStyle::Neox},      {ModelArch::Gemma3, "gemma3", RopeStyle::Neox},
    {ModelArch::Qwen3, "qwen3", RopeStyle::Neox},        {ModelArch::Qwen3Moe, "qwen3moe", RopeStyle::Neox},
    {ModelArch::Qwen2Moe, "qwen2moe", RopeStyle::Neox},  {ModelArch::GptOss, "gpt-oss", RopeStyle::Neox},
    {ModelArch::Phi3, "phi3", RopeStyle::Neox},
};

// Reads the `{arch}.*` keys of one file; every error names the full key.
class KeyReader {
 public:
  KeyReader(const GgufFile& file, ModelArch arch) : file_(file), prefix_(std::string(model_arch_name(arch)) + ".") {}

  std::string key(std::string_view suffix) const { return prefix_ + std::string(suffix); }
  bool has(std::string_view suffix) const { return file_.find(key(suffix)) != nullptr; }

  Result<uint32_t> u32(std::string_view suffix) const { return u32_key(key(suffix)); }
  Result<uint32_t> u32_or(std::string_view suffix, uint32_t fallback) const {
    return has(suffix) ? u32(suffix) : Result<uint32_t>(fallback);
  }
  Result<float> f32_or(std::string_view suffix, float fallback) const {
    if (!has(suffix)) return fallback;
    auto value = file_.get_float(key(suffix));
    if (!value) return value.error();
    return static_cast<float>(*value);
  }

  Result<uint32_t> u32_key(const std::string& full_key) const {
    if (!file_.find(full_key)) return fail("missing key '{}'", full_key);
    auto value = file_.get_uint(full_key);
    if (!value) return value.error();
    if (*value > std::numeric_limits<uint32_t>::max()) return fail("{} = {} does not fit 32 bits", full_key, *value);
    return static_cast<uint32_t>(*value);
  }

 private:
  const GgufFile& file_;
  std::string prefix_;
};

Status read_attention(const KeyReader& keys, ModelConfig& c) {
  auto n_head = keys.u32("attention.head_count");
  if (!n_head) return n_head.error();
  c.n_head = *n_head;
  auto n_head_kv = keys.u32_or("attention.head_count_kv", c.n_head);
  if (!n_head_kv) return n_head_kv.error();
  c.n_head_kv = *n_head_kv;
  if (keys.has("attention.key_length")) {
    auto head_dim = keys.u32("attention.key_length");
    if (!head_dim) return head_dim.error();
    c.head_dim = *head_dim;
  } else if (c.n_head != 0) {
    if (c.n_embd % c.n_head != 0) {
      return fail("{} = {} is not divisible by {} = {}, and {} is not set to give the head size",
                  keys.key("embedding_length"), c.n_embd, keys.key("attention.head_count"), c.n_head,
                  keys.key("attention.key_length"));
    }
    c.head_dim = c.n_embd / c.n_head;
  }
  auto head_dim_v = keys.u32_or("attention.value_length", c.head_dim);
  if (!head_dim_v) return head_dim_v.error();
  c.head_dim_v = *head_dim_v;
  // Present but NaN is a bad value (validate_hparams says so), not a missing key.
  if (!keys.has("attention.layer_norm_rms_epsilon")) {
    return fail("missing key '{}'", keys.key("attention.layer_norm_rms_epsilon"));
  }
  auto eps = keys.f32_or("attention.layer_norm_rms_epsilon", 0.0f);
  if (!eps) return eps.error();
  c.rms_eps = *eps;
  return {};
}

Status read_rope(const GgufFile& file, const KeyReader& keys, ModelConfig& c) {
  auto n_rot = keys.u32_or("rope.dimension_count", c.head_dim);
  if (!n_rot) return n_rot.error();
  c.n_rot = *n_rot;
  auto base = keys.f32_or("rope.freq_base", 10000.0f);
  if (!base) return base.error();
  c.rope_freq_base = *base;
  if (keys.has("rope.scaling.type")) {
    auto type = file.get_string(keys.key("rope.scaling.type"));
    if (!type) return type.error();
    c.rope_scaling_type = std::string(*type);
  }
  // Older files give a linear factor as rope.scale_linear instead of rope.scaling.*.
  const bool old_linear = !keys.has("rope.scaling.factor") && keys.has("rope.scale_linear");
  auto factor = keys.f32_or(old_linear ? "rope.scale_linear" : "rope.scaling.factor", 1.0f);
  if (!factor) return factor.error();
  c.rope_scaling_factor = *factor;
  // llama.cpp reads an absent rope.scaling.type as linear: a factor alone scales linearly.
  if (!keys.has("rope.scaling.type") && c.rope_scaling_factor != 1.0f) c.rope_scaling_type = "linear";
  auto orig = keys.u32_or("rope.scaling.original_context_length", 0);
  if (!orig) return orig.error();
  c.rope_scaling_orig_ctx = *orig;
  auto attn_factor = keys.f32_or("rope.scaling.attn_factor", 1.0f);
  if (!attn_factor) return attn_factor.error();
  c.rope_scaling_attn_factor = *attn_factor;
  return {};
}

// What embedding models add: the pooling of their token states, and whether attention is causal.
Status read_embedding_keys(const GgufFile& file, const KeyReader& keys, ModelConfig& c) {
  auto pooling = keys.u32_or("pooling_type", 0);
  if (!pooling) return pooling.error();
  c.pooling_type = *pooling;
  if (keys.has("attention.causal")) {
    auto causal = file.get_bool(keys.key("attention.causal"));
    if (!causal) return causal.error();
    c.causal_attention = *causal;
  }
  return {};
}

Status read_gemma3(const KeyReader& keys, ModelConfig& c) {
  auto window = keys.u32_or("attention.sliding_window", 0);
  if (!window) return window.error();
  c.sliding_window = *window;
  auto cap = keys.f32_or("final_logit_softcapping", 0.0f);
  if (!cap) return cap.error();
  c.final_logit_softcap = *cap;
  derive_arch_constants(c);
  return {};
}

// gemma2: every other layer slides (over 4096 positions when the file does not say), every attention score and the
// logits are soft-capped (50 and 30 when the file does not say: llama.cpp's defaults, Gemma 2's values), and the
// sliding layers may have a rope base of their own.
constexpr uint32_t kGemma2DefaultWindow = 4096;
constexpr float kGemma2DefaultAttnSoftcap = 50.0f;
constexpr float kGemma2DefaultFinalSoftcap = 30.0f;

Status read_gemma2(const KeyReader& keys, ModelConfig& c) {
  auto window = keys.u32_or("attention.sliding_window", kGemma2DefaultWindow);
  if (!window) return window.error();
  c.sliding_window = *window;
  auto attn_cap = keys.f32_or("attn_logit_softcapping", kGemma2DefaultAttnSoftcap);
  if (!attn_cap) return attn_cap.error();
  c.attn_logit_softcap = *attn_cap;
  auto final_cap = keys.f32_or("final_logit_softcapping", kGemma2DefaultFinalSoftcap);
  if (!final_cap) return final_cap.error();
  c.final_logit_softcap = *final_cap;
  auto swa_base = keys.f32_or("rope.freq_base_swa", 0.0f);
  if (!swa_base) return swa_base.error();
  derive_arch_constants(c);
  c.rope_freq_base_swa = *swa_base;
  return {};
}

// gpt-oss: every other layer (the even ones) slides over the last sliding_window positions, with the model's rope.
Status read_gpt_oss(const KeyReader& keys, ModelConfig& c) {
  auto window = keys.u32("attention.sliding_window");
  if (!window) return window.error();
  c.sliding_window = *window;
  derive_arch_constants(c);
  return {};
}

// The experts of a mixture-of-experts block. An expert is as wide as the dense feed-forward in llama's
// (Mixtral's) files; qwen3moe stores its width, and llama.cpp falls back to n_ff / n_expert_used without it.
Status read_experts(const KeyReader& keys, ModelConfig& c) {
  auto n_expert = keys.u32_or("expert_count", 0);
  if (!n_expert) return n_expert.error();
  c.n_expert = *n_expert;
  if (c.n_expert == 0) {
    if (is_moe_arch(c.arch)) return fail("missing key '{}' (a {} model has experts)", keys.key("expert_count"), c.arch);
    return {};
  }
  if (c.arch != ModelArch::Llama && !is_moe_arch(c.arch)) {
    return fail(
        "{} = {}: mixture-of-experts {} models are not supported (supported: llama, qwen2moe, qwen3moe, gpt-oss)",
        keys.key("expert_count"), c.n_expert, model_arch_name(c.arch));
  }
  auto n_used = keys.u32("expert_used_count");
  if (!n_used) return n_used.error();
  c.n_expert_used = *n_used;
  if (c.arch == ModelArch::Llama) {
    c.n_ff_exp = c.n_ff;
    return {};
  }
  auto width = keys.u32_or("expert_feed_forward_length", c.n_expert_used == 0 ? 0 : c.n_ff / c.n_expert_used);
  if (!width) return width.error();
  c.n_ff_exp = *width;
  if (c.arch != ModelArch::Qwen2Moe) return {};
  // qwen2moe: its experts' weights are the softmax probabilities as they are, and a shared expert, gated by a
  // sigmoid, adds to them.
  auto shared = keys.u32_or("expert_shared_feed_forward_length", c.n_ff);
  if (!shared) return shared.error();
  c.n_ff_shexp = *shared;
  return {};
}

Status read_hparams(const GgufFile& file, ModelConfig& c) {
  const KeyReader keys(file, c.arch);
  for (auto [suffix, field] :
       {std::pair{"block_count", &c.n_layers}, std::pair{"embedding_length", &c.n_embd},
        std::pair{"feed_forward_length", &c.n_ff}, std::pair{"context_length", &c.n_ctx_train}}) {
    auto value = keys.u32(suffix);
    if (!value) return value.error();
    *field = *value;
  }
  if (Status s = read_attention(keys, c); !s) return s;
  if (Status s = read_rope(file, keys, c); !s) return s;
  if (Status s = read_embedding_keys(file, keys, c); !s) return s;
  if (Status s = read_experts(keys, c); !s) return s;
  if (c.arch == ModelArch::Gemma3) return read_gemma3(keys, c);
  if (c.arch == ModelArch::GptOss) return read_gpt_oss(keys, c);
  if (c.arch == ModelArch::Gemma2) return read_gemma2(keys, c);
  // phi3's attention.sliding_window (2047 in Phi-3-mini-4k) is not read: llama.cpp turns it off for phi3 (the files
  // do not say which layers slide), and a model should give the answers llama.cpp gives.
  return {};
}

// A token id key: absent, 0xFFFFFFFF or -1 mean "none".
Result<std::optional<uint32_t>> read_token_id(const GgufFile& file, const std::string& key) {
  if (!file.find(key)) return std::optional<uint32_t>{};
  auto value = file.get_int(key);
  if (!value) return value.error();
  if (*value == -1 || *value == static_cast<int64_t>(kNoTokenId)) return std::optional<uint32_t>{};
  if (*value < 0 || *value > std::numeric_limits<uint32_t>::max())
    return fail("{} = {} is not a token id", key, *value);
  return std::optional<uint32_t>(static_cast<uint32_t>(*value));
}

Status read_special_tokens(const GgufFile& file, ModelConfig& c) {
  const std::pair<const char*, std::optional<uint32_t>*> ids[] = {
      {"tokenizer.ggml.bos_token_id", &c.tokens.bos},       {"tokenizer.ggml.eos_token_id", &c.tokens.eos},
      {"tokenizer.ggml.unknown_token_id", &c.tokens.unk},   {"tokenizer.ggml.padding_token_id", &c.tokens.pad},
      {"tokenizer.ggml.seperator_token_id", &c.tokens.sep},
  };
  for (const auto& [key, field] : ids) {
    auto id = read_token_id(file, key);
    if (!id) return id.error();
    if (*id && **id >= c.n_vocab) {
      return fail("{} = {} is out of range: the vocabulary has {} tokens (ids 0..{})", key, **id, c.n_vocab,
                  c.n_vocab - 1);
    }
    *field = *id;
  }
  return {};
}

// n_vocab comes from token_embd.weight; the tokenizer arrays and {arch}.vocab_size must agree with it.
Status read_vocab_size(const GgufFile& file, const KeyReader& keys, ModelConfig& c) {
  const GgufTensorInfo* embd = file.find_tensor("token_embd.weight");
  if (!embd) return fail("missing tensor 'token_embd.weight' [n_embd, n_vocab]");
  if (embd->dims.size() != 2 || embd->dims[0] != c.n_embd) {
    return fail("tensor 'token_embd.weight': expected [n_embd, n_vocab] = [{}, n_vocab] ({} = {}), found {}", c.n_embd,
                keys.key("embedding_length"), c.n_embd, format_dims(embd->dims));
  }
  if (embd->dims[1] > std::numeric_limits<uint32_t>::max()) {
    return fail("tensor 'token_embd.weight': {} rows is too large a vocabulary", embd->dims[1]);
  }
  c.n_vocab = static_cast<uint32_t>(embd->dims[1]);
  if (keys.has("vocab_size")) {
    auto declared = keys.u32("vocab_size");
    if (!declared) return declared.error();
    if (*declared != c.n_vocab) {
      return fail("{} = {} does not match token_embd.weight {} (n_vocab = {})", keys.key("vocab_size"), *declared,
                  format_dims(embd->dims), c.n_vocab);
    }
  }
  return {};
}

Status check_tokenizer_arrays(const GgufFile& file, const ModelConfig& c) {
  if (Status s = check_tokenizer_metadata(file); !s) return s;
  const std::pair<const char*, GgufValueType> arrays[] = {
      {"tokenizer.ggml.tokens", GgufValueType::STRING},
      {"tokenizer.ggml.scores", GgufValueType::F32},
      {"tokenizer.ggml.token_type", GgufValueType::I32},
  };
  for (const auto& [key, element_type] : arrays) {
    const bool required = element_type == GgufValueType::STRING;
    if (!file.find(key)) {
      if (required) return fail("missing key '{}' (the vocabulary)", key);
      continue;
    }
    auto array = file.get_array(key, element_type);
    if (!array) return array.error();
    if ((*array)->size() != c.n_vocab) {
      return fail("{} has {} entries, expected n_vocab = {} (rows of token_embd.weight)", key, (*array)->size(),
                  c.n_vocab);
    }
  }
  return {};
}

std::string block_range(const KeyReader& keys, uint32_t n_layers) {
  return n_layers == 0 ? fmt::format("{} = 0", keys.key("block_count"))
                       : fmt::format("{} = {}: blocks 0..{}", keys.key("block_count"), n_layers, n_layers - 1);
}

// Every file tensor must be expected with the expected shape; every expected tensor must be present.
Status check_tensor_table(const GgufFile& file, const KeyReader& keys, const ModelConfig& c) {
  const std::vector<TensorSpec> expected = expected_tensors(c);
  std::unordered_map<std::string_view, const TensorSpec*> by_name;
  for (const TensorSpec& spec : expected) by_name.emplace(spec.name, &spec);

  for (const GgufTensorInfo& tensor : file.tensors()) {
    const auto it = by_name.find(tensor.name);
    if (it == by_name.end()) {
      const auto layer = tensor_layer_index(tensor.name);
      if (layer && *layer >= c.n_layers) {
        return fail("tensor '{}' is in block {}, beyond {}", tensor.name, *layer, block_range(keys, c.n_layers));
      }
      return fail("unexpected tensor '{}' for architecture {}", tensor.name, model_arch_name(c.arch));
    }
    const TensorSpec& spec = *it->second;
    if (tensor.dims != spec.dims) {
      return fail("tensor '{}': expected {} = {}, found {}", tensor.name, spec.shape_meaning, format_dims(spec.dims),
                  format_dims(tensor.dims));
    }
  }
  for (const TensorSpec& spec : expected) {
    if (file.find_tensor(spec.name)) continue;
    if (spec.layer >= 0) return fail("missing tensor '{}' ({})", spec.name, block_range(keys, c.n_layers));
    return fail("missing tensor '{}'", spec.name);
  }
  return {};
}

Result<ModelConfig> read_model_config_unprefixed(const GgufFile& file) {
  auto arch_name = file.get_string("general.architecture");
  if (!arch_name) return arch_name.error();
  const auto arch = model_arch_from_name(*arch_name);
  if (!arch) {
    return fail("general.architecture = '{}' is not supported (supported: {})", *arch_name, supported_arch_names());
  }
  ModelConfig c;
  c.arch = *arch;
  if (file.find("general.name")) {
    auto name = file.get_string("general.name");
    if (!name) return name.error();
    c.name = std::string(*name);
  }
  if (file.find("general.file_type")) {
    auto file_type = KeyReader(file, c.arch).u32_key("general.file_type");
    if (!file_type) return file_type.error();
    c.file_type = *file_type;
  }
  if (Status s = read_hparams(file, c); !s) return s.error();
  if (Status s = validate_hparams(c); !s) return s.error();

  const KeyReader keys(file, c.arch);
  c.tied_output = file.find_tensor("output.weight") == nullptr;
  c.has_rope_freqs = file.find_tensor("rope_freqs.weight") != nullptr;
  // Either one expects both: the tensor table then names the one missing.
  c.has_longrope_factors = file.find_tensor("rope_factors_long.weight") != nullptr ||
                           file.find_tensor("rope_factors_short.weight") != nullptr;
  if (Status s = read_vocab_size(file, keys, c); !s) return s.error();
  if (Status s = check_tokenizer_arrays(file, c); !s) return s.error();
  if (Status s = read_special_tokens(file, c); !s) return s.error();
  if (Status s = check_tensor_table(file, keys, c); !s) return s.error();
  return c;
}

}  // namespace

std::string_view model_arch_name(ModelArch arch) {
  for (const ArchName& entry : kArchNames) {
    if (entry.arch == arch) return entry.name;
  }
  return "?";
}

std::optional<ModelArch> model_arch_from_name(std::string_view name) {
  for (const ArchName& entry : kArchNames) {
    if (entry.name == name) return entry.arch;
  }
  return std::nullopt;
}

std::string supported_arch_names() {
  std::string names;
  for (const ArchName& entry : kArchNames) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

bool is_moe_arch(ModelArch arch) {
  return arch == ModelArch::Qwen3Moe || arch == ModelArch::Qwen2Moe || arch == ModelArch::GptOss;
}

bool is_gemma_arch(ModelArch arch) { return arch == ModelArch::Gemma2 || arch == ModelArch::Gemma3; }

RopeStyle rope_style(ModelArch arch) {
  for (const ArchName& entry : kArchNames) {
    if (entry.arch == arch) return entry.rope;
  }
  return RopeStyle::Interleaved;
}

// What llama.cpp fixes rather than reading it from the file. gemma3: five sliding layers for every global one, a rope
// base of 10000 on the sliding layers, and the 27B model's query scale by n_embd / n_head; gemma2: every other layer
// slides, and its 27B model scales queries so too; gpt-oss: every other layer slides.
constexpr uint32_t kGemma3SlidingPeriod = 6;
constexpr float kGemma3SlidingRopeBase = 10000.0f;
constexpr uint32_t kGemma3_27bLayers = 62;
constexpr uint32_t kGemma2SlidingPeriod = 2;  // llama.cpp's swa pattern 2: even layers slide, odd ones see all
constexpr uint32_t kGemma2_27bLayers = 46;
constexpr uint32_t kGptOssSlidingPeriod = 2;

// 1 / sqrt(dim), 0 for none.
float inverse_sqrt(uint32_t dim) { return dim == 0 ? 0.0f : 1.0f / std::sqrt(static_cast<float>(dim)); }

void derive_arch_constants(ModelConfig& c) {
  if (c.arch == ModelArch::GptOss) {
    c.sliding_window_period = c.sliding_window != 0 ? kGptOssSlidingPeriod : 0;
    return;
  }
  if (c.arch == ModelArch::Gemma2) {
    // Integer division first, as llama.cpp computes it (after gemma_pytorch).
    c.sliding_window_period = c.sliding_window != 0 ? kGemma2SlidingPeriod : 0;
    const bool is_27b = c.n_layers == kGemma2_27bLayers && c.n_head != 0;
    c.attention_scale = inverse_sqrt(is_27b ? c.n_embd / c.n_head : c.head_dim);
    return;
  }
  if (c.arch != ModelArch::Gemma3) return;
  c.sliding_window_period = c.sliding_window != 0 ? kGemma3SlidingPeriod : 0;
  c.rope_freq_base_swa = c.sliding_window != 0 ? kGemma3SlidingRopeBase : 0.0f;
  // Integer division first, as llama.cpp computes it.
  const uint32_t scale_dim = c.n_layers == kGemma3_27bLayers && c.n_head != 0 ? c.n_embd / c.n_head : c.head_dim;
  c.attention_scale = inverse_sqrt(scale_dim);
}

float ModelConfig::attention_score_scale() const {
  if (attention_scale != 0) return attention_scale;
  return head_dim == 0 ? 1.0f : inverse_sqrt(head_dim);
}

// llama.cpp's LLAMA_MAX_EXPERTS: what a router over more experts would be is no model we know.
constexpr uint32_t kMaxExperts = 1024;

Status validate_hparams(const ModelConfig& c) {
  const std::string p = std::string(model_arch_name(c.arch)) + ".";
  const std::pair<const char*, uint32_t> sizes[] = {
      {"block_count", c.n_layers},          {"embedding_length", c.n_embd},
      {"feed_forward_length", c.n_ff},      {"context_length", c.n_ctx_train},
      {"attention.head_count", c.n_head},   {"attention.head_count_kv", c.n_head_kv},
      {"attention.key_length", c.head_dim}, {"attention.value_length", c.head_dim_v},
  };
  for (const auto& [suffix, value] : sizes) {
    if (value == 0) return fail("{}{} = 0: must be at least 1", p, suffix);
  }
  if (c.n_head % c.n_head_kv != 0) {
    return fail("{}attention.head_count_kv = {} does not divide {}attention.head_count = {}", p, c.n_head_kv, p,
                c.n_head);
  }
  if (c.n_rot == 0 || c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
    return fail("{}rope.dimension_count = {}: must be even, at least 2 and at most the head size {}", p, c.n_rot,
                c.head_dim);
  }
  if (!(c.rms_eps > 0) || !std::isfinite(c.rms_eps)) {
    return fail("{}attention.layer_norm_rms_epsilon = {}: must be positive and finite", p, c.rms_eps);
  }
  if (!(c.rope_freq_base > 0) || !std::isfinite(c.rope_freq_base)) {
    return fail("{}rope.freq_base = {}: must be positive and finite", p, c.rope_freq_base);
  }
  const std::string_view scaling = c.rope_scaling_type;
  if (scaling == "longrope") {
    return fail("{}rope.scaling.type = 'longrope' is not supported (supported: none, linear, yarn)", p);
  }
  if (scaling != "none" && scaling != "linear" && scaling != "yarn") {
    return fail("{}rope.scaling.type = '{}' is not supported (none, linear, yarn)", p, scaling);
  }
  if (!(c.rope_scaling_factor > 0) || !std::isfinite(c.rope_scaling_factor)) {
    return fail("{}rope.scaling.factor = {}: must be positive and finite", p, c.rope_scaling_factor);
  }
  if (!(c.final_logit_softcap >= 0) || !std::isfinite(c.final_logit_softcap)) {
    return fail("{}final_logit_softcapping = {}: must be at least 0 and finite", p, c.final_logit_softcap);
  }
  if (!(c.attn_logit_softcap >= 0) || !std::isfinite(c.attn_logit_softcap)) {
    return fail("{}attn_logit_softcapping = {}: must be at least 0 and finite", p, c.attn_logit_softcap);
  }
  if (!(c.rope_freq_base_swa >= 0) || !std::isfinite(c.rope_freq_base_swa)) {
    return fail("{}rope.freq_base_swa = {}: must be positive and finite", p, c.rope_freq_base_swa);
  }
  if (!(c.rope_scaling_attn_factor > 0) || !std::isfinite(c.rope_scaling_attn_factor)) {
    return fail("{}rope.scaling.attn_factor = {}: must be positive and finite", p, c.rope_scaling_attn_factor);
  }
  if (c.is_moe()) {
    if (c.n_expert > kMaxExperts) return fail("{}expert_count = {}: at most {} experts", p, c.n_expert, kMaxExperts);
    if (c.n_expert_used == 0 || c.n_expert_used > c.n_expert) {
      return fail("{}expert_used_count = {}: must be between 1 and {}expert_count = {}", p, c.n_expert_used, p,
                  c.n_expert);
    }
    if (c.n_ff_exp == 0) return fail("{}expert_feed_forward_length = 0: must be at least 1", p);
    if (c.arch == ModelArch::Qwen2Moe && c.n_ff_shexp == 0) {
      return fail("{}expert_shared_feed_forward_length = 0: must be at least 1", p);
    }
  }
  if (c.pooling_type > 4) {
    return fail("{}pooling_type = {}: not a pooling type (0 none, 1 mean, 2 cls, 3 last, 4 rank)", p, c.pooling_type);
  }
  return {};
}

Result<ModelConfig> read_model_config(const GgufFile& file) {
  auto config = read_model_config_unprefixed(file);
  if (!config) return fail("{}: {}", file.source_name(), config.error().message);
  return config;
}

}  // namespace infertune
