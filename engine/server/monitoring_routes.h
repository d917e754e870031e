#pragma once
// The bodies of GET /slots and GET /props, in the shapes of the llama-server infertune is compared with (llama.cpp
// of llama-cpp-python 0.3.36; tests/engine/server/llama_server_api_check.py holds them against it), so that
// what watches a llama-server (its web UI's /props, dashboards polling /slots) reads ours:
//   /slots  an array, one object per slot: id, n_ctx, speculative, is_processing; a busy slot also id_task (its
//           request), n_prompt_tokens (the slot's tokens: prompt + generated, as llama-server counts them),
//           n_prompt_tokens_processed (prompt tokens computed for it), n_prompt_tokens_cache (prompt tokens found
//           cached), next_token [{has_next_token, n_remain, n_decoded}] and params (its sampling). infertune's own:
//           prefilling, n_cached (the slot's tokens in the KV cache, kept after a request for prefix reuse).
//   /props  default_generation_settings {n_ctx, params}, total_slots, model_alias, model_path, modalities,
//           endpoint_slots / _props / _metrics, ui, chat_template (the Jinja source the server was given or the
//           model carries; "" when none), bos_token, eos_token, is_sleeping; and infertune's chat_template_family.
// A slot's n_ctx is the whole cache: infertune's slots share their cells (llama.cpp's --kv-unified).
#include <nlohmann/json.hpp>

#include <span>
#include <string>

#include "engine/server/completion_request.h"
#include "engine/server/serving_loop.h"

namespace infertune {

nlohmann::json slots_json(std::span<const SlotState> slots, const RequestLimits& limits);

// A request's sampling by llama-server's names (a slot's params, a native reply's generation_settings).
nlohmann::json sampling_params_json(const SamplingParams& sampling, int64_t n_predict, bool ignore_eos,
                                    uint32_t n_probs);

// What /props says of the served model.
struct ServerProps {
  uint32_t total_slots = 1;
  std::string model_path;
  std::string chat_template_source;  // "" when none
  std::string chat_template_family;  // "" when chat requests are refused
  std::string bos_token, eos_token;  // their text ("" when the vocabulary has none)
};

// And what it says of the server itself: its settings (HttpOptions), passed as they are.
struct ServerEndpoints {
  std::string model_alias;
  bool slots = true;
  bool metrics = false;
};

nlohmann::json props_json(const ServerProps& props, const ServerEndpoints& endpoints, const RequestLimits& limits);

}  // namespace infertune
