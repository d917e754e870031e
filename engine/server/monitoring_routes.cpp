#include "engine/server/monitoring_routes.h"

namespace infertune {
namespace {

using nlohmann::json;

// The stages of the default sampler chain (sampler_chain.h), by llama-server's names.
json sampler_names(const SamplingParams& sampling) {
  if (sampling.temperature <= 0) return json::array({"penalties"});  // then greedy: the others cannot matter
  return json::array({"penalties", "top_k", "top_p", "min_p", "temperature"});
}

json params_json(const SamplingParams& sampling, int64_t n_predict, bool ignore_eos, uint32_t n_probs) {
  return {{"n_predict", n_predict},
          {"seed", sampling.seed},
          {"temperature", sampling.temperature},
          {"top_k", sampling.top_k},
          {"top_p", sampling.top_p},
          {"min_p", sampling.min_p},
          {"repeat_last_n", sampling.repeat_last_n},
          {"repeat_penalty", sampling.repeat_penalty},
          {"presence_penalty", sampling.presence_penalty},
          {"frequency_penalty", sampling.frequency_penalty},
          {"max_tokens", n_predict},
          {"ignore_eos", ignore_eos},
          {"n_probs", n_probs},
          {"samplers", sampler_names(sampling)}};
}

int64_t default_n_predict(const RequestLimits& limits) {
  return limits.max_tokens ? static_cast<int64_t>(*limits.max_tokens) : -1;
}

json idle_slot_json(uint32_t id, uint32_t n_cached, const RequestLimits& limits) {
  return {{"id", id},
          {"id_task", -1},
          {"n_ctx", limits.n_ctx},
          {"speculative", false},
          {"is_processing", false},
          {"params", params_json(limits.defaults, default_n_predict(limits), false, 0)},
          {"next_token", {{"has_next_token", false}, {"n_remain", -1}, {"n_decoded", 0}}},
          {"n_prompt_tokens", 0},
          {"prefilling", false},
          {"n_cached", n_cached}};
}

json slot_json(const SlotState& slot, const RequestLimits& limits) {
  if (!slot.running) return idle_slot_json(slot.id, slot.n_cached, limits);
  const SchedulerPlan::Progress& p = *slot.running;
  return {{"id", slot.id},
          {"id_task", p.id},
          {"n_ctx", limits.n_ctx},
          {"speculative", false},
          {"is_processing", true},
          {"params", params_json(slot.sampling, p.max_new_tokens, slot.ignore_eos, slot.n_probs)},
          {"next_token",
           {{"has_next_token", true}, {"n_remain", p.max_new_tokens - p.n_generated}, {"n_decoded", p.n_generated}}},
          {"n_prompt_tokens", p.n_prompt},
          {"prefilling", p.prefilling},
          {"n_cached", slot.n_cached}};
}

}  // namespace

json slots_json(std::span<const SlotState> slots, const RequestLimits& limits) {
  json out = json::array();
  for (const SlotState& slot : slots) out.push_back(slot_json(slot, limits));
  return out;
}

json props_json(const ServerProps& props, const RequestLimits& limits) {
  return {{"default_generation_settings", idle_slot_json(0, 0, limits)},
          {"total_slots", props.total_slots},
          {"model_path", props.model_path},
          {"chat_template", props.chat_template_source},
          {"chat_template_family", props.chat_template_family},
          {"modalities", {{"vision", false}, {"audio", false}}},
          {"is_sleeping", false}};
}

}  // namespace infertune
