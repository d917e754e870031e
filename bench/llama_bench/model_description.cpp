#include "bench/llama_bench/model_description.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

namespace infertune {
namespace {

// LLAMA_FTYPE numbers and the names llama.cpp prints for them (llama_model_ftype_name).
constexpr std::array<std::pair<uint32_t, std::string_view>, 33> kFileTypeNames{{
    {0, "all F32"},
    {1, "F16"},
    {2, "Q4_0"},
    {3, "Q4_1"},
    {7, "Q8_0"},
    {8, "Q5_0"},
    {9, "Q5_1"},
    {10, "Q2_K - Medium"},
    {11, "Q3_K - Small"},
    {12, "Q3_K - Medium"},
    {13, "Q3_K - Large"},
    {14, "Q4_K - Small"},
    {15, "Q4_K - Medium"},
    {16, "Q5_K - Small"},
    {17, "Q5_K - Medium"},
    {18, "Q6_K"},
    {19, "IQ2_XXS - 2.0625 bpw"},
    {20, "IQ2_XS - 2.3125 bpw"},
    {21, "Q2_K - Small"},
    {22, "IQ3_XS - 3.3 bpw"},
    {23, "IQ3_XXS - 3.0625 bpw"},
    {24, "IQ1_S - 1.5625 bpw"},
    {25, "IQ4_NL - 4.5 bpw"},
    {26, "IQ3_S - 3.4375 bpw"},
    {27, "IQ3_S mix - 3.66 bpw"},
    {28, "IQ2_S - 2.5 bpw"},
    {29, "IQ2_M - 2.7 bpw"},
    {30, "IQ4_XS - 4.25 bpw"},
    {31, "IQ1_M - 1.75 bpw"},
    {32, "BF16"},
    {36, "TQ1_0 - 1.69 bpw ternary"},
    {37, "TQ2_0 - 2.06 bpw ternary"},
    {38, "MXFP4 MoE"},
}};

// Two significant digits below 10, whole numbers above: "1.2", "7.6", "13", "494".
std::string two_digits(double value) {
  if (value >= 10) return fmt::format("{:.0f}", value);
  std::string text = fmt::format("{:.1f}", value);
  if (text.size() > 2 && text.ends_with(".0")) text.resize(text.size() - 2);
  return text;
}

}  // namespace

std::optional<std::string_view> llama_file_type_name(uint32_t llama_ftype) {
  for (const auto& [number, name] : kFileTypeNames) {
    if (number == llama_ftype) return name;
  }
  return std::nullopt;
}

std::string parameter_count_label(uint64_t n_params) {
  const double n = static_cast<double>(n_params);
  if (n >= 1e9) return two_digits(n / 1e9) + "B";
  if (n >= 1e6) return two_digits(n / 1e6) + "M";
  if (n >= 1e3) return two_digits(n / 1e3) + "K";
  return std::to_string(n_params);
}

std::string model_description(std::string_view arch, uint64_t n_params, std::optional<uint32_t> file_type,
                              std::string_view main_weight_type) {
  std::string type;
  if (file_type) {
    if (auto name = llama_file_type_name(*file_type)) {
      type = std::string(*name);
    } else {
      type = fmt::format("file type {}", *file_type);
    }
  } else {
    type = fmt::format("{} (guessed)", main_weight_type);
  }
  return fmt::format("{} {} {}", arch, parameter_count_label(n_params), type);
}

}  // namespace infertune
