#include "sweeps/spec/spec_flags.h"

#include <array>
#include <string_view>

namespace infertune {

namespace {

struct SpecFlag {
  std::string_view key;    // the spec key
  std::string_view names;  // CLI11 names (the multi-letter short ones arrive rewritten: main.cpp)
  std::string_view shown;  // the name errors use
  std::string_view help;
};

constexpr std::array kFlags{
    SpecFlag{"models", "-m,--model", "-m", "GGUF model file(s)"},
    SpecFlag{"base_model", "--base-model", "--base-model", "One model to produce each --quant-types variant from"},
    SpecFlag{"quant_types", "--quant-types", "--quant-types", "Weight types of the base model's variants (q4_0,q8_0)"},
    SpecFlag{"n_gpu_layers", "--n-gpu-layers", "-ngl", "-ngl: layers on the GPU (default 0)"},
    SpecFlag{"threads", "-t,--threads", "-t", "Threads (default 0: physical cores)"},
    SpecFlag{"threads_batch", "--threads-batch", "-tb", "-tb: threads for batches (default 0: as -t)"},
    SpecFlag{"numa", "--numa", "--numa", "none|distribute|isolate|numactl"},
    SpecFlag{"cpu_mask", "-C,--cpu-mask", "-C", "CPU masks (default 0x0: all)"},
    SpecFlag{"ctx_size", "-c,--ctx-size", "-c", "Context sizes (default 0: what the workload needs)"},
    SpecFlag{"batch_size", "-b,--batch-size", "-b", "Logical batch sizes (default 2048)"},
    SpecFlag{"ubatch_size", "--ubatch-size", "-ub", "-ub: physical batch sizes (default 512)"},
    SpecFlag{"parallel", "--parallel", "-np", "-np: parallel sequences of the context (default 1)"},
    SpecFlag{"cache_type_k", "--cache-type-k", "-ctk", "-ctk: KV cache K types (default f16)"},
    SpecFlag{"cache_type_v", "--cache-type-v", "-ctv", "-ctv: KV cache V types (default f16)"},
    SpecFlag{"flash_attn", "--flash-attn", "-fa", "-fa on|off|auto (default auto)"},
    SpecFlag{"mmap", "--mmap", "-mmp", "-mmp 0|1: memory-map the model (default 1)"},
    SpecFlag{"n_prompt", "-p,--n-prompt", "-p", "pp workloads: prompt tokens (default 512 with tg 128)"},
    SpecFlag{"n_gen", "-n,--n-gen", "-n", "tg workloads: generated tokens"},
    SpecFlag{"pg", "--pg", "-pg", "-pg PP,TG: a prompt then generation (repeatable)"},
    SpecFlag{"depth", "-d,--n-depth", "-d", "Tokens cached before each pp/tg/pg workload (default 0)"},
    SpecFlag{"batched", "--batched", "--batched", "NP_LIST:PP,TG batched workloads, e.g. 1,2,4:128,64"},
    SpecFlag{"max_mem", "--max-mem", "--max-mem", "Skip configurations predicted to need more (8G, 512M)"},
    SpecFlag{"min_ctx", "--min-ctx", "--min-ctx", "Skip configurations with a smaller context"},
    SpecFlag{"time_budget", "--time-budget", "--time-budget", "For the whole sweep (90s, 30m, 2h)"},
    SpecFlag{"order", "--order", "--order", "grouped (default), interleaved, random or random:SEED"},
};

}  // namespace

void add_sweep_spec_flags(CLI::App& app, SpecFlagText& text) {
  for (const SpecFlag& f : kFlags) {
    app.add_option(std::string(f.names), text.values[std::string(f.key)], std::string(f.help))
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->group("Sweep dimensions and constraints (comma lists and ranges, as in bench)");
  }
}

SpecText merge_spec_flags(SpecText base, const SpecFlagText& flags) {
  // Workloads given as flags replace the spec's `workloads:` list too.
  for (std::string_view key : {"n_prompt", "n_gen", "pg", "depth", "batched"}) {
    auto it = flags.values.find(std::string(key));
    if (it != flags.values.end() && !it->second.empty()) base.workloads.clear();
  }
  for (const SpecFlag& f : kFlags) {
    auto it = flags.values.find(std::string(f.key));
    if (it == flags.values.end() || it->second.empty()) continue;
    base.entries[std::string(f.key)] = SpecEntry{.values = it->second, .where = std::string(f.shown)};
  }
  return base;
}

}  // namespace infertune
