#pragma once
// llama-server's flags beyond the ones serve implements, so that a llama-server command line either runs as it
// did or stops with the flag named:
//   - switches that ask for what infertune always does are taken: -cb (continuous batching), -kvu (the slots
//     share the cache's cells), --swa-full (every layer keeps the whole context), --no-context-shift,
//     --no-warmup, --no-webui, and --jinja / --no-jinja (the template is rendered by its family either way);
//   - features infertune does not have are refused before the model loads, naming the flag and what it asks for
//     (-nocb, -no-kvu, --context-shift, --webui, embeddings and reranking, -sp, POST /props, LoRA, draft models,
//     multimodal projectors, Hugging Face downloads, ...), instead of CLI11 reading "-sp" as "-s p".
#include "engine/cli/foreign_flags.h"

namespace infertune {

const ForeignFlagTable& llama_server_flags();

}  // namespace infertune
