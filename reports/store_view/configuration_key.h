#pragma once
// What makes two trials "the same configuration" when they come from different sweeps, builds, stores or
// hosts: every setting of the trial's config JSON except where the model file lies, plus the model's content
// hash (the same bytes at another path, e.g. a model synthesized again in another cache, are the same model).
// compare matches a baseline's trials to a candidate's by this key; history follows one key across builds.
#include <nlohmann/json.hpp>

#include <string>

namespace infertune {

struct ConfigurationKey {
  std::string key;    // stable text: compact JSON, keys sorted (equal settings give equal keys)
  std::string label;  // for people: "llama-1b-q4_k_m.gguf tg32 -t 2 -b 128 -ub 32", settings at their defaults left out
};

// model_hash: the models table's content_hash ("" when the trial has no model row: then the file name
// stands in for it).
ConfigurationKey configuration_key(const nlohmann::json& config, const std::string& model_hash);

}  // namespace infertune
