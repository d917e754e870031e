// libFuzzer target for the chat templates (engine/server/chat_template.h): a family picked by name or
// recognised from Jinja source (which a model file controls), and the messages a network client sends
// (roles and contents of arbitrary bytes, invalid UTF-8, NULs, many messages) rendered with it.
//
// Input encoding (seeds can be written by hand with printf):
//   byte 0, flags: bit 0 add_generation_prompt; bit 1 the template is field 0 given to from_jinja, else
//     from_name; bits 2..4, by name: 0..6 the family chatml, llama3, mistral, llama2, gemma, phi3, deepseek3
//     (the ChatFamily order), 7 field 0 as the name (an unknown one, "gpt-oss", "phi4" or "phi4-mini"); bits 5..7: 7
//     repeats the message list 128 times (at most 1024 messages and 64 KiB of content), 6 16 times, others once.
//   then fields separated by 0x1E (ASCII RS): field 0 the Jinja source or name (ignored for names 0..5),
//     field 1 the BOS text, field 2 the EOS text, every later field one message: a first byte 's', 'u', 'a'
//     or 't' is the role system, user, assistant or tool and the rest of the field the content; any other
//     field is ROLE 0x1F CONTENT (ASCII US; the whole field the role, with no content, when there is none).
//   e.g. printf '\x01\x1e<s>\x1e</s>\x1esBe brief.\x1euHi' is chatml, system + user, with the header.
//
// Properties checked on every input; a violation prints what failed and traps, which libFuzzer reports
// as a crash:
//   - nothing crashes, hangs or over-allocates (ASan/UBSan, -rss_limit_mb, -timeout);
//   - from_jinja picks the first family, in chat_template.cpp's order, whose markers all occur in the
//     source, and fails (naming --chat-template and the family names) when none does; from_name knows
//     exactly the ten names and its error lists them; from_name(t.name()) gives t's family;
//   - render is deterministic;
//   - render fails exactly when the family cannot render the conversation: no messages; a role other
//     than system/user/assistant (phi3, phi4, phi4-mini, deepseek3); after an optional leading system message, roles
//     not alternating user, assistant, ... (mistral, llama2, gemma); after an optional leading system or developer
//     message, a role other than user/assistant (gpt-oss); every error message is non-empty and names the offending
//     message as "messages[i]" and its role;
//   - a successful render has every message's content in order: verbatim (chatml, phi3, phi4, phi4-mini, mistral; the
//     system message of llama2 and gemma, deepseek3) or trimmed of ASCII whitespace (llama3; user and assistant
//     turns of llama2 and gemma); the [INST] and gemma families drop a system message with no turn after it,
//     as their Jinja templates do; chatml, llama3, deepseek3, phi4 and phi4-mini are exactly their documented format,
//     and gpt-oss after its fixed system message (which carries today's date);
//   - it is linear in the input: at most the contents, roles, BOS/EOS and a few dozen bytes per message (and
//     gpt-oss's system message);
//   - add_generation_prompt appends exactly the assistant header (chatml, llama3, gemma, deepseek3, phi4, phi4-mini,
//   and gpt-oss
//     where the last message is not an assistant's) or changes nothing (mistral, llama2, phi3, whose reply opens
//     after the user's turn); without it, chatml,
//     llama3 and gemma end with their end-of-turn marker; a last user turn ends with " [/INST]" (mistral,
//     llama2) or "<|end|>\n<|assistant|>\n" (phi3).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/server/chat_template.h"
#include "fuzz_check.h"

namespace {

using namespace infertune;

using fuzz::check;

// chat_template.cpp's table, written out again as the oracle for from_jinja (in its order).
struct Family {
  ChatFamily family;
  std::string_view name;
  std::array<std::string_view, 2> markers;
};
constexpr std::array<Family, 10> kOrder = {{
    {ChatFamily::phi4, "phi4", {"<|im_start|>", "<|im_sep|>"}},
    {ChatFamily::chatml, "chatml", {"<|im_start|>", ""}},
    {ChatFamily::harmony, "gpt-oss", {"<|start|>", "<|channel|>"}},
    {ChatFamily::deepseek3, "deepseek3", {"<｜User｜>", "<｜Assistant｜>"}},
    {ChatFamily::llama3, "llama3", {"<|start_header_id|>", "<|eot_id|>"}},
    {ChatFamily::gemma, "gemma", {"<start_of_turn>", ""}},
    {ChatFamily::phi3, "phi3", {"<|user|>", "<|end|>"}},
    {ChatFamily::phi4_mini, "phi4-mini", {"<|assistant|>", "<|end|>"}},
    {ChatFamily::llama2, "llama2", {"<<SYS>>", "[INST]"}},
    {ChatFamily::mistral, "mistral", {"[INST]", ""}},
}};
// By name, in ChatFamily order.
constexpr std::array<std::string_view, 7> kNames = {"chatml", "llama3", "mistral",  "llama2",
                                                    "gemma",  "phi3",   "deepseek3"};
constexpr std::string_view kHarmonyName = "gpt-oss";  // reached by name through field 0 (selector 7)
constexpr std::string_view kPhi4Name = "phi4";        // and these two
constexpr std::string_view kPhi4MiniName = "phi4-mini";
constexpr size_t kHarmonySystemBytes = 512;  // its fixed system message: identity, date, channels

constexpr char kFieldSeparator = '\x1e';
constexpr char kRoleSeparator = '\x1f';
constexpr size_t kMaxMessages = 1024;
constexpr size_t kMaxContentBytes = 64 << 10;

std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  for (size_t pos = 0;;) {
    const size_t next = s.find(separator, pos);
    out.push_back(s.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

ChatMessage message_of(std::string_view field) {
  if (!field.empty()) {
    switch (field[0]) {
      case 's':
        return {"system", std::string(field.substr(1))};
      case 'u':
        return {"user", std::string(field.substr(1))};
      case 'a':
        return {"assistant", std::string(field.substr(1))};
      case 't':
        return {"tool", std::string(field.substr(1))};
      default:
        break;
    }
  }
  const size_t at = field.find(kRoleSeparator);
  if (at == std::string_view::npos) return {std::string(field), ""};
  return {std::string(field.substr(0, at)), std::string(field.substr(at + 1))};
}

std::string_view ascii_trim(std::string_view s) {
  while (!s.empty() && std::string_view(" \t\n\r\f\v").find(s.front()) != std::string_view::npos) s.remove_prefix(1);
  while (!s.empty() && std::string_view(" \t\n\r\f\v").find(s.back()) != std::string_view::npos) s.remove_suffix(1);
  return s;
}

bool alternating_family(ChatFamily f) {
  return f == ChatFamily::mistral || f == ChatFamily::llama2 || f == ChatFamily::gemma;
}

// The index of the message the family cannot render, if any (messages not empty).
std::optional<size_t> expected_error(ChatFamily f, const std::vector<ChatMessage>& messages) {
  if (f == ChatFamily::phi3 || f == ChatFamily::phi4 || f == ChatFamily::phi4_mini || f == ChatFamily::deepseek3) {
    for (size_t i = 0; i < messages.size(); ++i) {
      const std::string& r = messages[i].role;
      if (r != "system" && r != "user" && r != "assistant") return i;
    }
  } else if (f == ChatFamily::harmony) {
    const size_t first = messages[0].role == "system" || messages[0].role == "developer" ? 1 : 0;
    for (size_t i = first; i < messages.size(); ++i) {
      if (messages[i].role != "user" && messages[i].role != "assistant") return i;
    }
  } else if (alternating_family(f)) {
    const size_t first = messages[0].role == "system" ? 1 : 0;
    for (size_t i = first; i < messages.size(); ++i) {
      if (messages[i].role != ((i - first) % 2 == 0 ? "user" : "assistant")) return i;
    }
  }
  return std::nullopt;
}

std::string_view generation_header(ChatFamily f) {
  switch (f) {
    case ChatFamily::chatml:
      return "<|im_start|>assistant\n";
    case ChatFamily::llama3:
      return "<|start_header_id|>assistant<|end_header_id|>\n\n";
    case ChatFamily::gemma:
      return "<start_of_turn>model\n";
    case ChatFamily::deepseek3:
      return "<｜Assistant｜>";
    case ChatFamily::harmony:
      return "<|start|>assistant";
    case ChatFamily::phi4:
      return "<|im_start|>assistant<|im_sep|>";
    case ChatFamily::phi4_mini:
      return "<|assistant|>";
    default:
      return "";
  }
}

// gpt-oss after its system message, without the generation prompt.
std::string harmony_format(const std::vector<ChatMessage>& messages) {
  std::string out;
  size_t first = 0;
  if (messages[0].role == "system" || messages[0].role == "developer") {
    out.append("<|start|>developer<|message|># Instructions\n\n").append(messages[0].content).append("<|end|>");
    first = 1;
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user") {
      out.append("<|start|>user<|message|>").append(m.content).append("<|end|>");
    } else {
      out.append("<|start|>assistant<|channel|>final<|message|>").append(m.content);
      out.append(i + 1 == messages.size() ? "<|return|>" : "<|end|>");
    }
  }
  return out;
}

std::string exact_format(ChatFamily f, const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const ChatMessage& m : messages) {
    if (f == ChatFamily::chatml) {
      out.append("<|im_start|>").append(m.role).append("\n").append(m.content).append("<|im_end|>\n");
    } else if (f == ChatFamily::phi4) {
      out.append("<|im_start|>").append(m.role).append("<|im_sep|>").append(m.content).append("<|im_end|>");
    } else if (f == ChatFamily::phi4_mini) {
      out.append("<|").append(m.role).append("|>").append(m.content).append("<|end|>");
    } else if (f == ChatFamily::deepseek3) {
      if (m.role == "system") out.append(m.content).append("\n\n");
      if (m.role == "user") out.append("<｜User｜>").append(m.content);
      if (m.role == "assistant") out.append("<｜Assistant｜>").append(m.content).append("<｜end▁of▁sentence｜>");
    } else {
      out.append("<|start_header_id|>").append(m.role).append("<|end_header_id|>\n\n");
      out.append(ascii_trim(m.content)).append("<|eot_id|>");
    }
  }
  return out;
}

void check_contents(ChatFamily f, const std::vector<ChatMessage>& messages, std::string_view out) {
  const bool leading_system = messages[0].role == "system";
  size_t pos = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    const bool system = i == 0 && leading_system;
    if (system && alternating_family(f) && messages.size() == 1) continue;  // dropped, as the templates do
    bool trimmed = f == ChatFamily::llama3;
    if ((f == ChatFamily::llama2 || f == ChatFamily::gemma) && !system) trimmed = true;
    const std::string_view piece = trimmed ? ascii_trim(messages[i].content) : std::string_view(messages[i].content);
    // The earliest match leaves the most room for the rest, so a greedy scan decides "all, in order".
    const size_t at = out.find(piece, pos);
    check(at != std::string_view::npos, "a message's content is missing from the render (or out of order)");
    pos = at + piece.size();
  }
}

void check_render(const ChatTemplate& t, const std::vector<ChatMessage>& messages, bool generation,
                  ChatTemplate::SpecialTexts special) {
  const ChatFamily f = t.family();
  const auto out = t.render(messages, generation, special);
  const auto again = t.render(messages, generation, special);
  check(out.ok() == again.ok(), "render is not deterministic (ok)");
  check(out ? *out == *again : out.error().message == again.error().message, "render is not deterministic");
  if (messages.empty()) {
    check(!out.ok() && !out.error().message.empty(), "no messages rendered, or an empty error");
    return;
  }
  const auto bad = expected_error(f, messages);
  check(out.ok() == !bad.has_value(), out ? "a conversation the family cannot render was rendered"
                                          : "a conversation the family can render was refused");
  if (!out) {
    const std::string& message = out.error().message;
    check(message.find("messages[" + std::to_string(*bad) + "]") != std::string::npos,
          "the error does not name the message index");
    check(message.find("'" + messages[*bad].role + "'") != std::string::npos, "the error does not name the role");
    return;
  }

  const std::string& text = *out;
  size_t bound = 64 + special.bos.size() + (f == ChatFamily::harmony ? kHarmonySystemBytes : 0);
  for (const ChatMessage& m : messages)
    bound += m.role.size() + m.content.size() + special.bos.size() + special.eos.size() + 64;
  check(text.size() <= bound, "the render is larger than linear in its input");
  check_contents(f, messages, text);

  const auto other = t.render(messages, !generation, special);
  check(other.ok(), "add_generation_prompt changed whether the messages render");
  const std::string& with = generation ? text : *other;
  const std::string& without = generation ? *other : text;
  const std::string_view header = generation_header(f);
  if (f == ChatFamily::harmony) {
    // Its system message carries today's date; past it, the messages are exactly the documented format.
    const std::string_view prefix = "<|start|>system<|message|>You are ChatGPT";
    const size_t system_end = with.find("<|end|>");
    check(with.starts_with(prefix) && system_end != std::string::npos, "gpt-oss render does not open with its system");
    const std::string_view rest = std::string_view(with).substr(system_end + 7);
    const std::string body = harmony_format(messages);
    // With the header, a last assistant turn ends with <|end|> (the reply follows), not <|return|>.
    std::string with_body = body;
    if (messages.back().role == "assistant") with_body.replace(with_body.size() - 10, 10, "<|end|>");
    check(rest == with_body + std::string(header), "gpt-oss render differs from the documented format");
    check(std::string_view(without).substr(system_end + 7) == body, "gpt-oss render without the header differs");
    return;
  }
  check(with.size() == without.size() + header.size() && with.starts_with(without) && with.ends_with(header),
        "add_generation_prompt does not append exactly the assistant header");

  const std::string_view last_role = messages.back().role;
  const bool has_turn = !(alternating_family(f) && messages.size() == 1 && messages[0].role == "system");
  switch (f) {
    case ChatFamily::chatml:
    case ChatFamily::llama3:
    case ChatFamily::deepseek3:
    case ChatFamily::phi4:
    case ChatFamily::phi4_mini:
      check(without == exact_format(f, messages),
            "chatml/llama3/deepseek3/phi4/phi4-mini render differs from the documented format");
      break;
    case ChatFamily::gemma:
      check(!has_turn || without.ends_with("<end_of_turn>\n"), "gemma render does not end with <end_of_turn>");
      check(!has_turn || without.starts_with("<start_of_turn>user\n"), "gemma render does not start with a user turn");
      break;
    case ChatFamily::mistral:
    case ChatFamily::llama2:
      check(!has_turn || without.starts_with("[INST] "), "[INST] render does not start with [INST]");
      check(last_role != "user" || without.ends_with(" [/INST]"), "a last user turn does not end with [/INST]");
      check(last_role != "assistant" || without.ends_with(special.eos), "a last assistant turn does not end with EOS");
      break;
    case ChatFamily::phi3:
      check(last_role != "user" || without.ends_with("<|end|>\n<|assistant|>\n"),
            "phi3: a last user turn does not open the reply");
      check(last_role == "user" || without.ends_with("<|end|>\n"), "phi3: a last turn does not end with <|end|>");
      break;
    case ChatFamily::harmony:
      break;  // checked above
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const bool generation = (flags & 1) != 0, jinja = (flags & 2) != 0;
  const unsigned selector = (flags >> 2) & 7;
  const size_t repeat = (flags >> 5) == 7 ? 128 : (flags >> 5) == 6 ? 16 : 1;
  const auto fields = split(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), kFieldSeparator);
  const std::string_view source = fields[0];

  std::optional<ChatTemplate> t;
  if (jinja) {
    const Family* want = nullptr;
    for (const Family& f : kOrder) {
      if (source.find(f.markers[0]) != std::string_view::npos && source.find(f.markers[1]) != std::string_view::npos) {
        want = &f;
        break;
      }
    }
    auto found = ChatTemplate::from_jinja(source);
    check(found.ok() == (want != nullptr), "from_jinja accepted/refused against its markers");
    if (!found) {
      const std::string& message = found.error().message;
      check(message.find("--chat-template") != std::string::npos &&
                message.find(ChatTemplate::names()) != std::string::npos,
            "from_jinja's error does not name --chat-template and the families");
      return 0;
    }
    check(found->family() == want->family, "from_jinja picked another family than the first whose markers occur");
    t = *found;
  } else {
    const std::string_view name = selector < kNames.size() ? kNames[selector] : source;
    auto found = ChatTemplate::from_name(name);
    const bool known = std::find(kNames.begin(), kNames.end(), name) != kNames.end() || name == kHarmonyName ||
                       name == kPhi4Name || name == kPhi4MiniName;
    check(found.ok() == known, "from_name accepted an unknown name or refused a known one");
    if (!found) {
      check(found.error().message.find(ChatTemplate::names()) != std::string::npos, "from_name's error lists no names");
      return 0;
    }
    check(found->name() == name, "from_name gave a template of another name");
    t = *found;
  }
  auto same = ChatTemplate::from_name(t->name());
  check(same.ok() && same->family() == t->family(), "from_name(name()) is another family");

  const ChatTemplate::SpecialTexts special{.bos = fields.size() > 1 ? fields[1] : "",
                                           .eos = fields.size() > 2 ? fields[2] : ""};
  std::vector<ChatMessage> once;
  size_t content_bytes = 0;
  for (size_t i = 3; i < fields.size(); ++i) {
    once.push_back(message_of(fields[i]));
    content_bytes += once.back().role.size() + once.back().content.size();
  }
  size_t times = std::min(repeat, kMaxMessages / std::max<size_t>(1, once.size()));
  times = std::max<size_t>(1, std::min(times, kMaxContentBytes / std::max<size_t>(1, content_bytes)));
  std::vector<ChatMessage> messages;
  messages.reserve(once.size() * times);
  for (size_t k = 0; k < times; ++k) messages.insert(messages.end(), once.begin(), once.end());
  check_render(*t, messages, generation, special);
  return 0;
}
