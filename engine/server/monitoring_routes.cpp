#include "engine/server/monitoring_routes.h"

#include <algorithm>

namespace infertune {
namespace {

using nlohmann::json;

// The stages of the default sampler chain (sampler_chain.h), by llama-server's names.
json sampler_names(const SamplingParams& sampling) {
  if (sampling.temperature <= 0) return json::array({"penalties"});  // then greedy: the others cannot matter
  return json::array({"penalties", "top_k", "top_p", "min_p", "temperature"});
}

}  // namespace

json sampling_params_json(const SamplingParams& sampling, int64_t n_predict, bool ignore_eos, uint32_t n_probs) {
  return {{"seed", sampling.seed},
          {"temperature", sampling.temperature},
          {"top_k", sampling.top_k},
          {"top_p", sampling.top_p},
          {"min_p", sampling.min_p},
          {"repeat_last_n", sampling.repeat_last_n},
          {"repeat_penalty", sampling.repeat_penalty},
          {"presence_penalty", sampling.presence_penalty},
          {"frequency_penalty", sampling.frequency_penalty},
          {"max_tokens", n_predict},
          {"n_predict", n_predict},
          {"ignore_eos", ignore_eos},
          {"n_probs", n_probs},
          {"samplers", sampler_names(sampling)}};
}

namespace {

json slot_json(const SlotState& slot, const RequestLimits& limits) {
  json out = {{"id", slot.id},
              {"n_ctx", limits.n_ctx},
              {"speculative", false},
              {"is_processing", slot.running.has_value()},
              {"prefilling", slot.running && slot.running->prefilling},
              {"n_cached", slot.n_cached}};
  if (!slot.running) return out;
  const SchedulerPlan::Progress& p = *slot.running;
  const uint32_t reused = std::min(p.n_reused, p.n_prompt);
  const uint32_t prompt_cached = std::min(slot.n_cached, p.n_prompt);
  out["id_task"] = p.id;
  out["n_prompt_tokens"] = p.n_prompt + p.n_generated;
  out["n_prompt_tokens_processed"] = prompt_cached > reused ? prompt_cached - reused : 0;
  out["n_prompt_tokens_cache"] = reused;
  out["next_token"] = json::array(
      {{{"has_next_token", true}, {"n_remain", p.max_new_tokens - p.n_generated}, {"n_decoded", p.n_generated}}});
  out["params"] = sampling_params_json(slot.sampling, p.max_new_tokens, slot.ignore_eos, slot.n_probs);
  return out;
}

}  // namespace

json slots_json(std::span<const SlotState> slots, const RequestLimits& limits) {
  json out = json::array();
  for (const SlotState& slot : slots) out.push_back(slot_json(slot, limits));
  return out;
}

json props_json(const ServerProps& props, const ServerEndpoints& endpoints, const RequestLimits& limits) {
  const int64_t n_predict = limits.max_tokens ? static_cast<int64_t>(*limits.max_tokens) : -1;
  return {{"default_generation_settings",
           {{"n_ctx", limits.n_ctx}, {"params", sampling_params_json(limits.defaults, n_predict, false, 0)}}},
          {"total_slots", props.total_slots},
          {"model_alias", endpoints.model_alias},
          {"model_path", props.model_path},
          {"modalities", {{"vision", false}, {"video", false}, {"audio", false}}},
          {"endpoint_slots", endpoints.slots},
          {"endpoint_props", false},
          {"endpoint_metrics", endpoints.metrics},
          {"ui", false},
          {"chat_template", props.chat_template_source},
          {"chat_template_family", props.chat_template_family},
          {"bos_token", props.bos_token},
          {"eos_token", props.eos_token},
          {"is_sleeping", false}};
}

}  // namespace infertune
