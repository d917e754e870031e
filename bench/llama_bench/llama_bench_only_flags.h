#pragma once
// llama-bench's flags for features infertune does not have: MoE expert offload (-ncmoe), devices by name
// (-dev), lazy loading (-lzm), embeddings (-embd), tensor overrides (-ot), op offload (-nopo), host buffers
// (--no-host), fitting to device memory (-fitt, -fitc) and Hugging Face downloads (-hf, -hff, -hft). bench
// takes each at llama-bench's default, so a script that spells the defaults out runs unchanged (and the row's
// field says that default, as llama-bench's would), and refuses any other value naming the flag, the feature
// and what to use instead -- rather than CLI11 misreading "-nopo 1" as "-n opo". --offline is accepted: bench
// never downloads anything.
#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "engine/cli/flag_aliases.h"
#include "kernels/result.h"

namespace infertune {

struct LlamaBenchOnlyFlagText {
  std::map<std::string, std::vector<std::string>> values;  // long flag name -> every occurrence, as given
  bool offline = false;
};

// `text` must outlive the parse of `command`.
void add_llama_bench_only_flags(CLI::App& command, LlamaBenchOnlyFlagText& text);

// Every value given must be llama-bench's default for its flag (comma lists are split).
Status check_llama_bench_only_flags(const LlamaBenchOnlyFlagText& text);

// -ncmoe -> --n-cpu-moe, and the others' multi-letter short forms.
std::vector<FlagAlias> llama_bench_only_flag_aliases();

}  // namespace infertune
