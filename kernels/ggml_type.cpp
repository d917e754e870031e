#include "kernels/ggml_type.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace infertune {
namespace {

// Block geometry from ggml's type table. Bytes per block follow the block structs in kernels/blocks.h.
constexpr std::array kTypes = {
    GgmlTypeTraits{GgmlType::F32, "f32", 1, 4, false},
    GgmlTypeTraits{GgmlType::F16, "f16", 1, 2, false},
    GgmlTypeTraits{GgmlType::Q4_0, "q4_0", 32, 18, true},
    GgmlTypeTraits{GgmlType::Q4_1, "q4_1", 32, 20, true},
    GgmlTypeTraits{GgmlType::Q5_0, "q5_0", 32, 22, true},
    GgmlTypeTraits{GgmlType::Q5_1, "q5_1", 32, 24, true},
    GgmlTypeTraits{GgmlType::Q8_0, "q8_0", 32, 34, true},
    GgmlTypeTraits{GgmlType::Q8_1, "q8_1", 32, 36, true},
    GgmlTypeTraits{GgmlType::Q2_K, "q2_K", 256, 84, true},
    GgmlTypeTraits{GgmlType::Q3_K, "q3_K", 256, 110, true},
    GgmlTypeTraits{GgmlType::Q4_K, "q4_K", 256, 144, true},
    GgmlTypeTraits{GgmlType::Q5_K, "q5_K", 256, 176, true},
    GgmlTypeTraits{GgmlType::Q6_K, "q6_K", 256, 210, true},
    GgmlTypeTraits{GgmlType::Q8_K, "q8_K", 256, 292, true},
    GgmlTypeTraits{GgmlType::IQ2_XXS, "iq2_xxs", 256, 66, true},
    GgmlTypeTraits{GgmlType::IQ2_XS, "iq2_xs", 256, 74, true},
    GgmlTypeTraits{GgmlType::IQ3_XXS, "iq3_xxs", 256, 98, true},
    GgmlTypeTraits{GgmlType::IQ1_S, "iq1_s", 256, 50, true},
    GgmlTypeTraits{GgmlType::IQ4_NL, "iq4_nl", 32, 18, true},
    GgmlTypeTraits{GgmlType::IQ3_S, "iq3_s", 256, 110, true},
    GgmlTypeTraits{GgmlType::IQ2_S, "iq2_s", 256, 82, true},
    GgmlTypeTraits{GgmlType::IQ4_XS, "iq4_xs", 256, 136, true},
    GgmlTypeTraits{GgmlType::I8, "i8", 1, 1, false},
    GgmlTypeTraits{GgmlType::I16, "i16", 1, 2, false},
    GgmlTypeTraits{GgmlType::I32, "i32", 1, 4, false},
    GgmlTypeTraits{GgmlType::I64, "i64", 1, 8, false},
    GgmlTypeTraits{GgmlType::F64, "f64", 1, 8, false},
    GgmlTypeTraits{GgmlType::IQ1_M, "iq1_m", 256, 56, true},
    GgmlTypeTraits{GgmlType::BF16, "bf16", 1, 2, false},
    GgmlTypeTraits{GgmlType::TQ1_0, "tq1_0", 256, 54, true},
    GgmlTypeTraits{GgmlType::TQ2_0, "tq2_0", 256, 66, true},
    GgmlTypeTraits{GgmlType::MXFP4, "mxfp4", 32, 17, true},
};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t id) {
  for (const auto& t : kTypes) {
    if (static_cast<uint32_t>(t.type) == id) return t;
  }
  return std::nullopt;
}

const GgmlTypeTraits& ggml_type_traits(GgmlType type) {
  for (const auto& t : kTypes) {
    if (t.type == type) return t;
  }
  return kTypes[0];  // unreachable for enumerators; ids from files go through the checked overload
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const auto& t : kTypes) {
    if (equal_ignoring_case(t.name, name)) return t.type;
  }
  return std::nullopt;
}

std::string_view ggml_type_name(GgmlType type) { return ggml_type_traits(type).name; }

std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t n_elements) {
  const auto& t = ggml_type_traits(type);
  if (n_elements % t.block_elements != 0) return std::nullopt;
  const uint64_t blocks = n_elements / t.block_elements;
  if (blocks > UINT64_MAX / t.block_bytes) return std::nullopt;
  return blocks * t.block_bytes;
}

}  // namespace infertune
