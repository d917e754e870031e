#pragma once
// Chat messages -> the prompt text a chat model was trained on. A GGUF file carries its template as Jinja
// source (tokenizer.chat_template); rather than interpret Jinja, the server recognises the template's
// family by the markers it writes and renders that family with its own code, as llama.cpp's server did
// before it embedded a Jinja engine. The families:
//
//   chatml   <|im_start|>{role}\n{content}<|im_end|>\n ...              (Qwen, Yi, many fine-tunes)
//   llama3   <|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|> (content trimmed)
//   mistral  [INST] {user} [/INST]{assistant}</s> ...  (a system message is put before the first user
//            message; roles must alternate, as the template requires)
//   llama2   [INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {assistant} </s><s>[INST] ...
//   gemma    <start_of_turn>user\n{content}<end_of_turn>\n, the assistant's role written "model", a system
//            message prepended to the first user message
//   phi3     <|user|>\n{content}<|end|>\n<|assistant|>\n ...                  (Phi-3, Phi-3.5)
//   phi4     <|im_start|>{role}<|im_sep|>{content}<|im_end|> ...               (Phi-4)
//   phi4-mini  <|{role}|>{content}<|end|> ..., <|assistant|> to open the reply  (Phi-4-mini: phi3 without newlines)
//   deepseek3  {system}\n\n<｜User｜>{user}<｜Assistant｜>{assistant}<｜end▁of▁sentence｜> ...  (DeepSeek-V3,
//            R1 and the R1 distills of Qwen and Llama, whose replies open with <think>: reasoning_split.h)
//   gpt-oss  OpenAI's harmony format: <|start|>system<|message|>{identity, date, reasoning effort, channels}<|end|>,
//            a system message as the developer's "# Instructions", <|start|>user<|message|>{content}<|end|>, earlier
//            replies as <|start|>assistant<|channel|>final<|message|>{content}<|end|>; the reply's analysis channel is
//            its reasoning (harmony_split.h)
//
// A template of none of these is an error that says so and names --chat-template, which picks a family by
// name. A file without a template gets the family whose turn markers its vocabulary has as tokens (a Gemma file
// has <start_of_turn>); llama-server falls back to chatml there, whose markers such a model reads as plain text. BOS is
// not written: the server tokenizes the prompt with the model's add_bos setting.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

struct ChatMessage {
  std::string role;  // system, user, assistant (tool and others: rendered as the family allows)
  std::string content;
};

enum class ChatFamily { chatml, llama3, mistral, llama2, gemma, phi3, deepseek3, harmony, phi4, phi4_mini };

// What a request may pass to the template beyond its messages (chat_template_kwargs).
struct ChatRenderOptions {
  // false, with a template that has the switch (Qwen3's), opens the reply with an empty thought
  bool enable_thinking = true;
  std::string reasoning_effort = "medium";  // gpt-oss: low, medium or high, written into its system message
  std::string date{};                       // gpt-oss's "Current date: YYYY-MM-DD"; empty: today (UTC)
};

class ChatTemplate {
 public:
  // The family of a tokenizer.chat_template source; an error naming what was looked for when none matches.
  static Result<ChatTemplate> from_jinja(std::string_view source);
  // For a model whose file has no template: the family whose turn markers are tokens of the vocabulary
  // (<start_of_turn> and <end_of_turn>: gemma; <|im_start|> and <|im_end|>: chatml; ...), if one's are.
  static std::optional<ChatTemplate> from_vocabulary(const std::function<bool(std::string_view)>& has_token);
  // A family by name (--chat-template chatml); the error lists the names.
  static Result<ChatTemplate> from_name(std::string_view name);
  // The names from_name knows, comma-separated (for help and messages).
  static std::string names();

  ChatFamily family() const { return family_; }
  // The template reads chat_template_kwargs' enable_thinking (Qwen3's: its source names it). False from
  // from_name and from_vocabulary: a family by name thinks as its model likes.
  bool has_thinking_switch() const { return thinking_switch_; }
  std::string_view name() const;
  // The token from_vocabulary looks for first ("<start_of_turn>"); "" for the [INST] families.
  std::string_view turn_marker() const;

  // The texts of the model's special tokens that some families write between turns (mistral and llama2
  // end an assistant turn with EOS; llama2 starts each later turn with BOS).
  struct SpecialTexts {
    std::string_view bos;
    std::string_view eos;
  };

  // The prompt of `messages`, ending with the assistant's header when add_generation_prompt. Errors name the
  // message (index and role) that the family cannot render. enable_thinking false, with a template that has the
  // switch, opens the reply with an empty thought (<think>\n\n</think>\n\n), as Qwen3's template does.
  Result<std::string> render(std::span<const ChatMessage> messages, bool add_generation_prompt, SpecialTexts special,
                             const ChatRenderOptions& options = {}) const;

 private:
  explicit ChatTemplate(ChatFamily family, bool thinking_switch = false)
      : family_(family), thinking_switch_(thinking_switch) {}
  ChatFamily family_;
  bool thinking_switch_ = false;
};

}  // namespace infertune
