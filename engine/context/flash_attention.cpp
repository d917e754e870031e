#include "engine/context/flash_attention.h"

namespace infertune {

std::optional<FlashAttention> flash_attention_from_name(std::string_view name) {
  if (name == "on" || name == "1" || name == "true") return FlashAttention::On;
  if (name == "off" || name == "0" || name == "false") return FlashAttention::Off;
  if (name == "auto" || name == "-1") return FlashAttention::Auto;
  return std::nullopt;
}

std::string_view flash_attention_name(FlashAttention mode) {
  switch (mode) {
    case FlashAttention::On:
      return "on";
    case FlashAttention::Off:
      return "off";
    case FlashAttention::Auto:
      break;
  }
  return "auto";
}

bool resolve_flash_attention(FlashAttention mode) { return mode != FlashAttention::Off; }

}  // namespace infertune
