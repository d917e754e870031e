#include "engine/server/llama_server_flags.h"

namespace infertune {
namespace {

constexpr std::string_view kByFamily = "the chat template is rendered by its family (see --chat-template)";
constexpr std::string_view kDownloads = "downloads from Hugging Face";
constexpr std::string_view kGiveTheFile = "give a downloaded file with -m";
constexpr std::string_view kFitting = "fitting to device memory";
constexpr std::string_view kNglAuto = "-ngl auto offloads what fits";
constexpr std::string_view kLogLevels = "log levels";
constexpr std::string_view kLogDisable = "--log-disable silences the log";

}  // namespace

const ForeignFlagTable& llama_server_flags() {
  static const std::vector<ForeignFlag> flags{
      taken_switch("--cont-batching", {"-cb"}, "continuous batching", "requests are always batched continuously"),
      taken_switch("--kv-unified", {"-kvu"}, "one cache for every slot",
                   "the slots always share the -c cells of one cache"),
      taken_switch("--swa-full", {}, "a full-size cache for sliding-window layers",
                   "every layer, sliding-window ones too, keeps the whole context"),
      taken_switch("--no-context-shift", {}, "no context shift",
                   "a request never shifts the context: it must fit in -c"),
      taken_switch("--no-warmup", {}, "no warmup run", "the server starts without a warmup run"),
      taken_switch("--no-webui", {}, "no web UI", "the server has no web UI"),
      taken_switch("--jinja", {}, "Jinja chat templates", kByFamily),
      taken_switch("--no-jinja", {}, "no Jinja chat templates", kByFamily),
      refused_switch("--no-cont-batching", {"-nocb"}, "turning continuous batching off"),
      refused_switch("--no-kv-unified", {"-no-kvu"}, "a cache of its own per slot"),
      refused_switch("--context-shift", {}, "shifting the context when a generation outgrows it"),
      refused_switch("--webui", {}, "a web UI"),
      refused_switch("--rerank", {"--reranking"}, "reranking", "infertune has no reranker head (rank pooling)"),
      refused_switch("--special", {"-sp"}, "special tokens in the replies' text"),
      refused_switch("--props", {}, "changing properties by POST /props", "GET /props is always served"),
      refused_value_flag("--lora", {}, "LoRA adapters"),
      refused_value_flag("--lora-scaled", {}, "LoRA adapters"),
      refused_value_flag("--model-draft", {"-md"}, "speculative decoding with a draft model"),
      refused_value_flag("--mmproj", {"-mm"}, "multimodal projectors"),
      refused_value_flag("--mmproj-url", {"-mmu"}, "multimodal projectors"),
      refused_value_flag("--hf-repo", {"-hf", "-hfr"}, kDownloads, kGiveTheFile),
      refused_value_flag("--hf-file", {"-hff"}, kDownloads, kGiveTheFile),
      refused_value_flag("--hf-token", {"-hft"}, kDownloads, kGiveTheFile),
      refused_value_flag("--cache-reuse", {}, "reusing cached chunks by shifting them",
                         "common prefixes are reused anyway"),
      refused_value_flag("--cache-ram", {"-cram"}, "a prompt cache in host memory"),
      refused_value_flag("--slot-save-path", {}, "saving slots' caches to files"),
      refused_value_flag("--fit-target", {"-fitt"}, kFitting, kNglAuto),
      refused_value_flag("--fit-ctx", {"-fitc"}, kFitting, kNglAuto),
      refused_value_flag("--log-verbosity", {"-lv", "--verbosity"}, kLogLevels, kLogDisable),
      refused_switch("--log-verbose", {"-v", "--verbose"}, kLogLevels, kLogDisable),
  };
  static const ForeignFlagTable table{
      .tool = "llama-server",
      .command = "serve",
      .group = "llama-server flags (taken where infertune already does so, refused otherwise)",
      .flags = flags,
  };
  return table;
}

}  // namespace infertune
