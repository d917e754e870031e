#pragma once
// -fa on|off|auto: which attention kernel a context runs. Both compute the same attention (they agree
// within float rounding); flash-attention makes one pass over the cache with an online softmax and needs
// no buffer of scores per key, the standard kernel keeps every score and makes a second pass for the
// values. In bench/micro/attention_bench the two are within about 20% of each other either way, over
// 512..16384 cached tokens; auto picks flash-attention, as llama.cpp does on the CPU, for its bounded
// memory at long contexts.
#include <optional>
#include <string_view>

namespace infertune {

enum class FlashAttention { Auto, On, Off };

// "on", "off", "auto" (also llama.cpp's older "1", "0", "-1"); nullopt for anything else.
std::optional<FlashAttention> flash_attention_from_name(std::string_view name);
std::string_view flash_attention_name(FlashAttention mode);
// Whether `mode` runs the flash kernel.
bool resolve_flash_attention(FlashAttention mode);

}  // namespace infertune
