#include "engine/context/context_flags.h"

#include <fmt/format.h>

#include <array>
#include <string>

#include "engine/cli/flag_ranges.h"
#include "engine/kv/kv_storage.h"

namespace infertune {
namespace {

constexpr const char* kGroup = "Batch, KV cache and attention";

constexpr long long kMaxBatch = 1 << 20;

constexpr std::array kAliases{FlagAlias{"-ub", "--ubatch-size"}, FlagAlias{"-ctk", "--cache-type-k"},
                              FlagAlias{"-ctv", "--cache-type-v"}, FlagAlias{"-fa", "--flash-attn"},
                              FlagAlias{"-np", "--parallel"}};

// A KV type flag: the text is checked by kv_type_from_name and the type stored in `type`.
void add_kv_type_option(CLI::App& command, const char* names, const char* what, GgmlType& type) {
  command
      .add_option_function<std::string>(
          names,
          [&type](const std::string& text) {
            auto parsed = kv_type_from_name(text);
            if (!parsed) throw CLI::ValidationError(parsed.error().message);
            type = *parsed;
          },
          fmt::format("{} cache type: f32, f16, bf16, q8_0, q4_0 (default {})", what, ggml_type_name(type)))
      ->group(kGroup);
}

}  // namespace

void add_context_flags(CLI::App& command, ContextParams& params) {
  command
      .add_option("-b,--batch-size", params.n_batch,
                  fmt::format("Logical batch: the most tokens evaluated in one step (default {})", params.n_batch))
      ->transform(int_flag_range({.low = 1, .high = kMaxBatch}))
      ->group(kGroup);
  command
      .add_option("--ubatch-size", params.n_ubatch,
                  fmt::format("-ub: physical batch, the pieces a batch is evaluated in (default {})", params.n_ubatch))
      ->transform(int_flag_range({.low = 1, .high = kMaxBatch}))
      ->group(kGroup);
  add_kv_type_option(command, "--cache-type-k", "-ctk: K", params.type_k);
  add_kv_type_option(command, "--cache-type-v", "-ctv: V", params.type_v);
  command
      .add_option_function<std::string>(
          "--flash-attn",
          [&params](const std::string& text) {
            auto mode = flash_attention_from_name(text);
            if (!mode) throw CLI::ValidationError("-fa: '" + text + "' is not on, off or auto");
            params.flash_attn = *mode;
          },
          fmt::format("-fa: flash-attention on, off or auto (default {})", flash_attention_name(params.flash_attn)))
      ->group(kGroup);
}

std::span<const FlagAlias> context_flag_aliases() { return kAliases; }

}  // namespace infertune
