#pragma once
// llama-server's flags beyond the ones serve implements, so that a llama-server command line either runs as it
// did or stops with the flag named:
//   - switches that ask for what infertune always does are taken: -cb (continuous batching), -kvu (the slots
//     share the cache's cells), --swa-full (every layer keeps the whole context), --no-context-shift,
//     --no-warmup, --no-webui, and --jinja / --no-jinja (the template is rendered by its family either way);
//   - features infertune does not have are refused before the model loads, naming the flag and what it asks for
//     (-nocb, -no-kvu, --context-shift, --webui, embeddings and reranking, -sp, POST /props, LoRA, draft models,
//     multimodal projectors, Hugging Face downloads, ...), instead of CLI11 reading "-sp" as "-s p".
#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "engine/cli/flag_aliases.h"
#include "kernels/result.h"

namespace infertune {

struct LlamaServerFlagText {
  std::map<std::string, bool> switches;                    // long name -> given
  std::map<std::string, std::vector<std::string>> values;  // long name -> every occurrence
};

// `text` must outlive the parse of `command`.
void add_llama_server_flags(CLI::App& command, LlamaServerFlagText& text);

// An error naming the first flag given that infertune does not support.
Status check_llama_server_flags(const LlamaServerFlagText& text);

// Their multi-letter short forms (-cb, -sp, -md, -hf, ...) -> the long ones.
std::vector<FlagAlias> llama_server_flag_aliases();

}  // namespace infertune
