#include "engine/quantize/quantize_plan.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>

#include "engine/model/arch_tensors.h"
#include "engine/model/model_config.h"

namespace infertune {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// llama-quantize quantizes 2-D (and larger) tensors named "*weight", never a norm's gains.
bool is_quantizable_weight(const GgufTensorInfo& t) {
  // A router (ffn_gate_inp) keeps its type, as in llama-quantize: its logits pick the experts.
  return ends_with(t.name, "weight") && t.dims.size() >= 2 && t.name.find("_norm.weight") == std::string::npos &&
         t.name.find("ffn_gate_inp.weight") == std::string::npos;
}

Status check_fits(const std::string& flag, GgmlType type, const GgufTensorInfo& t) {
  const uint64_t block = ggml_type_traits(type).block_elements;
  if (t.dims[0] % block == 0) return {};
  return fail("{} {}: the rows of {} have {} values, not a multiple of {}'s block of {}", flag, ggml_type_name(type),
              t.name, t.dims[0], ggml_type_name(type), block);
}

struct ModelTensors {
  ModelConfig config;
  std::unordered_map<std::string, TensorSpec> specs;  // by name
};

Result<ModelTensors> model_tensors(const GgufFile& file) {
  auto config = read_model_config(file);
  if (!config) return fail("{}: {}", file.source_name(), config.error().message);
  ModelTensors m{*config, {}};
  for (TensorSpec& spec : expected_tensors(m.config)) m.specs.emplace(spec.name, std::move(spec));
  return m;
}

bool has_importance(const QuantizeOptions& o) { return o.importance && !o.importance->entries.empty(); }

QuantMixOptions mix_options(const QuantizeOptions& o) {
  QuantMixOptions mix;
  mix.pure = o.pure;
  mix.has_importance = has_importance(o);
  return mix;
}

// The importance entry of a converted tensor: one importance per column, per expert (dims[2]).
Status attach_importance(const ImportanceFile& importance, TensorPlan& p) {
  const GgufTensorInfo& t = *p.source;
  const auto entry = importance.entries.find(t.name);
  if (entry == importance.entries.end()) {
    p.missing_importance = true;
    return {};
  }
  const uint64_t experts = t.dims.size() > 2 ? t.dims[2] : 1;
  if (entry->second.size() == t.dims[0] * experts) {
    p.importance = entry->second;
    return {};
  }
  // llama-quantize lets this pass for the token embedding only, which no matrix describes well anyway.
  if (t.name == "token_embd.weight") {
    p.missing_importance = true;
    return {};
  }
  return fail(
      "importance matrix {}: '{}' has {} values, but {} needs {} ({} columns x {} experts); is it the "
      "matrix of another model?",
      importance.path, t.name, entry->second.size(), t.name, t.dims[0] * experts, t.dims[0], experts);
}

Result<GgmlType> weight_type(const GgufTensorInfo& t, const ModelTensors& m, const QuantizeOptions& o) {
  const auto spec = m.specs.find(t.name);
  // A tensor the architecture's table does not list gets the base type, where it fits.
  GgmlType type = spec != m.specs.end() ? tensor_type_for(o.file_type, spec->second, m.config, mix_options(o))
                                        : fallback_for_row_length(o.file_type.default_type, t.dims[0]);
  // As llama-quantize: the output override also takes a tied embedding when the mix applies; the embedding override
  // comes last.
  const bool embedding = t.name == "token_embd.weight";
  const bool mixed = !o.pure && ggml_type_traits(o.file_type.default_type).quantized;
  const bool output = t.name == "output.weight" || (embedding && m.config.tied_output && mixed);
  const char* flag = nullptr;
  if (o.output_tensor_type && output) {
    type = *o.output_tensor_type;
    flag = "--output-tensor-type";
  }
  if (o.token_embedding_type && embedding) {
    type = *o.token_embedding_type;
    flag = "--token-embedding-type";
  }
  if (flag) {
    if (Status s = check_fits(flag, type, t); !s) return s.error();
  }
  return type;
}

}  // namespace

Result<std::vector<TensorPlan>> plan_quantization(const GgufFile& file, const QuantizeOptions& options) {
  auto tensors = model_tensors(file);
  if (!tensors) return tensors.error();
  std::vector<TensorPlan> plan;
  for (const GgufTensorInfo& t : file.tensors()) {
    TensorPlan p;
    p.source = &t;
    p.type = t.type;
    const bool leave = options.leave_output_tensor && t.name == "output.weight";
    if (is_quantizable_weight(t) && !leave) {
      auto type = weight_type(t, *tensors, options);
      if (!type) return type.error();
      p.type = *type;
    }
    if (p.convert() && ggml_type_traits(t.type).quantized && !options.allow_requantize) {
      return fail("{}: {} is already {}; quantizing it again loses quality twice (--allow-requantize to do it anyway)",
                  file.source_name(), t.name, ggml_type_name(t.type));
    }
    if (p.convert() && has_importance(options)) {
      if (Status s = attach_importance(*options.importance, p); !s) return s.error();
    }
    plan.push_back(p);
  }
  return plan;
}

std::optional<FileType> quantize_file_type(const std::string& name) {
  std::string wanted = name;
  uint32_t number = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (ec == std::errc() && end == name.data() + name.size()) {
    for (const FileType& ft : file_types()) {
      if (ft.mixed && ft.llama_ftype == number) return ft;
    }
    return std::nullopt;
  }
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "q3_k" || lower == "q4_k" || lower == "q5_k") wanted = lower + "_m";
  auto ft = file_type_from_name(wanted);
  if (ft && !ft->mixed) return std::nullopt;
  return ft;
}

std::string quantize_type_names() {
  std::string names;
  for (const FileType& ft : file_types()) {
    if (!ft.mixed) continue;
    std::string upper(ft.name);
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    names += (names.empty() ? "" : ", ") + upper;
  }
  return names;
}

}  // namespace infertune
