#include "bench/llama_bench/model_facts.h"

#include <algorithm>
#include <map>
#include <vector>

#include "bench/llama_bench/model_description.h"
#include "kernels/matmul/matmul_registry.h"

namespace infertune {
namespace {

std::vector<const WeightMatrix*> layer_matrices(const ModelWeights& weights) {
  std::vector<const WeightMatrix*> matrices;
  for (const LayerWeights& layer : weights.layers) {
    for (const WeightMatrix* m : layer.single_matrices()) matrices.push_back(m);
  }
  return matrices;
}

uint64_t elements(const WeightMatrix& m) { return m.n_rows * m.n_cols; }

// The registry's variant per weight type, ordered by the bytes of that type, joined with '+'.
std::string kernel_variants(const std::map<GgmlType, uint64_t>& bytes_by_type) {
  std::vector<std::pair<uint64_t, std::string>> variants;  // bytes, variant
  for (const auto& [type, bytes] : bytes_by_type) {
    auto kernel = matmul_registry().find(type);
    const std::string name = kernel ? std::string(kernel->variant) : "none";
    auto same = std::find_if(variants.begin(), variants.end(), [&](const auto& v) { return v.second == name; });
    if (same != variants.end()) {
      same->first += bytes;
    } else {
      variants.emplace_back(bytes, name);
    }
  }
  std::stable_sort(variants.begin(), variants.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string joined;
  for (const auto& [bytes, name] : variants) joined += (joined.empty() ? "" : "+") + name;
  return joined;
}

}  // namespace

ModelFacts model_facts(const Model& model) {
  const ModelWeights& weights = model.weights();
  ModelFacts facts;
  facts.size_bytes = model.tensor_bytes();
  for (const GgufTensorInfo& tensor : model.file().tensors()) facts.n_params += tensor.n_elements;

  std::map<GgmlType, uint64_t> bytes_by_type;
  for (const WeightMatrix* m : layer_matrices(weights)) {
    facts.weight_bytes_per_token += m->data.size();
    facts.layer_weight_elements += elements(*m);
    bytes_by_type[m->type] += m->data.size();
  }
  // A token reads n_expert_used of each block's experts: what a decode step streams and multiplies.
  const ModelConfig& c = model.config();
  for (const LayerWeights& layer : weights.layers) {
    for (const auto* experts : layer.expert_stacks()) {
      for (const WeightMatrix& m : *experts) {
        facts.weight_bytes_per_token += m.data.size() * c.n_expert_used / c.n_expert;
        facts.layer_weight_elements += elements(m) * c.n_expert_used / c.n_expert;
        bytes_by_type[m.type] += m.data.size();
      }
    }
  }
  facts.weight_bytes_per_token += weights.output.data.size();
  facts.output_weight_elements = elements(weights.output);
  bytes_by_type[weights.output.type] += weights.output.data.size();
  if (weights.token_embd.n_rows > 0)
    facts.weight_bytes_per_token += weights.token_embd.data.size() / weights.token_embd.n_rows;

  facts.kernel = kernel_variants(bytes_by_type);
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16})
    facts.float_weights |= bytes_by_type.count(type) > 0;
  facts.type = model_description(model.config(), model.file().tensors());
  return facts;
}

}  // namespace infertune
