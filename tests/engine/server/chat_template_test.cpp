// ChatTemplate (engine/server/chat_template.h): each family recognised from the markers of its templates, and
// rendered as its documented format; conversations a family cannot render are errors naming the message.
// (tests/engine/server/chat_template_crosscheck.py renders real Jinja templates with jinja2 and compares.)
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "engine/server/chat_template.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

const std::vector<ChatMessage> kConversation = {
    {"system", "Be brief."}, {"user", "Hi there "}, {"assistant", "Hello."}, {"user", "2+2?"}};

std::string render(const char* family, const std::vector<ChatMessage>& messages = kConversation) {
  auto t = ChatTemplate::from_name(family);
  EXPECT_TRUE(t.ok()) << family;
  if (!t) return "";
  auto out = t->render(messages, true, {.bos = "<s>", .eos = "</s>"});
  EXPECT_TRUE(out.ok()) << out.error().message;
  return out ? *out : "";
}

TEST(ChatTemplate, FamiliesAreRecognisedByTheirMarkers) {
  EXPECT_EQ(ChatTemplate::from_jinja("{{'<|im_start|>' + message['role']}}")->family(), ChatFamily::chatml);
  EXPECT_EQ(ChatTemplate::from_jinja("<|start_header_id|>x<|end_header_id|><|eot_id|>")->family(), ChatFamily::llama3);
  EXPECT_EQ(ChatTemplate::from_jinja("<start_of_turn>user")->family(), ChatFamily::gemma);
  EXPECT_EQ(ChatTemplate::from_jinja("'<|user|>' + '\\n' + c + '<|end|>'")->family(), ChatFamily::phi3);
  EXPECT_EQ(ChatTemplate::from_jinja("[INST] <<SYS>>\\n")->family(), ChatFamily::llama2);
  EXPECT_EQ(ChatTemplate::from_jinja("'[INST] ' + m + ' [/INST]'")->family(), ChatFamily::mistral);
  // DeepSeek-R1-Distill-Qwen's template (its tokens are full-width bars), not chatml for all its Qwen vocabulary.
  EXPECT_EQ(ChatTemplate::from_jinja("{{'<｜User｜>' + message['content']}}{{'<｜Assistant｜><think>\\n'}}")->family(),
            ChatFamily::deepseek3);
  auto unknown = ChatTemplate::from_jinja("{% for m in messages %}### {{ m.content }}{% endfor %}");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("--chat-template"));
  EXPECT_FALSE(ChatTemplate::from_name("vicuna").ok());
}

TEST(ChatTemplate, ChatmlWritesEveryRole) {
  EXPECT_EQ(render("chatml"),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there <|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama3TrimsContent) {
  EXPECT_EQ(render("llama3"),
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\n2+2?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, MistralPutsTheSystemBeforeTheFirstUserTurn) {
  EXPECT_EQ(render("mistral"), "[INST] Be brief.\n\nHi there  [/INST]Hello.</s>[INST] 2+2? [/INST]");
}

TEST(ChatTemplate, Llama2WrapsTheSystemAndStartsLaterTurnsWithBos) {
  EXPECT_EQ(render("llama2"),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi there [/INST] Hello. </s><s>[INST] 2+2? [/INST]");
}

TEST(ChatTemplate, GemmaCallsTheAssistantModel) {
  EXPECT_EQ(render("gemma"),
            "<start_of_turn>user\nBe brief.\n\nHi there<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
            "<start_of_turn>user\n2+2?<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatTemplate, Phi3OpensTheReplyAfterEachUserTurn) {
  EXPECT_EQ(render("phi3"),
            "<|system|>\nBe brief.<|end|>\n<|user|>\nHi there <|end|>\n<|assistant|>\nHello.<|end|>\n"
            "<|user|>\n2+2?<|end|>\n<|assistant|>\n");
}

// The Phi family's three forms, recognised from their published templates (Phi-3.5-mini, Phi-4, Phi-4-mini).
TEST(ChatTemplate, PhiTemplatesAreTheirFamilies) {
  const char* phi35 =
      "{% for message in messages %}{% if message['role'] == 'user' %}{{'<|user|>\\n' + message['content'] + "
      "'<|end|>\\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\\n' + message['content'] + "
      "'<|end|>\\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";
  const char* phi4 =
      "{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + "
      "message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}{% if add_generation_prompt %}"
      "{{ '<|im_start|>assistant<|im_sep|>' }}{% endif %}";
  const char* phi4_mini =
      "{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% else %}{{ eos_token }}{% endif %}";
  EXPECT_EQ(ChatTemplate::from_jinja(phi35)->family(), ChatFamily::phi3);
  EXPECT_EQ(ChatTemplate::from_jinja(phi4)->family(), ChatFamily::phi4);
  EXPECT_EQ(ChatTemplate::from_jinja(phi4_mini)->family(), ChatFamily::phi4_mini);
  EXPECT_EQ(render("phi4"),
            "<|im_start|>system<|im_sep|>Be brief.<|im_end|><|im_start|>user<|im_sep|>Hi there <|im_end|>"
            "<|im_start|>assistant<|im_sep|>Hello.<|im_end|><|im_start|>user<|im_sep|>2+2?<|im_end|>"
            "<|im_start|>assistant<|im_sep|>");
  EXPECT_EQ(render("phi4-mini"),
            "<|system|>Be brief.<|end|><|user|>Hi there <|end|><|assistant|>Hello.<|end|><|user|>2+2?<|end|>"
            "<|assistant|>");
  for (const char* name : {"phi4", "phi4-mini"}) {
    auto tool = ChatTemplate::from_name(name)->render(std::vector<ChatMessage>{{"tool", "42"}}, true, {});
    ASSERT_FALSE(tool.ok());
    EXPECT_THAT(tool.error().message, HasSubstr(fmt::format("messages[0]: role 'tool' is not one the {} chat", name)));
  }
}

// What llama.cpp's llama_chat_apply_template writes for "deepseek3" (through llama-cpp-python), byte for byte.
TEST(ChatTemplate, Deepseek3AsLlamaCppWritesIt) {
  EXPECT_EQ(render("deepseek3"),
            "Be brief.\n\n<｜User｜>Hi there <｜Assistant｜>Hello.<｜end▁of▁sentence｜><｜User｜>2+2?<｜Assistant｜>");
  auto t = ChatTemplate::from_name("deepseek3");
  ASSERT_TRUE(t.ok());
  auto tool = t->render(std::vector<ChatMessage>{{"tool", "42"}}, true, {});
  ASSERT_FALSE(tool.ok());
  EXPECT_THAT(tool.error().message, HasSubstr("messages[0]: role 'tool' is not one the deepseek3 chat template"));
}

// Qwen3's template opens the reply with an empty thought when chat_template_kwargs.enable_thinking is false; a chatml
// template without that switch (Qwen2.5's) writes the same prompt either way.
TEST(ChatTemplate, EnableThinkingFalseOpensQwen3sReplyWithAnEmptyThought) {
  const std::vector<ChatMessage> hi = {{"user", "Hi"}};
  auto qwen3 = ChatTemplate::from_jinja(
      "{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}"
      "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}");
  ASSERT_TRUE(qwen3.ok());
  EXPECT_TRUE(qwen3->has_thinking_switch());
  EXPECT_EQ(*qwen3->render(hi, true, {}, {.enable_thinking = false}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(*qwen3->render(hi, true, {}, {.enable_thinking = true}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  auto qwen25 = ChatTemplate::from_jinja("{{'<|im_start|>' + message['role']}}");
  ASSERT_TRUE(qwen25.ok());
  EXPECT_FALSE(qwen25->has_thinking_switch());
  EXPECT_EQ(*qwen25->render(hi, true, {}, {.enable_thinking = false}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

// gpt-oss's harmony template (its markers <|start|> and <|channel|>): the system message with the date and reasoning
// effort, a system message as the developer's instructions, earlier replies on the final channel, then the open
// assistant header. The expected text is that of the model's Jinja template, rendered by hand.
TEST(ChatTemplate, GptOssRendersHarmonyMessages) {
  auto t = ChatTemplate::from_jinja("{{- \"<|start|>system<|message|>\" }} ... {{- \"<|channel|>final\" }}");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->family(), ChatFamily::harmony);
  EXPECT_EQ(t->name(), "gpt-oss");
  const std::vector<ChatMessage> chat = {
      {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "2+2?"}};
  const std::string system =
      "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
      "Knowledge cutoff: 2024-06\nCurrent date: 2026-12-06\n\nReasoning: high\n\n"
      "# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>";
  EXPECT_EQ(*t->render(chat, true, {}, {.reasoning_effort = "high", .date = "2026-12-06"}),
            system +
                "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>"
                "<|start|>user<|message|>Hi<|end|>"
                "<|start|>assistant<|channel|>final<|message|>Hello.<|end|>"
                "<|start|>user<|message|>2+2?<|end|><|start|>assistant");
  // Without a generation prompt a last reply ends with <|return|>, as the template writes a training transcript.
  const std::vector<ChatMessage> done = {{"user", "Hi"}, {"assistant", "Hello."}};
  EXPECT_THAT(*t->render(done, false, {}), ::testing::EndsWith("<|channel|>final<|message|>Hello.<|return|>"));
  EXPECT_THAT(*t->render(done, false, {}), ::testing::HasSubstr("Reasoning: medium"));  // the template's default
  auto tool = t->render(std::vector<ChatMessage>{{"user", "a"}, {"tool", "42"}}, true, {});
  ASSERT_FALSE(tool.ok());
  EXPECT_THAT(tool.error().message, HasSubstr("messages[1]: role 'tool' is not one the gpt-oss chat template"));
  // A file without a template: the harmony tokens in the vocabulary name the family.
  auto by_tokens = ChatTemplate::from_vocabulary(
      [](std::string_view token) { return token == "<|start|>" || token == "<|channel|>" || token == "<|end|>"; });
  ASSERT_TRUE(by_tokens.has_value());
  EXPECT_EQ(by_tokens->family(), ChatFamily::harmony);
}

TEST(ChatTemplate, RolesThatDoNotAlternateAreErrorsNamingTheMessage) {
  auto t = ChatTemplate::from_name("mistral");
  ASSERT_TRUE(t.ok());
  const std::vector<ChatMessage> twice = {{"user", "a"}, {"user", "b"}};
  auto out = t->render(twice, true, {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.error().message, HasSubstr("messages[1]"));
  EXPECT_FALSE(t->render({}, true, {}).ok());
  auto phi = ChatTemplate::from_name("phi3");
  const std::vector<ChatMessage> tool = {{"tool", "x"}};
  EXPECT_THAT(phi->render(tool, true, {}).error().message, HasSubstr("'tool'"));
}

}  // namespace
}  // namespace infertune
