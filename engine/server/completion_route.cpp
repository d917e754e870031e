#include "engine/server/completion_route.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "engine/server/json_fields.h"
#include "engine/server/monitoring_routes.h"
#include "engine/server/native_format.h"
#include "engine/server/openai_format.h"
#include "engine/server/text_stream.h"

namespace infertune {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void send_error(httplib::Response& res, int status, std::string_view message) {
  res.status = status;
  res.set_content(serialize(error_json(status, message, error_type_for(status))), "application/json");
}

Result<json> json_body(const httplib::Request& req) { return parse_request_body(req.body); }

Result<std::string> render_chat(const ServedModel& served, std::span<const ChatMessage> messages,
                                bool add_generation_prompt, const ChatRenderOptions& options) {
  if (!served.chat_template) return fail("{}", served.chat_template_error);
  const Tokenizer& tok = *served.tokenizer;
  const std::string bos = tok.bos() ? tok.token_to_piece(*tok.bos()) : "";
  const std::string eos = tok.eos() ? tok.token_to_piece(*tok.eos()) : "";
  return served.chat_template->render(messages, add_generation_prompt, {.bos = bos, .eos = eos}, options);
}

Result<std::vector<int32_t>> tokens_of_text(const ServedModel& served, const std::string& text, std::string_view name) {
  std::vector<int32_t> ids = served.tokenizer->encode(text, true, true);
  if (ids.empty()) return fail("{}: the text encodes to no tokens", name);
  return ids;
}

Result<std::vector<std::vector<int32_t>>> prompt_tokens(const ServedModel& served, const CompletionRequest& request) {
  if (request.endpoint == Endpoint::chat) {
    auto rendered = render_chat(served, request.messages, true, request.template_options);
    if (!rendered) return rendered.error();
    auto ids = tokens_of_text(served, *rendered, "prompt");
    if (!ids) return ids.error();
    return std::vector<std::vector<int32_t>>{std::move(*ids)};
  }
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < request.prompts.size(); ++i) {
    const CompletionPrompt& prompt = request.prompts[i];
    if (!prompt.tokens.empty()) {
      out.push_back(prompt.tokens);
      continue;
    }
    auto ids = tokens_of_text(served, prompt.text, prompt_name(request.prompts.size(), i));
    if (!ids) return ids.error();
    out.push_back(std::move(*ids));
  }
  return out;
}

std::string prompt_name(size_t n_prompts, size_t i, std::string_view field) {
  return n_prompts == 1 ? std::string(field) : fmt::format("{}[{}]", field, i);
}

namespace {

// One response's progress: the text sent, the tokens counted, the log-probabilities not yet sent.
struct Progress {
  ResponseHeader header;
  size_t index = 0;  // of the completion among the request's: prompt i's choice j is i * n + j
  bool want_logprobs = false;
  TextStream text;
  ReasoningSplit reasoning;  // chat: the reasoning apart from the answer (none elsewhere)
  Usage usage;
  std::vector<GeneratedToken> pending_logprobs;  // since the last chunk (a whole reply: all of them)
  size_t logprob_offset = 0;
  std::optional<FinishReason> reason;
  bool stopped_by_text = false;  // a stop string matched: the request still runs and must be cancelled
  std::string error;
  // For llama.cpp's /completion replies: the ids since the last chunk, the timings and what the final object says.
  std::vector<int32_t> chunk_tokens;
  std::string unsent_text;     // of those tokens, while the last ends inside a character
  bool return_tokens = false;  // every generated id goes into the final object
  bool first_choice = true;    // of its prompt's n: the one whose prompt tokens the usage counts, as OpenAI's does
  std::optional<Clock::time_point> prompt_started, first_token, last_token;
  NativeSummary native;
};

// Adds an update's tokens; returns the text that can go out now. A matched stop string finishes the
// response (the caller cancels the request).
std::string absorb(Progress& p, const Tokenizer& tokenizer, RequestChannel::Update& update) {
  std::string out;
  for (GeneratedToken& t : update.tokens) {
    if (p.reason) break;
    if (!p.first_token) {
      p.first_token = t.at;
      p.prompt_started = t.prompt_started;
      p.native.timings.cache_n = t.prompt_cached;
      p.native.id_slot = t.slot;
    }
    p.last_token = t.at;
    if (t.end_of_generation) continue;
    ++p.usage.completion_tokens;
    if (p.header.endpoint == Endpoint::native) p.chunk_tokens.push_back(t.token);
    if (p.return_tokens) p.native.tokens.push_back(t.token);
    out += p.text.push(tokenizer.token_to_piece(t.token));
    if (p.want_logprobs) p.pending_logprobs.push_back(t);
    if (p.text.stopped()) {
      p.reason = FinishReason::stop;
      p.stopped_by_text = true;
    }
  }
  if (update.finished && !p.reason) {
    p.reason = update.reason;
    p.error = update.error;
  }
  return out;
}

json take_logprobs(Progress& p, const Tokenizer& tokenizer) {
  if (!p.want_logprobs) return nullptr;
  json j = p.header.endpoint == Endpoint::native
               ? native_probabilities_json(tokenizer, p.pending_logprobs)
               : logprobs_json(p.header.endpoint, tokenizer, p.pending_logprobs, p.logprob_offset);
  for (const GeneratedToken& t : p.pending_logprobs) p.logprob_offset += tokenizer.token_to_piece(t.token).size();
  p.pending_logprobs.clear();
  return j;
}

// One piece of a completion's text as the endpoint streams it (`last`: the completion's last piece). Nothing when a
// chat reply's reasoning split holds the whole piece back and no log-probabilities wait.
std::optional<json> text_chunk(Progress& p, const Tokenizer& tokenizer, const std::string& text, bool last = false) {
  if (p.header.endpoint == Endpoint::chat) {
    SplitText split = last ? p.reasoning.finish(text) : p.reasoning.push(text);
    if (split.reasoning.empty() && split.content.empty() && p.pending_logprobs.empty()) return std::nullopt;
    return chunk_json(p.header, p.index, split.content, std::nullopt, false, take_logprobs(p, tokenizer),
                      split.reasoning);
  }
  json logprobs = take_logprobs(p, tokenizer);
  if (p.header.endpoint != Endpoint::native)
    return chunk_json(p.header, p.index, text, std::nullopt, false, std::move(logprobs));
  json chunk = native_chunk_json(p.index, text, p.chunk_tokens, static_cast<uint32_t>(p.usage.completion_tokens),
                                 static_cast<uint32_t>(p.usage.prompt_tokens), std::move(logprobs));
  p.chunk_tokens.clear();
  return chunk;
}

// What the final native object says, once the request ended.
const NativeSummary& finish_native_summary(Progress& p) {
  NativeSummary& s = p.native;
  s.tokens_predicted = static_cast<uint32_t>(p.usage.completion_tokens);
  s.tokens_evaluated = static_cast<uint32_t>(p.usage.prompt_tokens);
  s.index = p.index;
  s.reason = p.reason.value_or(FinishReason::stop);
  if (p.stopped_by_text) s.stopping_word = p.text.matched_stop();
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  s.timings.prompt_n = s.tokens_evaluated - std::min(s.timings.cache_n, s.tokens_evaluated);
  s.timings.prompt_ms = p.first_token ? ms(*p.first_token - *p.prompt_started) : 0.0;
  s.timings.predicted_n = s.tokens_predicted;
  s.timings.predicted_ms = p.first_token ? ms(*p.last_token - *p.first_token) : 0.0;
  return s;
}

// An update split into one per token (the last carries the end), so that each token is an event of its own, as
// llama-server streams, however many tokens the loop produced while the writer was busy.
std::vector<RequestChannel::Update> one_per_token(RequestChannel::Update update) {
  std::vector<RequestChannel::Update> out(std::max<size_t>(update.tokens.size(), 1));
  for (size_t i = 0; i < update.tokens.size(); ++i) out[i].tokens.push_back(std::move(update.tokens[i]));
  out.back().finished = update.finished;
  out.back().reason = update.reason;
  out.back().error = std::move(update.error);
  return out;
}

// The text of the event to send after a token, or nothing. OpenAI's endpoints send what text there is (and
// log-probabilities). The native one sends an event per token, as llama-server does, but for a token that ends inside
// a character: that token's text and id wait for the next event (llama-server sends no event for it and drops
// its id).
std::optional<std::string> ready_text(Progress& p, std::string text) {
  if (p.header.endpoint != Endpoint::native) {
    if (text.empty() && p.pending_logprobs.empty()) return std::nullopt;
    return text;
  }
  p.unsent_text += text;
  if (p.chunk_tokens.empty() || p.text.holds_partial_character()) return std::nullopt;
  return std::exchange(p.unsent_text, {});
}

bool write_event(httplib::DataSink& sink, const json& j) {
  const std::string line = "data: " + serialize(j) + "\n\n";
  return sink.write(line.data(), line.size());
}

// Each completion of a request (a prompt, or one of its n choices): its channel from the serving loop and its
// reply's progress.
struct Pending {
  std::shared_ptr<RequestChannel> channel;
  Progress progress;
};

void cancel_all(ServingLoop& loop, const std::vector<Pending>& all) {
  for (const Pending& p : all) loop.cancel(p.channel);
}

Usage total_usage(const std::vector<Pending>& all) {
  Usage total;
  for (const Pending& p : all) {
    if (p.progress.first_choice) total.prompt_tokens += p.progress.usage.prompt_tokens;
    total.completion_tokens += p.progress.usage.completion_tokens;
  }
  return total;
}

// The end of a completion's stream: what was held back, then its last chunk (finish_reason) or, native, its final
// object. False when the client went away.
bool close_stream(ServingLoop& loop, Pending& one, const Tokenizer& tokenizer, httplib::DataSink& sink) {
  Progress& p = one.progress;
  if (p.stopped_by_text) loop.cancel(one.channel);
  const std::string tail = std::exchange(p.unsent_text, {}) + p.text.finish();
  const bool native_ids = p.header.endpoint == Endpoint::native && !p.chunk_tokens.empty();
  const bool chat = p.header.endpoint == Endpoint::chat;  // its reasoning split may hold text back
  if (!tail.empty() || native_ids || chat) {
    const std::optional<json> chunk = text_chunk(p, tokenizer, tail, true);
    if (chunk && !write_event(sink, *chunk)) return false;
  }
  if (p.header.endpoint == Endpoint::native) {  // llama.cpp's stream ends with the final object, no [DONE]
    return write_event(sink, native_final_json("", finish_native_summary(p), nullptr));
  }
  return write_event(sink, chunk_json(p.header, p.index, "", p.reason, false, nullptr));
}

// Writes what a completion has produced since the last call, and its end when it ended. False when the client went
// away; `wrote` is set when anything was written.
bool stream_news(ServingLoop& loop, Pending& one, const Tokenizer& tokenizer, httplib::DataSink& sink, bool& wrote) {
  Progress& p = one.progress;
  for (RequestChannel::Update& update : one_per_token(one.channel->wait(std::chrono::milliseconds(0)))) {
    std::optional<std::string> text = ready_text(p, absorb(p, tokenizer, update));
    if (!text) continue;
    const std::optional<json> chunk = text_chunk(p, tokenizer, *text);
    if (!chunk) continue;
    wrote = true;
    if (!write_event(sink, *chunk)) return false;
  }
  if (!p.reason || *p.reason == FinishReason::error) return true;
  wrote = true;
  return close_stream(loop, one, tokenizer, sink);
}

// The streamed reply: a chunk per token that adds text (native: per token) with its completion's index, as each
// completion's tokens come, keep-alive comments while nothing comes, each completion's last chunk (finish_reason) when
// it ends, then the usage chunk when asked (summed) and [DONE]; native streams end with each completion's final object
// instead. An error ends the reply with its event. Returns false when the client went away.
bool stream_reply(const CompletionRoute& route, ServingLoop& loop, std::vector<Pending>& all, Doorbell& doorbell,
                  bool include_usage, httplib::DataSink& sink) {
  const Tokenizer& tokenizer = *route.served->tokenizer;
  const ResponseHeader& header = all.front().progress.header;
  for (size_t i = 0; header.endpoint == Endpoint::chat && i < all.size(); ++i) {  // each choice opens with its role
    if (!write_event(sink, chunk_json(header, i, "", std::nullopt, true, nullptr))) {
      cancel_all(loop, all);
      return false;
    }
  }
  auto last_write = Clock::now();
  std::vector<bool> ended(all.size(), false);
  for (size_t open = all.size(); open > 0;) {
    const uint64_t seen = doorbell.rings();  // before reading: a token pushed meanwhile rings past it
    bool ok = true;
    bool wrote = false;
    for (size_t i = 0; i < all.size() && ok; ++i) {
      if (ended[i]) continue;
      ok = stream_news(loop, all[i], tokenizer, sink, wrote);
      if (!all[i].progress.reason) continue;
      ended[i] = true;
      --open;
      if (*all[i].progress.reason != FinishReason::error) continue;
      cancel_all(loop, all);
      write_event(sink, error_json(500, all[i].progress.error, "server_error"));
      sink.done();
      return true;
    }
    if (ok && wrote) {
      last_write = Clock::now();
    } else if (ok && Clock::now() - last_write >= route.options->keep_alive) {
      ok = sink.write(": keep-alive\n\n", 14);  // a write is how a client that went away is noticed
      last_write = Clock::now();
    }
    if (!ok) {
      cancel_all(loop, all);
      return false;
    }
    if (open > 0) doorbell.wait(seen, route.options->keep_alive);
  }
  if (header.endpoint != Endpoint::native) {
    if (include_usage) write_event(sink, usage_chunk_json(header, total_usage(all)));
    const std::string done = "data: [DONE]\n\n";
    sink.write(done.data(), done.size());
  }
  sink.done();
  return true;
}

// The non-streamed body: one completion's object, or (several) OpenAI's choices in order with the usage summed, or
// llama-server's array of /completion objects.
json whole_body(std::vector<Pending>& all, std::vector<std::string>& texts, const Tokenizer& tokenizer) {
  for (Pending& p : all) {
    if (p.progress.reason == FinishReason::error) return error_json(500, p.progress.error, "server_error");
  }
  if (all.front().progress.header.endpoint == Endpoint::native) {
    json objects = json::array();
    for (size_t i = 0; i < all.size(); ++i) {
      Progress& p = all[i].progress;
      objects.push_back(native_final_json(texts[i], finish_native_summary(p), take_logprobs(p, tokenizer)));
    }
    return all.size() == 1 ? objects[0] : objects;
  }
  std::vector<CompletionChoice> choices;
  for (size_t i = 0; i < all.size(); ++i) {
    Progress& p = all[i].progress;
    SplitText split = p.reasoning.finish(texts[i]);  // all of it is content but in a chat reply that thinks
    choices.push_back({.text = std::move(split.content),
                       .reasoning = std::move(split.reasoning),
                       .reason = *p.reason,
                       .logprobs = take_logprobs(p, tokenizer)});
  }
  return completion_json(all.front().progress.header, std::move(choices), total_usage(all));
}

// The non-streamed reply, once the first completion's first token is there: the JSON body when every completion's
// request ended, preceded by a space every keep-alive period (JSON allows leading whitespace) so that a client that
// went away is noticed.
bool whole_reply(const CompletionRoute& route, ServingLoop& loop, std::vector<Pending>& all,
                 RequestChannel::Update first, httplib::DataSink& sink) {
  const Tokenizer& tokenizer = *route.served->tokenizer;
  std::vector<std::string> texts(all.size());
  texts[0] = absorb(all[0].progress, tokenizer, first);
  auto last_write = Clock::now();
  for (size_t i = 0; i < all.size(); ++i) {
    Progress& p = all[i].progress;
    while (!p.reason) {
      RequestChannel::Update update = all[i].channel->wait(route.options->keep_alive);
      texts[i] += absorb(p, tokenizer, update);
      if (p.reason || Clock::now() - last_write < route.options->keep_alive) continue;
      if (!sink.write(" ", 1)) {
        cancel_all(loop, all);
        return false;
      }
      last_write = Clock::now();
    }
    if (p.stopped_by_text) loop.cancel(all[i].channel);
    texts[i] += p.text.finish();
  }
  const std::string out = serialize(whole_body(all, texts, tokenizer));
  sink.write(out.data(), out.size());
  sink.done();
  return true;
}

// Waits for a non-streamed request's first token or its end (queue and prompt time; the client cannot be
// probed yet: its status line is not sent, so that an early failure still gets its status).
RequestChannel::Update first_update(RequestChannel& channel) {
  for (;;) {
    RequestChannel::Update update = channel.wait(std::chrono::milliseconds(500));
    if (update.finished || !update.tokens.empty()) return update;
  }
}

Result<CompletionRequest> parse_body(const ServedModel& served, Endpoint endpoint, const httplib::Request& req) {
  auto body = json_body(req);
  if (!body) return body.error();
  return parse_completion_request(*body, endpoint, served.limits, req.body);
}

// The job of one prompt, which must leave room for a generated token in the context.
Result<ServeJob> job_for(const ServedModel& served, const CompletionRequest& request, std::vector<int32_t> prompt,
                         const std::string& name) {
  const uint32_t n_ctx = served.limits.n_ctx;
  if (prompt.size() >= n_ctx) {
    return fail("{} has {} tokens; the context holds {} (-c), with room for at least one generated token",
                name == "prompt" ? "the prompt" : name, prompt.size(), n_ctx);
  }
  const auto room = static_cast<uint32_t>(n_ctx - prompt.size());
  return ServeJob{.prompt = std::move(prompt),
                  .max_tokens = std::min(request.max_tokens.value_or(room), room),
                  .sampling = request.sampling,
                  .top_logprobs = request.top_logprobs,
                  .ignore_eos = request.ignore_eos,
                  .cache_prompt = request.cache_prompt,
                  .grammar = request.grammar};
}

// Choice j of a prompt's n: a given seed is moved by j, so that the choices differ and each can be reproduced.
ServeJob choice_job(const ServeJob& job, uint32_t j) {
  ServeJob choice = job;
  if (j > 0 && choice.sampling.seed != kRandomSeed) choice.sampling.seed = (choice.sampling.seed + j) % kRandomSeed;
  return choice;
}

// The reply's progress for `job` before it is submitted.
Progress progress_for(const CompletionRoute& route, const CompletionRequest& request, const ServeJob& job,
                      const ResponseHeader& header) {
  Progress p;
  p.header = header;
  p.want_logprobs = request.top_logprobs.has_value();
  p.return_tokens = request.return_tokens && !request.stream;  // llama-server's stream ends with []
  p.text = TextStream(request.stop);
  if (header.endpoint == Endpoint::chat) {
    const auto& chat = route.served->chat_template;
    const bool harmony = chat && chat->family() == ChatFamily::harmony;
    p.reasoning = ReasoningSplit(request.reasoning_format, harmony ? ReplySyntax::harmony : ReplySyntax::think_tags);
  }
  p.usage.prompt_tokens = job.prompt.size();
  if (header.endpoint == Endpoint::native) {
    const ServedModel& served = *route.served;
    p.native.model = route.options->alias;
    for (int32_t id : job.prompt) p.native.prompt_text += served.tokenizer->token_to_piece(id);
    p.native.generation_settings =
        sampling_params_json(job.sampling, job.max_tokens, job.ignore_eos, job.top_logprobs.value_or(0));
  }
  return p;
}

}  // namespace

void answer_completion(const CompletionRoute& route, Endpoint endpoint, const httplib::Request& req,
                       httplib::Response& res) {
  const ServedModel& served = *route.served;
  if (!served.completions_refused.empty()) return send_error(res, 501, served.completions_refused);
  auto request = parse_body(served, endpoint, req);
  if (!request) return send_error(res, 400, request.error().message);
  auto prompts = prompt_tokens(served, *request);
  if (!prompts) return send_error(res, 400, prompts.error().message);
  // n completions of each prompt, in OpenAI's order: prompt i's choice j is number i * n + j.
  std::vector<ServeJob> jobs;
  for (size_t i = 0; i < prompts->size(); ++i) {
    auto job = job_for(served, *request, std::move((*prompts)[i]), prompt_name(prompts->size(), i));
    if (!job) return send_error(res, 400, job.error().message);
    for (uint32_t j = 0; j < request->n; ++j) jobs.push_back(choice_job(*job, j));
  }
  const ResponseHeader header{
      .endpoint = endpoint,
      .id = fmt::format("{}-{:x}", endpoint == Endpoint::chat ? "chatcmpl" : "cmpl", (*route.next_id)++),
      .created =
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count(),
      .model = route.options->alias};
  ServingLoop& loop = *served.loop;
  auto all = std::make_shared<std::vector<Pending>>();
  auto doorbell = request->stream ? std::make_shared<Doorbell>() : nullptr;
  for (size_t k = 0; k < jobs.size(); ++k) {
    ServeJob& job = jobs[k];
    job.doorbell = doorbell;
    Progress progress = progress_for(route, *request, job, header);
    progress.index = k;
    progress.first_choice = k % request->n == 0;
    auto submitted = loop.submit(std::move(job));
    if (!submitted.channel) {
      cancel_all(loop, *all);
      res.set_header("Retry-After", "1");
      return send_error(res, 503,
                        submitted.refusal == ServingLoop::Refusal::queue_full
                            ? "the server is busy: every slot runs and the queue is full; retry later"
                            : "the server is shutting down");
    }
    all->push_back({.channel = std::move(submitted.channel), .progress = std::move(progress)});
  }
  const auto cancel = [&loop, all](bool) { cancel_all(loop, *all); };
  if (request->stream) {
    const bool usage = request->include_usage;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [route, &loop, all, doorbell, usage](size_t, httplib::DataSink& sink) {
          return stream_reply(route, loop, *all, *doorbell, usage, sink);
        },
        cancel);
    return;
  }
  RequestChannel::Update first = first_update(*all->front().channel);
  if (first.finished && first.tokens.empty() && first.reason == FinishReason::error) {
    cancel_all(loop, *all);
    return send_error(res, 500, first.error);
  }
  res.set_chunked_content_provider(
      "application/json",
      [route, &loop, all, first](size_t, httplib::DataSink& sink) mutable {
        return whole_reply(route, loop, *all, std::move(first), sink);
      },
      cancel);
}

}  // namespace infertune
