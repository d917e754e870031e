#pragma once
// POST /v1/completions, /v1/chat/completions and /completion: parse and check the body, build the prompts (chat:
// the template), submit them to the serving loop and answer, streamed as server-sent events (one prompt) or as one
// JSON body (a choice per prompt for OpenAI's completions, an array of objects for llama.cpp's /completion).
#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/server/completion_request.h"
#include "engine/server/http_server.h"

namespace infertune {

struct CompletionRoute {
  const ServedModel* served;
  const HttpOptions* options;
  std::atomic<uint64_t>* next_id;
  // Held by a streamed or chunked reply until its last byte is written (HttpServer::wait_replies).
  std::shared_ptr<void> reply_in_flight;
};

void answer_completion(const CompletionRoute& route, Endpoint endpoint, const httplib::Request& req,
                       httplib::Response& res);

// Each prompt's token ids: given ids, the text tokenized with BOS and special tokens, or (chat: one prompt) the
// messages rendered with the chat template and tokenized so. Errors are the client's (400).
Result<std::vector<std::vector<int32_t>>> prompt_tokens(const ServedModel& served, const CompletionRequest& request);

// A prompt's text as the server tokenizes it (BOS and special tokens, as llama-server); an error naming `name`
// when it encodes to no tokens.
Result<std::vector<int32_t>> tokens_of_text(const ServedModel& served, const std::string& text, std::string_view name);

// How errors name prompt i of n: "prompt", or "prompt[2]" when there are several (`field`: an embedding request's
// "input" or "content").
std::string prompt_name(size_t n_prompts, size_t i, std::string_view field = "prompt");

// The messages in the model's chat template, with its BOS/EOS texts where the family writes them (options: the
// request's chat_template_kwargs, ChatTemplate::render).
Result<std::string> render_chat(const ServedModel& served, std::span<const ChatMessage> messages,
                                bool add_generation_prompt, const ChatRenderOptions& options = {});

// The request's body as a JSON object, or the client's error (parse_request_body, json_fields.h).
Result<nlohmann::json> json_body(const httplib::Request& req);

// Sets an OpenAI-style error reply.
void send_error(httplib::Response& res, int status, std::string_view message);

}  // namespace infertune
