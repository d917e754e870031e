#include "engine/gguf/gguf_known_keys.h"

#include <array>

#include "engine/gguf/gguf_limits.h"

namespace infertune {
namespace {

enum class Rule : uint8_t {
  kString,
  kBool,
  kU32,       // exactly u32
  kF32,       // exactly f32
  kUnsigned,  // any unsigned integer type: u8, u16, u32, u64
  // An unsigned scalar, or one value per layer as an i32 or u32 array (llama.cpp reads these keys with
  // get_key_or_arr; gguf-py writes per-layer lists, e.g. OpenELM's head counts, as i32 arrays).
  kUnsignedOrLayerArray,
  kStringArray,
  kF32Array,
  kI32Array,
};

struct KnownKey {
  // '*' stands for one non-empty dot-free segment: "*.context_length" matches "llama.context_length"
  // but not "phi3.rope.scaling.original_context_length".
  std::string_view pattern;
  Rule rule;
};

// The one table of fixed key types (names and types as in llama.cpp's llama-arch.cpp and gguf-py).
constexpr std::array kKnownKeys = {
    KnownKey{"general.architecture", Rule::kString},
    KnownKey{"general.name", Rule::kString},
    KnownKey{"general.alignment", Rule::kU32},
    KnownKey{"general.file_type", Rule::kUnsigned},
    KnownKey{"general.quantization_version", Rule::kUnsigned},

    KnownKey{"*.context_length", Rule::kUnsigned},
    KnownKey{"*.embedding_length", Rule::kUnsigned},
    KnownKey{"*.block_count", Rule::kUnsigned},
    KnownKey{"*.vocab_size", Rule::kUnsigned},
    KnownKey{"*.expert_count", Rule::kUnsigned},
    KnownKey{"*.expert_used_count", Rule::kUnsigned},
    KnownKey{"*.rope.dimension_count", Rule::kUnsigned},
    KnownKey{"*.feed_forward_length", Rule::kUnsignedOrLayerArray},
    KnownKey{"*.attention.head_count", Rule::kUnsignedOrLayerArray},
    KnownKey{"*.attention.head_count_kv", Rule::kUnsignedOrLayerArray},
    KnownKey{"*.attention.layer_norm_rms_epsilon", Rule::kF32},
    KnownKey{"*.attention.layer_norm_epsilon", Rule::kF32},
    KnownKey{"*.rope.freq_base", Rule::kF32},
    KnownKey{"*.rope.scaling.factor", Rule::kF32},

    KnownKey{"tokenizer.ggml.model", Rule::kString},
    KnownKey{"tokenizer.ggml.pre", Rule::kString},
    KnownKey{"tokenizer.ggml.tokens", Rule::kStringArray},
    KnownKey{"tokenizer.ggml.scores", Rule::kF32Array},
    KnownKey{"tokenizer.ggml.token_type", Rule::kI32Array},
    KnownKey{"tokenizer.ggml.merges", Rule::kStringArray},
    KnownKey{"tokenizer.ggml.*_token_id", Rule::kU32},
    KnownKey{"tokenizer.ggml.add_bos_token", Rule::kBool},
    KnownKey{"tokenizer.ggml.add_eos_token", Rule::kBool},
    KnownKey{"tokenizer.ggml.add_space_prefix", Rule::kBool},
    KnownKey{"tokenizer.chat_template", Rule::kString},
};

bool matches(std::string_view pattern, std::string_view key) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == key;
  const std::string_view prefix = pattern.substr(0, star);
  const std::string_view suffix = pattern.substr(star + 1);
  if (key.size() <= prefix.size() + suffix.size()) return false;
  if (!key.starts_with(prefix) || !key.ends_with(suffix)) return false;
  const std::string_view segment = key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
  return segment.find('.') == std::string_view::npos;
}

const KnownKey* find_rule(std::string_view key) {
  for (const auto& known : kKnownKeys) {
    if (matches(known.pattern, key)) return &known;
  }
  return nullptr;
}

bool is_unsigned(GgufValueType type) {
  return type == GgufValueType::U8 || type == GgufValueType::U16 || type == GgufValueType::U32 ||
         type == GgufValueType::U64;
}

bool is_array_of(const GgufValue& value, GgufValueType element) {
  const auto* array = std::get_if<GgufArray>(&value.storage);
  return array != nullptr && array->element_type() == element;
}

bool fits(Rule rule, const GgufValue& value) {
  const GgufValueType type = value.type();
  switch (rule) {
    case Rule::kString:
      return type == GgufValueType::STRING;
    case Rule::kBool:
      return type == GgufValueType::BOOL;
    case Rule::kU32:
      return type == GgufValueType::U32;
    case Rule::kF32:
      return type == GgufValueType::F32;
    case Rule::kUnsigned:
      return is_unsigned(type);
    case Rule::kUnsignedOrLayerArray:
      return is_unsigned(type) || is_array_of(value, GgufValueType::I32) || is_array_of(value, GgufValueType::U32);
    case Rule::kStringArray:
      return is_array_of(value, GgufValueType::STRING);
    case Rule::kF32Array:
      return is_array_of(value, GgufValueType::F32);
    case Rule::kI32Array:
      return is_array_of(value, GgufValueType::I32);
  }
  return false;
}

std::string_view rule_text(Rule rule) {
  switch (rule) {
    case Rule::kString:
      return "a string";
    case Rule::kBool:
      return "a bool";
    case Rule::kU32:
      return "a u32";
    case Rule::kF32:
      return "an f32";
    case Rule::kUnsigned:
      return "an unsigned integer";
    case Rule::kUnsignedOrLayerArray:
      return "an unsigned integer or a per-layer array of i32/u32";
    case Rule::kStringArray:
      return "an array of string";
    case Rule::kF32Array:
      return "an array of f32";
    case Rule::kI32Array:
      return "an array of i32";
  }
  return "?";
}

}  // namespace

std::string describe_value_type(const GgufValue& value) {
  if (const auto* array = std::get_if<GgufArray>(&value.storage)) {
    const auto element = array->element_type();
    return element == GgufValueType::ARRAY ? "nested array (array of array)"
                                           : "array of " + std::string(gguf_value_type_name(element));
  }
  return std::string(gguf_value_type_name(value.type()));
}

std::optional<std::string> check_known_key(std::string_view key, const GgufValue& value) {
  const KnownKey* known = find_rule(key);
  if (known == nullptr || fits(known->rule, value)) return std::nullopt;
  const std::string actual = describe_value_type(value);
  const bool is_array = value.type() == GgufValueType::ARRAY;
  const char* article = !is_array ? "" : actual.starts_with("nested") ? "a " : "an ";
  return "must be " + std::string(rule_text(known->rule)) + ", not " + article + actual;
}

Result<uint64_t> gguf_alignment_from_value(const GgufValue& value) {
  const auto* alignment = std::get_if<uint32_t>(&value.storage);
  if (alignment == nullptr) return fail("{} must be a u32, not {}", kGgufAlignmentKey, describe_value_type(value));
  if (*alignment == 0) return fail("{} is zero", kGgufAlignmentKey);
  if ((*alignment & (*alignment - 1)) != 0) return fail("{} {} is not a power of two", kGgufAlignmentKey, *alignment);
  if (*alignment > kGgufMaxAlignment) {
    return fail("{} {} is larger than the limit of {} bytes", kGgufAlignmentKey, *alignment, kGgufMaxAlignment);
  }
  return uint64_t{*alignment};
}

}  // namespace infertune
