#pragma once
// The bodies of GET /slots and GET /props, in llama-server's shapes so that what watches a llama-server (its web
// UI's /props, dashboards polling /slots) reads ours:
//   /slots  an array, one object per slot: id, id_task (the running request, -1 when idle), n_ctx, is_processing,
//           params (the running request's sampling, or the server's defaults when idle), next_token
//           (has_next_token, n_remain, n_decoded); and infertune's own n_prompt_tokens, prefilling and n_cached
//           (tokens of the slot's sequence kept in the cache for prefix reuse).
//   /props  default_generation_settings (an idle slot with the defaults), total_slots, model_path, chat_template
//           (the Jinja source the server was given or the model carries; "" when none) with infertune's
//           chat_template_family (the family it renders: chat_template.h), modalities, is_sleeping.
// A slot's n_ctx is the whole cache: infertune's slots share their cells (llama.cpp's --kv-unified).
#include <nlohmann/json.hpp>

#include <span>
#include <string>

#include "engine/server/completion_request.h"
#include "engine/server/serving_loop.h"

namespace infertune {

nlohmann::json slots_json(std::span<const SlotState> slots, const RequestLimits& limits);

struct ServerProps {
  uint32_t total_slots = 1;
  std::string model_path;
  std::string chat_template_source;  // "" when none
  std::string chat_template_family;  // "" when chat requests are refused
};

nlohmann::json props_json(const ServerProps& props, const RequestLimits& limits);

}  // namespace infertune
