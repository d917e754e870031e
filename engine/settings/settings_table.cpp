#include "engine/settings/settings_table.h"

#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/layer_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "engine/batch/seq_set.h"
#include "engine/cli/flag_ranges.h"
#include "engine/context/flash_attention.h"
#include "engine/kv/kv_storage.h"
#include "engine/threading/placement_options.h"
#include "kernels/ggml_type.h"

namespace infertune {
namespace {

constexpr long long kMaxTokens = 1 << 24;  // a context or batch beyond this is a typo
constexpr long long kMaxGpuLayers = 100000;

// ----- values -----

const IntRange& threads_range() {
  static const IntRange range{.low = 1, .high = kMaxThreads, .special = {{-1, "auto"}, {0, "auto"}}};
  return range;
}

Result<std::string> canonical_int(std::string_view text, const IntRange& range) {
  auto value = parse_int_in_range(text, range);
  if (!value) return value.error();
  return std::to_string(*value);
}

// -1 and 0 both mean "pick for me" (llama.cpp reads any value <= 0 so, llama-bench and the sweep wrote 0);
// the canonical spelling is 0.
Result<std::string> canonical_threads(std::string_view text) {
  auto value = parse_int_in_range(text, threads_range());
  if (!value) return value.error();
  return std::to_string(std::max<long long>(*value, 0));
}

Result<std::string> canonical_bool(std::string_view text) {
  if (text == "1" || text == "true") return std::string("1");
  if (text == "0" || text == "false") return std::string("0");
  return fail("'{}' is not 0 or 1", text);
}

Result<std::string> canonical_kv_type(std::string_view text) {
  auto type = kv_type_from_name(text);
  if (!type) return fail("'{}' is not a KV cache type; allowed: f32, f16, bf16, q8_0, q4_0", text);
  return std::string(ggml_type_name(*type));
}

Result<std::string> canonical_flash_attn(std::string_view text) {
  auto mode = flash_attention_from_name(text);
  if (!mode) return fail("'{}' is not on, off or auto", text);
  return std::string(flash_attention_name(*mode));
}

Result<std::string> canonical_split_mode(std::string_view text) {
  if (text == "row") return fail("'row' (each matrix split over the GPUs) is not supported: use layer or none");
  auto mode = split_mode_from_name(text);
  if (!mode) return fail("'{}' is not none or layer", text);
  return std::string(split_mode_name(*mode));
}

// "3,1" and "3/1" are "3/1"; all zero (llama.cpp's default) is "0": by each GPU's free memory.
Result<std::string> canonical_tensor_split(std::string_view text) {
  auto shares = parse_tensor_split(text);
  if (!shares) return shares.error();
  if (std::all_of(shares->begin(), shares->end(), [](double p) { return p == 0; })) return std::string("0");
  return tensor_split_text(*shares);
}

Result<std::string> canonical_numa(std::string_view text) {
  auto mode = parse_numa_mode(text);
  if (!mode) return fail("'{}' is not none, distribute, isolate or numactl", text);
  return std::string(numa_mode_name(*mode));
}

// "0x0" (and llama-bench's "0", and empty) is "no mask"; anything else must parse and select a CPU.
Result<std::string> canonical_cpu_mask(std::string_view text) {
  if (text.empty() || text == "0" || text == "0x0") return std::string("0x0");
  auto mask = parse_cpu_mask(text);
  if (!mask) return mask.error();
  if (mask->empty()) return fail("'{}' selects no CPUs", text);
  return std::string(text);
}

Status cpu_mask_on_machine(std::string_view canonical, const CpuSet& machine) {
  if (canonical == "0x0") return {};
  auto mask = parse_cpu_mask(canonical);
  if (!mask) return mask.error();
  if (const CpuSet missing = mask->minus(machine); !missing.empty()) {
    return fail("'{}': CPUs {} are not on this machine or not available to this process (it may use CPUs {})",
                canonical, missing.to_string(), machine.to_string());
  }
  return {};
}

// The canonical text of a value settings_table wrote itself: always valid.
int as_int(std::string_view canonical) { return std::stoi(std::string(canonical)); }

// ----- the table -----

constexpr std::string_view kPlacement = "Threads and CPU placement";
constexpr std::string_view kContext = "Context, batch, KV cache and attention";
constexpr std::string_view kOffload = "Model loading and GPU offload";

constexpr Commands kEveryCommand =
    Command::run | Command::bench | Command::batched_bench | Command::sweep | Command::serve;
constexpr Commands kRunStyle = Command::run | Command::batched_bench | Command::serve;
constexpr Commands kLists = Command::bench | Command::sweep;

std::vector<Setting> build_table() {
  std::vector<Setting> t;
  t.push_back({
      .key = "threads",
      .group = kPlacement,
      .config_key = "threads",
      .short_flag = "-t",
      .long_flag = "--threads",
      .llama_flag = "-t",
      .kind = ValueKind::Integer,
      .default_value = "0",
      .unset_value = "0",
      .help = "Threads for generation (one token per step); 0 or -1: the number of physical cores",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .stored_when_default = true,
      .canonical = canonical_threads,
      .allowed = [] { return threads_range().describe(); },
      .apply = [](std::string_view v,
                  EngineSettings& s) { s.placement.threads = as_int(v) > 0 ? as_int(v) : kAutoThreads; },
      .read = [](const EngineSettings& s) { return std::to_string(std::max(s.placement.threads, 0)); },
  });
  t.push_back({
      .key = "threads_batch",
      .group = kPlacement,
      .config_key = "threads_batch",
      .short_flag = "-tb",
      .long_flag = "--threads-batch",
      .llama_flag = "-tb",
      .kind = ValueKind::Integer,
      .default_value = "0",
      .unset_value = "0",
      .help = "Threads for prompts and batches; 0 or -1: as --threads",
      .commands = kRunStyle | Command::sweep,
      .list_commands = Command::sweep,
      .stored_when_default = true,
      .canonical = canonical_threads,
      .allowed = [] { return threads_range().describe(); },
      .apply = [](std::string_view v,
                  EngineSettings& s) { s.placement.threads_batch = as_int(v) > 0 ? as_int(v) : kAutoThreads; },
      .read = [](const EngineSettings& s) { return std::to_string(std::max(s.placement.threads_batch, 0)); },
  });
  t.push_back({
      .key = "cpu_mask",
      .group = kPlacement,
      .config_key = "cpu_mask",
      .short_flag = "-C",
      .long_flag = "--cpu-mask",
      .llama_flag = "-C",
      .kind = ValueKind::Word,
      .default_value = "0x0",
      .unset_value = "0x0",
      .help = "CPUs to run on: a hex mask (0xF0, bit i = CPU i) or a range list (0-3,8; in lists 0-3 only)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .stored_when_default = true,
      .canonical = canonical_cpu_mask,
      .allowed = [] { return std::string("0x0 (all), a hex mask or a CPU range list"); },
      .apply = [](std::string_view v,
                  EngineSettings& s) { s.placement.cpu_mask = v == "0x0" ? std::string() : std::string(v); },
      .read = [](const EngineSettings& s) { return s.placement.cpu_mask.empty() ? "0x0" : s.placement.cpu_mask; },
      .check_on_machine = cpu_mask_on_machine,
  });
  t.push_back({
      .key = "cpu_strict",
      .group = kPlacement,
      .config_key = "cpu_strict",
      .long_flag = "--cpu-strict",
      .llama_flag = "--cpu-strict",
      .kind = ValueKind::Boolean,
      .default_value = "0",
      .unset_value = "0",
      .help = "1: pin each thread to its own CPU; 0: threads float over the allowed CPUs",
      .commands = kRunStyle | Command::bench,
      .list_commands = Command::bench,
      .canonical = canonical_bool,
      .allowed = [] { return std::string("0, 1"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.placement.cpu_strict = v == "1"; },
      .read = [](const EngineSettings& s) { return std::string(s.placement.cpu_strict ? "1" : "0"); },
  });
  t.push_back({
      .key = "numa",
      .group = kPlacement,
      .config_key = "numa",
      .long_flag = "--numa",
      .llama_flag = "--numa",
      .kind = ValueKind::Word,
      .default_value = "none",
      .unset_value = "none",
      .help = "NUMA policy: distribute (spread threads over all nodes), isolate (only the node the process "
              "started on), numactl (only the CPUs the process started with)",
      .commands = kEveryCommand,
      .list_commands = Command::sweep,
      .stored_when_default = true,
      .canonical = canonical_numa,
      .allowed = [] { return std::string("none, distribute, isolate, numactl"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.placement.numa = *parse_numa_mode(v); },
      .read = [](const EngineSettings& s) { return std::string(numa_mode_name(s.placement.numa)); },
  });
  t.push_back({
      .key = "prio",
      .group = kPlacement,
      .config_key = "prio",
      .long_flag = "--prio",
      .llama_flag = "--prio",
      .kind = ValueKind::Integer,
      .default_value = "0",
      .unset_value = "0",
      .help = "Thread priority",
      .commands = kRunStyle | Command::bench,
      .canonical = [](std::string_view v) { return canonical_int(v, {.low = 0, .high = 3}); },
      .allowed = [] { return std::string("0 normal, 1 medium, 2 high, 3 realtime"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.placement.priority = as_int(v); },
      .read = [](const EngineSettings& s) { return std::to_string(s.placement.priority); },
  });
  t.push_back({
      .key = "poll",
      .group = kPlacement,
      .config_key = "poll",
      .long_flag = "--poll",
      .llama_flag = "--poll",
      .kind = ValueKind::Integer,
      .default_value = "50",
      .unset_value = "50",
      .help = "The longest a waiting thread spins before it sleeps, 20 us per level (less when its waits are "
              "usually shorter): 0 sleeps at once, 100 never sleeps",
      .commands = kRunStyle | Command::bench | Command::sweep,
      .list_commands = kLists,
      .canonical = [](std::string_view v) { return canonical_int(v, {.low = 0, .high = 100}); },
      .allowed = [] { return std::string("0..100"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.placement.poll = as_int(v); },
      .read = [](const EngineSettings& s) { return std::to_string(s.placement.poll); },
  });
  t.push_back({
      .key = "n_gpu_layers",
      .group = kOffload,
      .config_key = "n_gpu_layers",
      .short_flag = "-ngl",
      .long_flag = "--n-gpu-layers",
      .llama_flag = "-ngl",
      .kind = ValueKind::Integer,
      .default_value = "0",
      .unset_value = "0",
      .llama_unset_value = "auto",  // llama.cpp's tools offload what fits unless told -ngl 0
      .help = "Layers on the GPU: the last N; more than the model has puts the output layer there too (-1: all; "
              "auto: as many as fit the GPU's free memory)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .reloads_model = true,
      .stored_when_default = true,
      .canonical = [](std::string_view v) -> Result<std::string> {
        if (v == "auto") return std::string("auto");
        return canonical_int(v, {.low = -1, .high = kMaxGpuLayers});
      },
      .allowed = [] { return fmt::format("auto, -1..{}", kMaxGpuLayers); },
      .apply = [](std::string_view v, EngineSettings& s) { s.n_gpu_layers = v == "auto" ? kGpuLayersAuto : as_int(v); },
      .read =
          [](const EngineSettings& s) {
            return s.n_gpu_layers == kGpuLayersAuto ? std::string("auto") : std::to_string(s.n_gpu_layers);
          },
  });
  t.push_back({
      .key = "main_gpu",
      .group = kOffload,
      .config_key = "main_gpu",
      .short_flag = "-mg",
      .long_flag = "--main-gpu",
      .llama_flag = "-mg",
      .kind = ValueKind::Integer,
      .default_value = "0",
      .unset_value = "0",
      .help = "The CUDA device the offloaded layers run on",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .reloads_model = true,
      .canonical = [](std::string_view v) { return canonical_int(v, {.low = 0, .high = 255}); },
      .allowed = [] { return std::string("0..255"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.main_gpu = as_int(v); },
      .read = [](const EngineSettings& s) { return std::to_string(s.main_gpu); },
  });
  t.push_back({
      .key = "split_mode",
      .group = kOffload,
      .config_key = "split_mode",
      .short_flag = "-sm",
      .long_flag = "--split-mode",
      .llama_flag = "-sm",
      .kind = ValueKind::Word,
      .default_value = "layer",
      .unset_value = "layer",
      .help = "How the offloaded layers use several GPUs: layer (each GPU a run of them, per -ts) or none (all on -mg)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .reloads_model = true,
      .canonical = canonical_split_mode,
      .allowed = [] { return std::string("none, layer"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.split_mode = *split_mode_from_name(v); },
      .read = [](const EngineSettings& s) { return std::string(split_mode_name(s.split_mode)); },
  });
  t.push_back({
      .key = "tensor_split",
      .group = kOffload,
      .config_key = "tensor_split",
      .short_flag = "-ts",
      .long_flag = "--tensor-split",
      .llama_flag = "-ts",
      .kind = ValueKind::Word,
      .default_value = "0",
      .unset_value = "0",
      .help = "Each GPU's share of the offloaded layers with -sm layer, as 3/1 (0: by each GPU's free memory)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .reloads_model = true,
      .canonical = canonical_tensor_split,
      .allowed = [] { return std::string("shares per GPU separated by / (or , where one value is given), e.g. 3/1"); },
      .apply = [](std::string_view v,
                  EngineSettings& s) { s.tensor_split = v == "0" ? std::vector<double>{} : *parse_tensor_split(v); },
      .read =
          [](const EngineSettings& s) {
            return s.tensor_split.empty() ? std::string("0") : tensor_split_text(s.tensor_split);
          },
  });
  t.push_back({
      .key = "kv_offload",
      .group = kOffload,
      .config_key = "kv_offload",
      .long_flag = "--kv-offload",
      .llama_flag = "-nkvo",
      .switch_flag = "--no-kv-offload",
      .switch_value = "0",
      .switch_help = "Keep the offloaded layers' K/V cache and attention on the CPU (llama.cpp's -nkvo)",
      .kind = ValueKind::Boolean,
      .default_value = "1",
      .unset_value = "1",
      .help = "Keep the K/V cache of the GPU's layers on the GPU (0: in CPU memory, attention on the CPU)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .switch_commands = kRunStyle,
      .canonical = canonical_bool,
      .allowed = [] { return std::string("0, 1"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.kv_offload = v == "1"; },
      .read = [](const EngineSettings& s) { return std::string(s.kv_offload ? "1" : "0"); },
  });
  t.push_back({
      .key = "ctx_size",
      .group = kContext,
      .config_key = "n_ctx",
      .short_flag = "-c",
      .long_flag = "--ctx-size",
      .llama_flag = "-c",
      .kind = ValueKind::Integer,
      .default_value = "0",
      .unset_value = "0",
      .help = "Context size: KV cells shared by all sequences; 0: what the command needs (run, serve: 4096, as "
              "llama.cpp's tools without -c, with a warning past the trained context; batched-bench: the largest "
              "N_KV; sweep: what the workload needs)",
      .commands = kRunStyle | Command::sweep,
      .list_commands = Command::sweep,
      .stored_when_default = true,
      .canonical = [](std::string_view v) { return canonical_int(v, {.low = 0, .high = kMaxTokens}); },
      .allowed = [] { return fmt::format("0..{}", kMaxTokens); },
      .apply = [](std::string_view v, EngineSettings& s) { s.context.n_ctx = static_cast<uint32_t>(as_int(v)); },
      .read = [](const EngineSettings& s) { return std::to_string(s.context.n_ctx); },
  });
  t.push_back({
      .key = "batch_size",
      .group = kContext,
      .config_key = "n_batch",
      .short_flag = "-b",
      .long_flag = "--batch-size",
      .llama_flag = "-b",
      .kind = ValueKind::Integer,
      .default_value = "2048",
      .help = "Logical batch: the most tokens evaluated in one step",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .stored_when_default = true,
      .canonical = [](std::string_view v) { return canonical_int(v, {.low = 1, .high = kMaxTokens}); },
      .allowed = [] { return fmt::format("1..{}", kMaxTokens); },
      .apply = [](std::string_view v, EngineSettings& s) { s.context.n_batch = static_cast<uint32_t>(as_int(v)); },
      .read = [](const EngineSettings& s) { return std::to_string(s.context.n_batch); },
  });
  t.push_back({
      .key = "ubatch_size",
      .group = kContext,
      .config_key = "n_ubatch",
      .short_flag = "-ub",
      .long_flag = "--ubatch-size",
      .llama_flag = "-ub",
      .kind = ValueKind::Integer,
      .default_value = "512",
      .help = "Physical batch: the pieces a batch is evaluated in",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .stored_when_default = true,
      .canonical = [](std::string_view v) { return canonical_int(v, {.low = 1, .high = kMaxTokens}); },
      .allowed = [] { return fmt::format("1..{}", kMaxTokens); },
      .apply = [](std::string_view v, EngineSettings& s) { s.context.n_ubatch = static_cast<uint32_t>(as_int(v)); },
      .read = [](const EngineSettings& s) { return std::to_string(s.context.n_ubatch); },
  });
  t.push_back({
      .key = "parallel",
      .group = kContext,
      .config_key = "n_parallel",
      .short_flag = "-np",
      .long_flag = "--parallel",
      .llama_flag = "-np",
      .kind = ValueKind::Integer,
      .default_value = "1",
      .unset_value = "1",
      .help = "Sequences the context serves at once (server slots)",
      .commands = Command::sweep | Command::serve,
      .list_commands = Command::sweep,
      .stored_when_default = true,
      .canonical = [](std::string_view v) { return canonical_int(v, {.low = 1, .high = kMaxSequences}); },
      .allowed = [] { return fmt::format("1..{}", kMaxSequences); },
      .apply = [](std::string_view v, EngineSettings& s) { s.context.n_seq_max = static_cast<uint32_t>(as_int(v)); },
      .read = [](const EngineSettings& s) { return std::to_string(std::max<uint32_t>(s.context.n_seq_max, 1)); },
  });
  t.push_back({
      .key = "cache_type_k",
      .group = kContext,
      .config_key = "type_k",
      .short_flag = "-ctk",
      .long_flag = "--cache-type-k",
      .llama_flag = "-ctk",
      .kind = ValueKind::Word,
      .default_value = "f16",
      .help = "KV cache type of K",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .stored_when_default = true,
      .canonical = canonical_kv_type,
      .allowed = [] { return std::string("f32, f16, bf16, q8_0, q4_0"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.context.type_k = *kv_type_from_name(v); },
      .read = [](const EngineSettings& s) { return std::string(ggml_type_name(s.context.type_k)); },
  });
  t.push_back({
      .key = "cache_type_v",
      .group = kContext,
      .config_key = "type_v",
      .short_flag = "-ctv",
      .long_flag = "--cache-type-v",
      .llama_flag = "-ctv",
      .kind = ValueKind::Word,
      .default_value = "f16",
      .help = "KV cache type of V",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .stored_when_default = true,
      .canonical = canonical_kv_type,
      .allowed = [] { return std::string("f32, f16, bf16, q8_0, q4_0"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.context.type_v = *kv_type_from_name(v); },
      .read = [](const EngineSettings& s) { return std::string(ggml_type_name(s.context.type_v)); },
  });
  t.push_back({
      .key = "flash_attn",
      .group = kContext,
      .config_key = "flash_attn",
      .short_flag = "-fa",
      .long_flag = "--flash-attn",
      .llama_flag = "-fa",
      .kind = ValueKind::Word,
      .default_value = "auto",
      .help = "Flash-attention: one pass over the cache with an online softmax (auto: on, as llama.cpp on the CPU)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .stored_when_default = true,
      .canonical = canonical_flash_attn,
      .allowed = [] { return std::string("on, off, auto; also 1, 0, -1, true, false"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.context.flash_attn = *flash_attention_from_name(v); },
      .read = [](const EngineSettings& s) { return std::string(flash_attention_name(s.context.flash_attn)); },
  });
  t.push_back({
      .key = "mmap",
      .group = kOffload,
      .config_key = "mmap",
      .short_flag = "-mmp",
      .long_flag = "--mmap",
      .llama_flag = "-mmp",
      .switch_flag = "--no-mmap",
      .switch_value = "0",
      .switch_help = "Read the model into memory instead of mapping it",
      .kind = ValueKind::Boolean,
      .default_value = "1",
      .unset_value = "1",
      .help = "Memory-map the model (0: read it into memory)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .switch_commands = kRunStyle,
      .reloads_model = true,
      .stored_when_default = true,
      .canonical = canonical_bool,
      .allowed = [] { return std::string("0, 1"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.use_mmap = v == "1"; },
      .read = [](const EngineSettings& s) { return std::string(s.use_mmap ? "1" : "0"); },
  });
  t.push_back({
      .key = "repack",
      .group = kOffload,
      .config_key = "repack",
      .long_flag = "--repack",
      .llama_flag = "--repack",
      .switch_flag = "--no-repack",
      .switch_value = "0",
      .switch_help = "Keep every weight in the file's layout (llama.cpp's -nr / --no-repack)",
      .kind = ValueKind::Boolean,
      .default_value = "1",
      .unset_value = "1",
      .help = "Interleave the rows of Q2_K-Q6_K, Q4_0, Q5_0, Q8_0, IQ4_XS and MXFP4 weights 8 at a time at load: "
              "faster generation (0: the file's layout)",
      .commands = kEveryCommand,
      .list_commands = kLists,
      .switch_commands = kRunStyle,
      .reloads_model = true,
      .canonical = canonical_bool,
      .allowed = [] { return std::string("0, 1"); },
      .apply = [](std::string_view v, EngineSettings& s) { s.repack = v == "1"; },
      .read = [](const EngineSettings& s) { return std::string(s.repack ? "1" : "0"); },
  });
  return t;
}

}  // namespace

std::span<const Setting> all_settings() {
  static const std::vector<Setting> table = build_table();
  return table;
}

std::vector<const Setting*> settings_of(Command command) {
  std::vector<const Setting*> out;
  for (const Setting& s : all_settings()) {
    if (s.taken_by(command)) out.push_back(&s);
  }
  return out;
}

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : all_settings()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const Setting* find_setting_by_config_key(std::string_view config_key) {
  for (const Setting& s : all_settings()) {
    if (s.config_key == config_key) return &s;
  }
  return nullptr;
}

const Setting* find_setting_by_flag(std::string_view flag) {
  for (const Setting& s : all_settings()) {
    if (flag == s.short_flag || flag == s.long_flag || (!s.switch_flag.empty() && flag == s.switch_flag)) return &s;
  }
  return nullptr;
}

}  // namespace infertune
