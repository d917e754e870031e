// libFuzzer target for the server's request path: the body of POST /v1/completions or
// /v1/chat/completions -> parse_request_body (engine/server/json_fields.h), as the routes read it
// -> parse_completion_request (engine/server/completion_request.h) for both endpoints; the messages of an
// accepted chat request are then rendered with every ChatTemplate family.
//
// Input encoding: byte 0 picks the server's RequestLimits, the rest is the body.
//   bits 0..1 n_ctx: 4096, 1, 512, 131072; bits 2..3 n_vocab: 32000, 0, 1, 151936; bits 4..5 the server's
//   max_tokens (-n): none, 1, min(128, n_ctx), n_ctx; bit 6 the sampling defaults: SamplingParams{} or a
//   greedy set (temperature 0, top_k 1, ...), to tell an absent field's default from a parsed value; bit 7
//   unused.
//   e.g. printf '\x00{"prompt":"Hi","max_tokens":8}'.
//
// Properties checked on every input; a violation prints what failed and traps, which libFuzzer reports
// as a crash:
//   - nothing crashes, hangs or over-allocates (ASan/UBSan, -rss_limit_mb, -timeout), and no exception
//     escapes (none is caught around parse_completion_request: libFuzzer reports one that escapes); a
//     body parse_request_body refuses (not JSON, too deep, not an object) is refused with a message;
//   - every error has a non-empty message;
//   - an accepted request is within its documented bounds: completions has a non-empty prompt text or
//     token ids in [0, n_vocab), and no messages; chat has the body's messages, roles and string contents,
//     and no prompt; max_tokens in [1, n_ctx] (or the server's -n when no field sets it); at most
//     kMaxStopStrings stops of at most kMaxStopBytes each; top_logprobs <= kMaxTopLogprobs; sampling
//     values finite and in their ranges (temperature [0, 2], top_p (0, 1], min_p [0, 1], presence and
//     frequency penalties [-2, 2], repeat_penalty [0.01, 10], top_k [0, max(1, n_vocab)], repeat_last_n
//     [-1, n_ctx], seed an int64, negative meaning random), each equal to the body's value when the field is
//     given and to the server's default when not; stream, ignore_eos, include_usage as the body says;
//   - an accepted chat request renders with each family or fails naming a message, never anything else.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/server/chat_template.h"
#include "engine/server/completion_request.h"
#include "engine/server/json_fields.h"
#include "fuzz_check.h"

namespace {

using namespace infertune;
using nlohmann::json;

using fuzz::check;

RequestLimits limits_of(uint8_t bits) {
  constexpr uint32_t kCtx[] = {4096, 1, 512, 131072};
  constexpr uint32_t kVocab[] = {32000, 0, 1, 151936};
  RequestLimits limits;
  limits.n_ctx = kCtx[bits & 3];
  limits.n_vocab = kVocab[(bits >> 2) & 3];
  const std::optional<uint32_t> max_tokens[] = {std::nullopt, 1u, std::min(128u, limits.n_ctx), limits.n_ctx};
  limits.max_tokens = max_tokens[(bits >> 4) & 3];
  if (bits & 0x40) {
    limits.defaults = {.temperature = 0.0f,
                       .top_k = 1,
                       .top_p = 0.5f,
                       .min_p = 0.0f,
                       .repeat_penalty = 1.1f,
                       .repeat_last_n = -1,
                       .frequency_penalty = 0.25f,
                       .presence_penalty = -0.5f,
                       .seed = 42};
  }
  return limits;
}

const json* field(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

void check_number(const json& body, const char* name, float value, float fallback, float low, float high) {
  check(std::isfinite(value) && value >= low && value <= high, name);
  const json* f = field(body, name);
  check(f ? value == static_cast<float>(f->get<double>()) : value == fallback, name);
}

void check_bool(const json& body, const char* name, bool value) {
  const json* f = field(body, name);
  check(value == (f ? f->get<bool>() : false), name);
}

void check_sampling(const json& body, const RequestLimits& limits, const SamplingParams& s) {
  const SamplingParams& d = limits.defaults;
  check_number(body, "temperature", s.temperature, d.temperature, 0, 2);
  check_number(body, "top_p", s.top_p, d.top_p, 0, 1);
  check(s.top_p > 0, "top_p is 0");
  check_number(body, "min_p", s.min_p, d.min_p, 0, 1);
  check_number(body, "presence_penalty", s.presence_penalty, d.presence_penalty, -2, 2);
  check_number(body, "frequency_penalty", s.frequency_penalty, d.frequency_penalty, -2, 2);
  check_number(body, "repeat_penalty", s.repeat_penalty, d.repeat_penalty, 0.01f, 10);
  if (const json* f = field(body, "top_k")) {
    check(s.top_k >= 0 && static_cast<uint32_t>(s.top_k) <= std::max<uint32_t>(1, limits.n_vocab),
          "top_k out of range");
    check(s.top_k == f->get<double>(), "top_k is not the body's");
  } else {
    check(s.top_k == d.top_k, "top_k is not the default");
  }
  if (const json* f = field(body, "repeat_last_n")) {
    check(s.repeat_last_n >= -1 && s.repeat_last_n <= static_cast<int64_t>(limits.n_ctx), "repeat_last_n out of range");
    check(s.repeat_last_n == f->get<double>(), "repeat_last_n is not the body's");
  } else {
    check(s.repeat_last_n == d.repeat_last_n, "repeat_last_n is not the default");
  }
  if (const json* f = field(body, "seed")) {
    // An int64 (the documented range): a negative one means a random seed.
    const bool in_range = f->is_number_unsigned()  ? f->get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()}
                          : f->is_number_integer() ? true
                                                   : f->get<double>() >= -0x1p63 && f->get<double>() < 0x1p63;
    check(in_range, "seed outside int64 accepted");
    const int64_t v = f->is_number_integer() ? f->get<int64_t>() : static_cast<int64_t>(f->get<double>());
    check(s.seed == (v < 0 ? kRandomSeed : static_cast<uint64_t>(v)), "seed is not the body's");
  } else {
    check(s.seed == d.seed, "seed is not the default");
  }
}

void check_accepted(const json& body, Endpoint endpoint, const RequestLimits& limits, const CompletionRequest& r) {
  check(r.endpoint == endpoint, "endpoint");
  if (endpoint != Endpoint::chat) {  // /v1/completions and llama.cpp's /completion take the same body
    check(r.messages.empty(), "completions with messages");
    check(!r.prompts.empty() && r.prompts.size() <= kMaxPrompts, "completions: no prompt, or too many");
    for (const CompletionPrompt& prompt : r.prompts) {
      check(prompt.text.empty() != prompt.tokens.empty(), "completions: not exactly one of prompt text and ids");
      for (int32_t id : prompt.tokens) {
        check(id >= 0 && static_cast<uint32_t>(id) < limits.n_vocab, "a prompt token id outside [0, n_vocab)");
      }
    }
    const json* p = field(body, "prompt");
    check(p != nullptr, "completions accepted without a prompt");
    if (p->is_string()) check(r.prompts[0].text == p->get<std::string>(), "the prompt text is not the body's");
    const bool several = p->is_array() && !p->empty() && ((*p)[0].is_string() || (*p)[0].is_array());
    check(r.prompts.size() == (several ? p->size() : 1), "not a completion per prompt of the body");
    for (size_t i = 0; several && i < p->size(); ++i) {
      if ((*p)[i].is_string()) check(r.prompts[i].text == (*p)[i].get<std::string>(), "a prompt is not the body's");
    }
  } else {
    check(r.prompts.empty(), "chat with a prompt");
    const json& messages = body.at("messages");
    check(!r.messages.empty() && r.messages.size() == messages.size(), "chat: not the body's messages");
    for (size_t i = 0; i < messages.size(); ++i) {
      check(r.messages[i].role == messages[i].at("role").get<std::string>(), "a message's role is not the body's");
      const auto content = messages[i].find("content");
      if (content != messages[i].end() && content->is_string()) {
        check(r.messages[i].content == content->get<std::string>(), "a message's content is not the body's");
      }
    }
  }
  if (r.max_tokens) check(*r.max_tokens >= 1 && *r.max_tokens <= limits.n_ctx, "max_tokens outside [1, n_ctx]");
  if (!field(body, "max_tokens") && !field(body, "max_completion_tokens") && !field(body, "n_predict")) {
    check(r.max_tokens == limits.max_tokens, "max_tokens is not the server's -n");
  }
  check(r.stop.size() <= kMaxStopStrings, "more than kMaxStopStrings stop strings");
  for (const std::string& s : r.stop) check(s.size() <= kMaxStopBytes, "a stop string over kMaxStopBytes");
  if (r.top_logprobs) check(*r.top_logprobs <= kMaxTopLogprobs, "top_logprobs over kMaxTopLogprobs");
  if (!field(body, "logprobs") && !field(body, "n_probs")) check(!r.top_logprobs, "top_logprobs without logprobs");
  check_sampling(body, limits, r.sampling);
  check_bool(body, "stream", r.stream);
  check_bool(body, "ignore_eos", r.ignore_eos);
  const json* options = field(body, "stream_options");
  check(r.include_usage == (options && options->contains("include_usage") && (*options)["include_usage"].is_boolean() &&
                            (*options)["include_usage"].get<bool>()),
        "include_usage is not the body's");
}

void render_chat(const CompletionRequest& r) {
  for (const char* name : {"chatml", "llama3", "mistral", "llama2", "gemma", "phi3"}) {
    const auto t = ChatTemplate::from_name(name);
    check(t.ok(), "from_name of a family name failed");
    for (bool generation : {false, true}) {
      const auto out = t->render(r.messages, generation, {.bos = "<s>", .eos = "</s>"});
      if (!out) {
        check(out.error().message.starts_with("messages["), "a render error that names no message");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const RequestLimits limits = limits_of(data[0]);
  auto body = parse_request_body(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  if (!body) {
    check(!body.error().message.empty(), "parse_request_body's error is empty");
    return 0;
  }
  for (Endpoint endpoint : {Endpoint::completions, Endpoint::chat, Endpoint::native}) {
    const auto r = parse_completion_request(*body, endpoint, limits);
    if (!r) {
      check(!r.error().message.empty(), "an error with an empty message");
      continue;
    }
    check_accepted(*body, endpoint, limits, *r);
    if (endpoint == Endpoint::chat) render_chat(*r);
  }
  return 0;
}
