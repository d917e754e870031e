#pragma once
// llama-bench's flags for features infertune does not have: MoE expert offload (-ncmoe), devices by name
// (-dev), lazy loading (-lzm), embeddings (-embd), tensor overrides (-ot), op offload (-nopo), host buffers
// (--no-host), fitting to device memory (-fitt, -fitc) and Hugging Face downloads (-hf, -hff, -hft). bench
// takes each at llama-bench's default, so a script that spells the defaults out runs unchanged (and the row's
// field says that default, as llama-bench's would), and refuses any other value naming the flag, the feature
// and what to use instead. --offline is taken: bench never downloads anything.
#include "engine/cli/foreign_flags.h"

namespace infertune {

const ForeignFlagTable& llama_bench_only_flags();

}  // namespace infertune
