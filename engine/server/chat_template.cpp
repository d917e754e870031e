#include "engine/server/chat_template.h"

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <utility>

namespace infertune {
namespace {

struct FamilyInfo {
  ChatFamily family;
  std::string_view name;
  std::array<std::string_view, 2> markers;  // all present in a template of the family ("" = none)
};

// In the order a template is tested: a template with <|im_start|> is chatml whatever else it mentions, unless it
// separates the role with <|im_sep|> (Phi-4).
constexpr std::array<FamilyInfo, 10> kFamilies = {{
    {ChatFamily::phi4, "phi4", {"<|im_start|>", "<|im_sep|>"}},
    {ChatFamily::chatml, "chatml", {"<|im_start|>", ""}},
    {ChatFamily::harmony, "gpt-oss", {"<|start|>", "<|channel|>"}},
    {ChatFamily::deepseek3, "deepseek3", {"<｜User｜>", "<｜Assistant｜>"}},
    {ChatFamily::llama3, "llama3", {"<|start_header_id|>", "<|eot_id|>"}},
    {ChatFamily::gemma, "gemma", {"<start_of_turn>", ""}},
    {ChatFamily::phi3, "phi3", {"<|user|>", "<|end|>"}},
    // Phi-4-mini's template writes each role's marker from the role's name, so only the reply's is in its source.
    {ChatFamily::phi4_mini, "phi4-mini", {"<|assistant|>", "<|end|>"}},
    {ChatFamily::llama2, "llama2", {"<<SYS>>", "[INST]"}},
    {ChatFamily::mistral, "mistral", {"[INST]", ""}},
}};

// The turn markers a family's models have in their vocabulary as tokens of their own. A model whose file carries no
// template (base models, some conversions) still shows by these what it was trained on. The [INST] families have
// none: their markers are plain text in the vocabularies of that era.
struct FamilyTokens {
  ChatFamily family;
  std::array<std::string_view, 2> tokens;  // both in the vocabulary
};

constexpr std::array<FamilyTokens, 7> kFamilyTokens = {{
    {ChatFamily::harmony, {"<|start|>", "<|channel|>"}},
    {ChatFamily::phi4, {"<|im_start|>", "<|im_sep|>"}},
    {ChatFamily::deepseek3, {"<｜User｜>", "<｜Assistant｜>"}},
    {ChatFamily::gemma, {"<start_of_turn>", "<end_of_turn>"}},
    {ChatFamily::llama3, {"<|start_header_id|>", "<|eot_id|>"}},
    {ChatFamily::chatml, {"<|im_start|>", "<|im_end|>"}},
    {ChatFamily::phi3, {"<|user|>", "<|end|>"}},
}};

const FamilyInfo& info(ChatFamily family) {
  for (const FamilyInfo& f : kFamilies) {
    if (f.family == family) return f;
  }
  return kFamilies[0];
}

// Python's str.strip() over ASCII whitespace (Jinja's trim filter, which the templates apply).
std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

Status unsupported_role(const ChatMessage& m, size_t i, ChatFamily family, std::string_view allowed) {
  return fail("messages[{}]: role '{}' is not one the {} chat template renders ({})", i, m.role, info(family).name,
              allowed);
}

// `no_thought`: the reply opens with an empty thought, as Qwen3's template writes it for enable_thinking false.
Result<std::string> render_chatml(std::span<const ChatMessage> messages, bool generation, bool no_thought) {
  std::string out;
  for (const ChatMessage& m : messages) out += fmt::format("<|im_start|>{}\n{}<|im_end|>\n", m.role, m.content);
  if (generation) out += no_thought ? "<|im_start|>assistant\n<think>\n\n</think>\n\n" : "<|im_start|>assistant\n";
  return out;
}

Result<std::string> render_llama3(std::span<const ChatMessage> messages, bool generation) {
  std::string out;
  for (const ChatMessage& m : messages) {
    out += fmt::format("<|start_header_id|>{}<|end_header_id|>\n\n{}<|eot_id|>", m.role, trim(m.content));
  }
  if (generation) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// The conversation as the [INST] and gemma families need it: a leading system message taken out, then
// user and assistant alternating from a user message.
struct Alternating {
  std::string_view system{};
  std::span<const ChatMessage> turns{};
  size_t first_index = 0;  // of turns[0] in the request's messages
};

Result<Alternating> alternating(std::span<const ChatMessage> messages, ChatFamily family) {
  Alternating a{.turns = messages};
  if (!messages.empty() && messages[0].role == "system") {
    a.system = messages[0].content;
    a.turns = messages.subspan(1);
    a.first_index = 1;
  }
  for (size_t i = 0; i < a.turns.size(); ++i) {
    const std::string_view want = i % 2 == 0 ? "user" : "assistant";
    if (a.turns[i].role != want) {
      return fail(
          "messages[{}]: role '{}' where the {} chat template needs '{}' (after an optional system message, "
          "user and assistant alternate, starting with user)",
          a.first_index + i, a.turns[i].role, info(family).name, want);
    }
  }
  return a;
}

Result<std::string> render_mistral(std::span<const ChatMessage> messages, bool /*generation*/,
                                   ChatTemplate::SpecialTexts special) {
  auto a = alternating(messages, ChatFamily::mistral);
  if (!a) return a.error();
  std::string out;
  for (size_t i = 0; i < a->turns.size(); ++i) {
    const ChatMessage& m = a->turns[i];
    if (m.role == "user") {
      const bool with_system = i == 0 && !a->system.empty();
      out += fmt::format("[INST] {}{}{} [/INST]", with_system ? a->system : "", with_system ? "\n\n" : "", m.content);
    } else {
      out += m.content;
      out += special.eos;
    }
  }
  return out;  // the assistant answers straight after [/INST]: no generation header
}

Result<std::string> render_llama2(std::span<const ChatMessage> messages, bool /*generation*/,
                                  ChatTemplate::SpecialTexts special) {
  auto a = alternating(messages, ChatFamily::llama2);
  if (!a) return a.error();
  std::string out;
  for (size_t i = 0; i < a->turns.size(); ++i) {
    const ChatMessage& m = a->turns[i];
    if (m.role == "assistant") {
      out += fmt::format(" {} {}", trim(m.content), special.eos);
      continue;
    }
    if (i > 0) out += special.bos;  // the first BOS is the tokenizer's
    std::string content = m.content;
    if (i == 0 && !a->system.empty()) content = fmt::format("<<SYS>>\n{}\n<</SYS>>\n\n{}", a->system, m.content);
    out += fmt::format("[INST] {} [/INST]", trim(content));
  }
  return out;
}

Result<std::string> render_gemma(std::span<const ChatMessage> messages, bool generation) {
  auto a = alternating(messages, ChatFamily::gemma);
  if (!a) return a.error();
  std::string out;
  for (size_t i = 0; i < a->turns.size(); ++i) {
    const ChatMessage& m = a->turns[i];
    const std::string prefix = i == 0 && !a->system.empty() ? fmt::format("{}\n\n", a->system) : std::string();
    out += fmt::format("<start_of_turn>{}\n{}{}<end_of_turn>\n", m.role == "assistant" ? "model" : "user", prefix,
                       trim(m.content));
  }
  if (generation) out += "<start_of_turn>model\n";
  return out;
}

Result<std::string> render_phi3(std::span<const ChatMessage> messages, bool /*generation*/) {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user") {
      out += fmt::format("<|user|>\n{}<|end|>\n<|assistant|>\n", m.content);  // the template opens the reply
    } else if (m.role == "assistant") {
      out += fmt::format("{}<|end|>\n", m.content);
    } else if (m.role == "system") {
      out += fmt::format("<|system|>\n{}<|end|>\n", m.content);
    } else {
      return unsupported_role(m, i, ChatFamily::phi3, "system, user, assistant").error();
    }
  }
  return out;
}

// The families that write every message alike, its role inside the marker: `turn` is the format of one message
// ({} the role, then {} the content), `reply` what opens the assistant's; system, user and assistant only.
Result<std::string> render_role_turns(std::span<const ChatMessage> messages, bool generation, ChatFamily family,
                                      std::string_view turn, std::string_view reply) {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role != "system" && m.role != "user" && m.role != "assistant") {
      return unsupported_role(m, i, family, "system, user, assistant").error();
    }
    out += fmt::format(fmt::runtime(turn), m.role, m.content);
  }
  if (generation) out += reply;
  return out;
}

// Phi-4's: chatml with <|im_sep|> after the role instead of a newline, and nothing between turns.
Result<std::string> render_phi4(std::span<const ChatMessage> messages, bool generation) {
  return render_role_turns(messages, generation, ChatFamily::phi4, "<|im_start|>{}<|im_sep|>{}<|im_end|>",
                           "<|im_start|>assistant<|im_sep|>");
}

// Phi-4-mini's: phi3's markers with nothing between them and the content, the reply opened at the end only.
Result<std::string> render_phi4_mini(std::span<const ChatMessage> messages, bool generation) {
  return render_role_turns(messages, generation, ChatFamily::phi4_mini, "<|{}|>{}<|end|>", "<|assistant|>");
}

// As llama.cpp writes DeepSeek-V3's: a system message wherever it stands, followed by a blank line.
Result<std::string> render_deepseek3(std::span<const ChatMessage> messages, bool generation) {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "system") {
      out += fmt::format("{}\n\n", m.content);
    } else if (m.role == "user") {
      out += fmt::format("<｜User｜>{}", m.content);
    } else if (m.role == "assistant") {
      out += fmt::format("<｜Assistant｜>{}<｜end▁of▁sentence｜>", m.content);
    } else {
      return unsupported_role(m, i, ChatFamily::deepseek3, "system, user, assistant").error();
    }
  }
  if (generation) out += "<｜Assistant｜>";
  return out;
}

// YYYY-MM-DD in UTC, as gpt-oss's template writes strftime_now("%Y-%m-%d").
std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}-{:02}-{:02}", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday);
}

// gpt-oss's system message: who it is, when, how hard to think, and the channels its replies use.
std::string harmony_system(const ChatRenderOptions& options) {
  return fmt::format(
      "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
      "Knowledge cutoff: 2024-06\nCurrent date: {}\n\nReasoning: {}\n\n"
      "# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>",
      options.date.empty() ? today_utc() : options.date, options.reasoning_effort);
}

// As gpt-oss's template: a leading system (or developer) message becomes the developer's instructions; earlier
// replies keep only their final channel (their reasoning is dropped, as the template drops it).
Result<std::string> render_harmony(std::span<const ChatMessage> messages, bool generation,
                                   const ChatRenderOptions& options) {
  std::string out = harmony_system(options);
  size_t first = 0;
  if (messages[0].role == "system" || messages[0].role == "developer") {
    out += fmt::format("<|start|>developer<|message|># Instructions\n\n{}<|end|>", messages[0].content);
    first = 1;
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user") {
      out += fmt::format("<|start|>user<|message|>{}<|end|>", m.content);
    } else if (m.role == "assistant") {
      const bool last_turn = i + 1 == messages.size() && !generation;  // a training-style transcript
      out += fmt::format("<|start|>assistant<|channel|>final<|message|>{}{}", m.content,
                         last_turn ? "<|return|>" : "<|end|>");
    } else {
      return unsupported_role(m, i, ChatFamily::harmony, "a first system or developer message, user, assistant")
          .error();
    }
  }
  if (generation) out += "<|start|>assistant";
  return out;
}

}  // namespace

Result<ChatTemplate> ChatTemplate::from_jinja(std::string_view source) {
  for (const FamilyInfo& f : kFamilies) {
    bool all = true;
    for (std::string_view marker : f.markers) all = all && source.find(marker) != std::string_view::npos;
    if (all) return ChatTemplate(f.family, source.find("enable_thinking") != std::string_view::npos);
  }
  return fail(
      "the model's chat template (tokenizer.chat_template, {} bytes) is none of the families this server "
      "renders ({}); pick one with --chat-template NAME",
      source.size(), names());
}

std::optional<ChatTemplate> ChatTemplate::from_vocabulary(const std::function<bool(std::string_view)>& has_token) {
  for (const FamilyTokens& f : kFamilyTokens) {
    if (has_token(f.tokens[0]) && has_token(f.tokens[1])) return ChatTemplate(f.family);
  }
  return std::nullopt;
}

std::string_view ChatTemplate::turn_marker() const {
  for (const FamilyTokens& f : kFamilyTokens) {
    if (f.family == family_) return f.tokens[0];
  }
  return {};
}

Result<ChatTemplate> ChatTemplate::from_name(std::string_view name) {
  for (const FamilyInfo& f : kFamilies) {
    if (f.name == name) return ChatTemplate(f.family);
  }
  return fail("--chat-template: unknown template '{}' (known: {})", name, names());
}

std::string ChatTemplate::names() {
  std::string out;
  for (const FamilyInfo& f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::string_view ChatTemplate::name() const { return info(family_).name; }

Result<std::string> ChatTemplate::render(std::span<const ChatMessage> messages, bool add_generation_prompt,
                                         SpecialTexts special, const ChatRenderOptions& options) const {
  if (messages.empty()) return fail("messages: at least one message is needed");
  switch (family_) {
    case ChatFamily::chatml:
      return render_chatml(messages, add_generation_prompt, thinking_switch_ && !options.enable_thinking);
    case ChatFamily::harmony:
      return render_harmony(messages, add_generation_prompt, options);
    case ChatFamily::llama3:
      return render_llama3(messages, add_generation_prompt);
    case ChatFamily::mistral:
      return render_mistral(messages, add_generation_prompt, special);
    case ChatFamily::llama2:
      return render_llama2(messages, add_generation_prompt, special);
    case ChatFamily::gemma:
      return render_gemma(messages, add_generation_prompt);
    case ChatFamily::deepseek3:
      return render_deepseek3(messages, add_generation_prompt);
    case ChatFamily::phi3:
      return render_phi3(messages, add_generation_prompt);
    case ChatFamily::phi4:
      return render_phi4(messages, add_generation_prompt);
    case ChatFamily::phi4_mini:
      return render_phi4_mini(messages, add_generation_prompt);
  }
  return fail("unknown chat family");
}

}  // namespace infertune
