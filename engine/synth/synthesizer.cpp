#include "engine/synth/synthesizer.h"

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <span>

#include "engine/quantize/row_encoder.h"
#include "engine/synth/synthetic_vocab.h"
#include "engine/synth/weight_generator.h"

namespace infertune {
namespace {

constexpr uint32_t kGgmlQuantVersion = 2;  // general.quantization_version of current ggml block layouts

GgufValue u32(uint32_t v) { return GgufValue{v}; }
GgufValue f32(float v) { return GgufValue{v}; }
GgufValue str(std::string v) { return GgufValue{std::move(v)}; }

void set_hparams(GgufWriter& w, const ModelConfig& c) {
  const std::string p = std::string(model_arch_name(c.arch)) + ".";
  w.set(p + "context_length", u32(c.n_ctx_train));
  w.set(p + "embedding_length", u32(c.n_embd));
  w.set(p + "block_count", u32(c.n_layers));
  w.set(p + "feed_forward_length", u32(c.n_ff));
  w.set(p + "attention.head_count", u32(c.n_head));
  w.set(p + "attention.head_count_kv", u32(c.n_head_kv));
  // Only when a head is not n_embd / n_head wide, as llama.cpp's converter does.
  if (c.head_dim * c.n_head != c.n_embd) w.set(p + "attention.key_length", u32(c.head_dim));
  if (c.head_dim_v != c.head_dim || c.head_dim * c.n_head != c.n_embd) {
    w.set(p + "attention.value_length", u32(c.head_dim_v));
  }
  w.set(p + "rope.dimension_count", u32(c.n_rot));
  w.set(p + "rope.freq_base", f32(c.rope_freq_base));
  if (c.rope_scaling_type != "none") {
    w.set(p + "rope.scaling.type", str(c.rope_scaling_type));
    w.set(p + "rope.scaling.factor", f32(c.rope_scaling_factor));
  }
  // phi3's LongRoPE has no scaling type, only these two (as llama.cpp's converter writes it).
  if (c.rope_scaling_type != "none" || c.rope_scaling_orig_ctx != 0) {
    w.set(p + "rope.scaling.original_context_length", u32(c.rope_scaling_orig_ctx));
  }
  if (c.rope_scaling_attn_factor != 1.0f) w.set(p + "rope.scaling.attn_factor", f32(c.rope_scaling_attn_factor));
  w.set(p + "attention.layer_norm_rms_epsilon", f32(c.rms_eps));
  if (c.sliding_window != 0) w.set(p + "attention.sliding_window", u32(c.sliding_window));
  if (c.final_logit_softcap != 0) w.set(p + "final_logit_softcapping", f32(c.final_logit_softcap));
  if (c.attn_logit_softcap != 0) w.set(p + "attn_logit_softcapping", f32(c.attn_logit_softcap));
  if (c.is_moe()) {
    w.set(p + "expert_count", u32(c.n_expert));
    w.set(p + "expert_used_count", u32(c.n_expert_used));
    if (c.arch != ModelArch::Llama) w.set(p + "expert_feed_forward_length", u32(c.n_ff_exp));
    if (c.has_shared_expert()) w.set(p + "expert_shared_feed_forward_length", u32(c.n_ff_shexp));
  }
}

// Phi-3's chat markers: llama.cpp sets attributes on <|endoftext|> in any model named phi-3 and fails to load one
// without it; with them a synthetic phi3 also chats in its own format (the server finds the phi3 family by them).
constexpr std::array<std::string_view, 5> kPhi3ChatTokens = {"<|endoftext|>", "<|assistant|>", "<|system|>", "<|end|>",
                                                             "<|user|>"};

Status set_tokenizer(GgufWriter& w, const ModelConfig& c) {
  auto vocab = make_synthetic_vocab(c.n_vocab);
  if (!vocab) return vocab.error();
  if (c.arch == ModelArch::Phi3) {
    if (Status s = add_control_tokens(*vocab, kPhi3ChatTokens); !s) return s;
  }
  w.set("tokenizer.ggml.model", str("llama"));
  w.set("tokenizer.ggml.tokens", GgufValue{GgufArray{std::move(vocab->tokens)}});
  w.set("tokenizer.ggml.scores", GgufValue{GgufArray{std::move(vocab->scores)}});
  w.set("tokenizer.ggml.token_type", GgufValue{GgufArray{std::move(vocab->token_types)}});
  w.set("tokenizer.ggml.bos_token_id", u32(kSynthBosId));
  w.set("tokenizer.ggml.eos_token_id", u32(kSynthEosId));
  w.set("tokenizer.ggml.unknown_token_id", u32(kSynthUnkId));
  return {};
}

uint64_t rows_of(const TensorSpec& spec) {
  uint64_t rows = 1;
  for (size_t i = 1; i < spec.dims.size(); ++i) rows *= spec.dims[i];
  return rows;
}

GgufWriter::TensorFiller make_filler(const SynthRequest& request, const SynthPlan& plan,
                                     const SynthProgressFn& progress) {
  SynthProgress state;
  state.tensors_total = plan.tensors.size();
  for (const GgufTensorInfo& t : plan.writer.tensors()) state.bytes_total += t.n_bytes;
  const unsigned threads = encoder_threads(request.threads);
  return [&request, &plan, progress, state, threads](size_t index, const GgufTensorInfo& info,
                                                     std::span<std::byte> data) mutable -> Status {
    if (index >= plan.tensors.size() || plan.tensors[index].spec.name != info.name) {
      return fail("writer asked for tensor {} '{}', which the plan does not have there", index, info.name);
    }
    const PlannedTensor& tensor = plan.tensors[index];
    const WeightGenerator generator(request.seed, tensor.spec.name, weight_distribution(tensor.spec, request.config));
    const RowEncoding encoding{tensor.spec.name, tensor.type, tensor.spec.dims[0], rows_of(tensor.spec), threads, {}};
    const RowSource source = [&generator](uint64_t r, std::span<float> row) -> Status {
      generator.fill_row(r, row);
      return {};
    };
    if (Status s = encode_rows(encoding, source, data); !s) return s;
    state.tensors_done += 1;
    state.bytes_done += info.n_bytes;
    if (progress) progress(state);
    return {};
  };
}

}  // namespace

Result<SynthPlan> plan_synthetic_model(const SynthRequest& request) {
  const ModelConfig& c = request.config;
  if (Status s = validate_hparams(c); !s) return s.error();
  SynthPlan plan;
  GgufWriter& w = plan.writer;
  w.set("general.architecture", str(std::string(model_arch_name(c.arch))));
  w.set("general.name", str(c.name.empty() ? "synthetic-" + request.preset : c.name));
  set_hparams(w, c);
  w.set("general.file_type", u32(request.file_type.llama_ftype));
  w.set("general.quantization_version", u32(kGgmlQuantVersion));
  // Provenance, so that reports can tell synthetic weights from real ones.
  w.set("infertune.synth.preset", str(request.preset));
  w.set("infertune.synth.seed", GgufValue{request.seed});
  if (Status s = set_tokenizer(w, c); !s) return s.error();

  for (TensorSpec& spec : expected_tensors(c)) {
    const GgmlType type = tensor_type_for(request.file_type, spec, c, request.mix);
    if (Status s = w.add_tensor(spec.name, spec.dims, type); !s) return s.error();
    plan.tensors.push_back({std::move(spec), type});
  }
  return plan;
}

Result<SynthSummary> write_synthetic_model(const SynthRequest& request, const std::string& path,
                                           const SynthProgressFn& progress) {
  auto plan = plan_synthetic_model(request);
  if (!plan) return plan.error();
  if (Status s = plan->writer.write_file(path, make_filler(request, *plan, progress)); !s) return s.error();
  SynthSummary summary;
  std::error_code ec;
  summary.file_bytes = std::filesystem::file_size(path, ec);
  summary.n_tensors = plan->tensors.size();
  for (const GgufTensorInfo& t : plan->writer.tensors()) summary.n_params += t.n_elements;
  return summary;
}

Result<std::vector<std::byte>> synthesize_in_memory(const SynthRequest& request) {
  auto plan = plan_synthetic_model(request);
  if (!plan) return plan.error();
  return plan->writer.write_memory(make_filler(request, *plan, {}));
}

}  // namespace infertune
