#include "engine/server/llama_server_flags.h"

#include <fmt/format.h>

#include <string_view>

namespace infertune {
namespace {

constexpr const char* kGroup = "llama-server flags (taken where infertune already does so, refused otherwise)";

struct LlamaServerFlag {
  std::string_view name;                  // the long form
  std::vector<std::string_view> aliases;  // other spellings llama-server takes
  bool takes_value = false;
  bool supported = false;  // true: infertune always behaves so, the flag changes nothing
  std::string_view why;    // supported: what infertune does; otherwise: what the flag asks for
};

const std::vector<LlamaServerFlag>& llama_server_flags() {
  static const std::vector<LlamaServerFlag> flags{
      {"--cont-batching", {"-cb"}, false, true, "requests are always batched continuously"},
      {"--kv-unified", {"-kvu"}, false, true, "the slots always share the -c cells of one cache"},
      {"--swa-full", {}, false, true, "every layer, sliding-window ones too, keeps the whole context"},
      {"--no-context-shift", {}, false, true, "a request never shifts the context: it must fit in -c"},
      {"--no-warmup", {}, false, true, "the server starts without a warmup run"},
      {"--no-webui", {}, false, true, "the server has no web UI"},
      {"--jinja", {}, false, true, "the chat template is rendered by its family (see --chat-template)"},
      {"--no-jinja", {}, false, true, "the chat template is rendered by its family (see --chat-template)"},
      {"--no-cont-batching", {"-nocb"}, false, false, "turning continuous batching off"},
      {"--no-kv-unified", {"-no-kvu"}, false, false, "a cache of its own per slot"},
      {"--context-shift", {}, false, false, "shifting the context when a generation outgrows it"},
      {"--webui", {}, false, false, "a web UI"},
      {"--embedding", {"--embeddings"}, false, false, "embeddings (serve answers completions and chat)"},
      {"--pooling", {}, true, false, "embeddings (serve answers completions and chat)"},
      {"--rerank", {"--reranking"}, false, false, "reranking (serve answers completions and chat)"},
      {"--special", {"-sp"}, false, false, "special tokens in the replies' text"},
      {"--props", {}, false, false, "changing properties by POST /props (GET /props is always served)"},
      {"--lora", {}, true, false, "LoRA adapters"},
      {"--lora-scaled", {}, true, false, "LoRA adapters"},
      {"--model-draft", {"-md"}, true, false, "speculative decoding with a draft model"},
      {"--mmproj", {"-mm"}, true, false, "multimodal projectors"},
      {"--mmproj-url", {"-mmu"}, true, false, "multimodal projectors"},
      {"--hf-repo", {"-hf", "-hfr"}, true, false, "downloads from Hugging Face (give a downloaded file with -m)"},
      {"--hf-file", {"-hff"}, true, false, "downloads from Hugging Face (give a downloaded file with -m)"},
      {"--hf-token", {"-hft"}, true, false, "downloads from Hugging Face (give a downloaded file with -m)"},
      {"--cache-reuse", {}, true, false, "reusing cached chunks by shifting them (common prefixes are reused anyway)"},
      {"--cache-ram", {"-cram"}, true, false, "a prompt cache in host memory"},
      {"--slot-save-path", {}, true, false, "saving slots' caches to files"},
      {"--reasoning-format", {}, true, false, "separating reasoning from the reply (reasoning_content)"},
      {"--chat-template-kwargs", {}, true, false, "template arguments (templates are rendered by family)"},
      {"--fit-target", {"-fitt"}, true, false, "fitting to device memory (-ngl auto offloads what fits)"},
      {"--fit-ctx", {"-fitc"}, true, false, "fitting to device memory (-ngl auto offloads what fits)"},
      {"--log-verbosity", {"-lv", "--verbosity"}, true, false, "log levels (--log-disable silences the log)"},
      {"--log-verbose", {"-v", "--verbose"}, false, false, "log levels (--log-disable silences the log)"},
  };
  return flags;
}

// "-sp (--special)" or "--webui".
std::string spelled(const LlamaServerFlag& flag) {
  return flag.aliases.empty() || flag.aliases.front().starts_with("--")
             ? std::string(flag.name)
             : fmt::format("{} ({})", flag.aliases.front(), flag.name);
}

bool given(const LlamaServerFlag& flag, const LlamaServerFlagText& text) {
  const std::string name(flag.name);
  if (flag.takes_value) {
    const auto it = text.values.find(name);
    return it != text.values.end() && !it->second.empty();
  }
  const auto it = text.switches.find(name);
  return it != text.switches.end() && it->second;
}

}  // namespace

void add_llama_server_flags(CLI::App& app, LlamaServerFlagText& text) {
  for (const LlamaServerFlag& flag : llama_server_flags()) {
    std::string names(flag.name);
    // CLI11 takes single-dash names of one letter only: the other short forms are rewritten (aliases below) and
    // named at the start of the help, as the settings' are ("-cb: ...").
    std::string short_forms;
    for (std::string_view alias : flag.aliases) {
      if (alias.starts_with("--")) {
        names += "," + std::string(alias);
      } else {
        short_forms += (short_forms.empty() ? "" : ", ") + std::string(alias);
      }
    }
    const std::string help = fmt::format("{}{}: {}", short_forms.empty() ? "" : short_forms + ": ",
                                         flag.supported ? "Taken" : "Not supported", flag.why);
    CLI::Option* option = flag.takes_value
                              ? app.add_option(names, text.values[std::string(flag.name)], help)->expected(1)
                              : app.add_flag(names, text.switches[std::string(flag.name)], help);
    option->group(kGroup);
  }
}

Status check_llama_server_flags(const LlamaServerFlagText& text) {
  for (const LlamaServerFlag& flag : llama_server_flags()) {
    if (flag.supported || !given(flag, text)) continue;
    return fail("{}: infertune serve does not support {}", spelled(flag), flag.why);
  }
  return {};
}

std::vector<FlagAlias> llama_server_flag_aliases() {
  std::vector<FlagAlias> aliases;
  for (const LlamaServerFlag& flag : llama_server_flags()) {
    for (std::string_view alias : flag.aliases) {
      if (!alias.starts_with("--")) aliases.push_back({alias, flag.name});
    }
  }
  return aliases;
}

}  // namespace infertune
