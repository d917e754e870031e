#include "engine/server/completion_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "engine/server/json_fields.h"
#include "engine/server/output_constraint.h"

namespace infertune {
namespace {

using nlohmann::json;

Status parse_sampling(const json& body, const RequestLimits& limits, SamplingParams& s) {
  const SamplingParams& d = limits.defaults;
  auto temperature = number_field(body, "temperature", d.temperature, 0, 2);
  auto top_p = number_field(body, "top_p", d.top_p, 0, 1);
  auto min_p = number_field(body, "min_p", d.min_p, 0, 1);
  auto presence = number_field(body, "presence_penalty", d.presence_penalty, -2, 2);
  auto frequency = number_field(body, "frequency_penalty", d.frequency_penalty, -2, 2);
  auto repeat = number_field(body, "repeat_penalty", d.repeat_penalty, 0.01, 10);
  for (const auto* r : {&temperature, &top_p, &min_p, &presence, &frequency, &repeat}) {
    if (!*r) return r->error();
  }
  if (*top_p == 0.0f) return fail("top_p must be a number in (0, 1], got 0");
  s = d;
  s.temperature = *temperature;
  s.top_p = *top_p;
  s.min_p = *min_p;
  s.presence_penalty = *presence;
  s.frequency_penalty = *frequency;
  s.repeat_penalty = *repeat;
  auto top_k = integer_field(body, "top_k", 0, std::max<int64_t>(1, limits.n_vocab));
  if (!top_k) return top_k.error();
  if (*top_k) s.top_k = static_cast<int32_t>(**top_k);
  auto last_n = integer_field(body, "repeat_last_n", -1, limits.n_ctx);
  if (!last_n) return last_n.error();
  if (*last_n) s.repeat_last_n = static_cast<int32_t>(**last_n);
  auto seed = integer_field(body, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  if (!seed) return seed.error();
  if (*seed) s.seed = **seed < 0 ? kRandomSeed : static_cast<uint64_t>(**seed);  // -1: random, as llama.cpp
  return validate(s);
}

Status parse_stop(const json& body, std::vector<std::string>& stop) {
  const auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return {};
  if (it->is_string()) {
    stop.push_back(it->get<std::string>());
  } else if (it->is_array() && it->size() <= kMaxStopStrings) {
    for (const json& s : *it) {
      if (!s.is_string()) return fail("stop must be a string or an array of strings, got {}", shown(s));
      stop.push_back(s.get<std::string>());
    }
  } else {
    return fail("stop must be a string or an array of at most {} strings", kMaxStopStrings);
  }
  for (const std::string& s : stop) {
    if (s.size() > kMaxStopBytes)
      return fail("stop: a stop string of {} bytes is longer than {}", s.size(), kMaxStopBytes);
  }
  return {};
}

Status parse_max_tokens(const json& body, const RequestLimits& limits, std::optional<uint32_t>& max_tokens) {
  max_tokens = limits.max_tokens;
  for (const char* name : {"max_tokens", "max_completion_tokens", "n_predict"}) {
    auto v = integer_field(body, name, -1, limits.n_ctx);
    if (!v) return v.error();
    if (!*v) continue;
    if (**v == 0 || (**v == -1 && std::string_view(name) != "n_predict")) {
      return fail("{} must be an integer in [1, {}] (the context size), got {}", name, limits.n_ctx, **v);
    }
    max_tokens = **v < 0 ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(**v));
  }
  return {};
}

Status parse_logprobs(const json& body, Endpoint endpoint, std::optional<uint32_t>& top) {
  if (endpoint == Endpoint::chat) {
    auto wanted = bool_field(body, "logprobs", false);
    if (!wanted) return wanted.error();
    auto n = integer_field(body, "top_logprobs", 0, kMaxTopLogprobs);
    if (!n) return n.error();
    if (*n && !*wanted) return fail("top_logprobs needs logprobs: true");
    if (*wanted) top = static_cast<uint32_t>(n->value_or(0));
    return {};
  }
  for (const char* name : {"logprobs", "n_probs"}) {
    auto n = integer_field(body, name, 0, kMaxTopLogprobs);
    if (!n) return n.error();
    if (*n && (**n > 0 || std::string_view(name) == "logprobs")) top = static_cast<uint32_t>(**n);
  }
  return {};
}

// A string, an array of token ids, or an array of those (several prompts).
Status parse_prompt(const json& body, const RequestLimits& limits, CompletionRequest& r) {
  const auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) return fail("prompt is required");
  auto prompts = parse_prompts(*it, "prompt", limits, kMaxPrompts);
  if (!prompts) return prompts.error();
  r.prompts = std::move(*prompts);
  return {};
}

Result<std::string> message_content(const json& content, size_t i) {
  if (content.is_null()) return std::string();
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return fail("messages[{}].content must be a string or an array of text parts", i);
  std::string text;
  for (const json& part : content) {
    // (A type of another JSON type is compared, not read as a string: value("type", "") would throw.)
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") ||
        !part["text"].is_string()) {
      return fail("messages[{}].content: only parts of type \"text\" are supported", i);
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

Status parse_messages(const json& body, CompletionRequest& r) {
  static const json kNoContent;  // null, by reference: "?: json()" would copy a message's content (recursively)
  const auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) return fail("messages must be a non-empty array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return fail("messages[{}] must be an object with a string role", i);
    }
    auto content = message_content(m.contains("content") ? m["content"] : kNoContent, i);
    if (!content) return content.error();
    r.messages.push_back({m["role"].get<std::string>(), std::move(*content)});
  }
  return {};
}

}  // namespace

namespace {

// One prompt: a string or an array of token ids; `name` is how errors call it ("prompt", "prompt[2]").
Result<CompletionPrompt> parse_one_prompt(const json& prompt, const std::string& name, const RequestLimits& limits) {
  CompletionPrompt p;
  if (prompt.is_string()) {
    p.text = prompt.get<std::string>();
    if (p.text.empty()) return fail("{} must not be empty", name);
    return p;
  }
  if (!prompt.is_array() || prompt.empty()) return fail("{} must be a string or an array of token ids", name);
  for (size_t i = 0; i < prompt.size(); ++i) {
    const json& t = prompt[i];
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= limits.n_vocab) {
      return fail("{}[{}] must be a token id in [0, {}), got {}", name, i, limits.n_vocab, shown(t));
    }
    p.tokens.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return p;
}

}  // namespace

Result<std::vector<CompletionPrompt>> parse_prompts(const json& value, std::string_view field,
                                                    const RequestLimits& limits, size_t max_prompts) {
  const bool several = value.is_array() && !value.empty() && (value[0].is_string() || value[0].is_array());
  std::vector<CompletionPrompt> out;
  if (!several) {
    auto one = parse_one_prompt(value, std::string(field), limits);
    if (!one) return one.error();
    out.push_back(std::move(*one));
    return out;
  }
  if (value.size() > max_prompts) {
    return fail("{}: at most {} prompts per request, got {}", field, max_prompts, value.size());
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string name = fmt::format("{}[{}]", field, i);
    if (!value[i].is_string() && !value[i].is_array()) {
      return fail("{} must be a string or an array of token ids, as {}[0] is", name, field);
    }
    auto one = parse_one_prompt(value[i], name, limits);
    if (!one) return one.error();
    out.push_back(std::move(*one));
  }
  return out;
}

namespace {

// llama-server's per-request reasoning_format; absent: the server's --reasoning-format.
Result<ReasoningFormat> parse_reasoning_format(const json& body, ReasoningFormat fallback) {
  const auto it = body.find("reasoning_format");
  if (it == body.end() || it->is_null()) return fallback;
  const auto format = it->is_string() ? reasoning_format_from_name(it->get<std::string>()) : std::nullopt;
  if (!format) return fail("reasoning_format must be one of {}, not {}", kReasoningFormatNames, shown(*it));
  return *format;
}

// gpt-oss's reasoning efforts (its template writes any string; these are the ones it was trained with).
Result<std::string> reasoning_effort(const json& value, std::string_view field) {
  if (value.is_string()) {
    const std::string effort = value.get<std::string>();
    if (effort == "low" || effort == "medium" || effort == "high") return effort;
  }
  return fail("{} must be low, medium or high, not {}", field, shown(value));
}

}  // namespace

Result<ChatRenderOptions> parse_chat_template_kwargs(const json& kwargs, std::string_view field,
                                                     const ChatRenderOptions& fallback) {
  if (kwargs.is_null()) return fallback;
  if (!kwargs.is_object()) return fail("{} must be an object, not {}", field, shown(kwargs));
  ChatRenderOptions options = fallback;
  if (const auto it = kwargs.find("enable_thinking"); it != kwargs.end()) {
    if (!it->is_boolean()) return fail("{}.enable_thinking must be true or false, not {}", field, shown(*it));
    options.enable_thinking = it->get<bool>();
  }
  if (const auto it = kwargs.find("reasoning_effort"); it != kwargs.end()) {
    auto effort = reasoning_effort(*it, fmt::format("{}.reasoning_effort", field));
    if (!effort) return effort.error();
    options.reasoning_effort = *effort;
  }
  return options;
}

Result<CompletionRequest> parse_completion_request(const json& body, Endpoint endpoint, const RequestLimits& limits,
                                                   std::string_view raw_body) {
  if (!body.is_object()) return fail("the request body must be a JSON object");
  CompletionRequest r;
  r.endpoint = endpoint;
  if (Status s = endpoint == Endpoint::chat ? parse_messages(body, r) : parse_prompt(body, limits, r); !s) {
    return s.error();
  }
  const size_t n_prompts = std::max<size_t>(r.prompts.size(), 1);  // chat: one conversation
  auto n = integer_field(body, "n", 1, static_cast<int64_t>(kMaxPrompts / n_prompts));
  if (!n) {
    return fail("{} (at most {} completions per request: prompts x n)", n.error().message, kMaxPrompts);
  }
  if (*n) r.n = static_cast<uint32_t>(**n);
  if (Status s = parse_sampling(body, limits, r.sampling); !s) return s.error();
  if (Status s = parse_stop(body, r.stop); !s) return s.error();
  if (Status s = parse_max_tokens(body, limits, r.max_tokens); !s) return s.error();
  if (Status s = parse_logprobs(body, endpoint, r.top_logprobs); !s) return s.error();
  auto ignore_eos = bool_field(body, "ignore_eos", false);
  if (!ignore_eos) return ignore_eos.error();
  r.ignore_eos = *ignore_eos;
  auto cache_prompt = bool_field(body, "cache_prompt", true);
  if (!cache_prompt) return cache_prompt.error();
  r.cache_prompt = *cache_prompt;
  auto return_tokens = bool_field(body, "return_tokens", false);
  if (!return_tokens) return return_tokens.error();
  r.return_tokens = *return_tokens;
  auto grammar = parse_output_constraint(body, raw_body);
  if (!grammar) return grammar.error();
  r.grammar = *grammar ? std::move(*grammar) : limits.grammar;
  auto reasoning = parse_reasoning_format(body, limits.reasoning_format);
  if (!reasoning) return reasoning.error();
  r.reasoning_format = *reasoning;
  ChatRenderOptions template_options = limits.template_options;
  if (const auto it = body.find("reasoning_effort"); it != body.end() && !it->is_null()) {  // OpenAI's field
    auto effort = reasoning_effort(*it, "reasoning_effort");
    if (!effort) return effort.error();
    template_options.reasoning_effort = *effort;
  }
  const auto kwargs = body.find("chat_template_kwargs");
  auto options = kwargs == body.end() ? Result<ChatRenderOptions>(template_options)
                                      : parse_chat_template_kwargs(*kwargs, "chat_template_kwargs", template_options);
  if (!options) return options.error();
  r.template_options = std::move(*options);
  auto stream = bool_field(body, "stream", false);
  if (!stream) return stream.error();
  r.stream = *stream;
  if (const auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return fail("stream_options must be an object");
    auto usage = bool_field(*it, "include_usage", false);
    if (!usage) return fail("stream_options.{}", usage.error().message);
    r.include_usage = *usage;
  }
  return r;
}

}  // namespace infertune
