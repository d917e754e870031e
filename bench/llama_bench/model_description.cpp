#include "bench/llama_bench/model_description.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <utility>
#include <vector>

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

// The file type llama.cpp assumes when most tensors have this type (the K-quants as their "Medium" mix).
constexpr std::array<std::pair<GgmlType, uint32_t>, 24> kGuessedFileTypes{{
    {GgmlType::F32, 0},     {GgmlType::F16, 1},     {GgmlType::BF16, 32},    {GgmlType::Q4_0, 2},
    {GgmlType::Q4_1, 3},    {GgmlType::Q5_0, 8},    {GgmlType::Q5_1, 9},     {GgmlType::Q8_0, 7},
    {GgmlType::Q2_K, 10},   {GgmlType::Q3_K, 12},   {GgmlType::Q4_K, 15},    {GgmlType::Q5_K, 17},
    {GgmlType::Q6_K, 18},   {GgmlType::TQ1_0, 36},  {GgmlType::TQ2_0, 37},   {GgmlType::IQ2_XXS, 19},
    {GgmlType::IQ2_XS, 20}, {GgmlType::IQ2_S, 28},  {GgmlType::IQ3_XXS, 23}, {GgmlType::IQ1_S, 24},
    {GgmlType::IQ1_M, 31},  {GgmlType::IQ4_NL, 25}, {GgmlType::IQ4_XS, 30},  {GgmlType::IQ3_S, 26},
}};

// The tables of llama.cpp's loaders (llama-cpp-python 0.3.36), one per architecture infertune runs.
std::string_view llama_size_class_of_llama(const ModelConfig& c) {
  if (c.n_expert == 8) {  // Mixtral
    if (c.n_layers == 32) return "8x7B";
    return c.n_layers == 56 ? "8x22B" : "?B";
  }
  switch (c.n_layers) {
    case 16:
      return "1B";  // Llama 3.2 1B
    case 22:
      return "1B";  // TinyLlama
    case 26:
      return "3B";
    case 28:
      return "3B";  // Llama 3.2 3B
    case 30:
      return "256M";
    case 32:
      return c.n_vocab == 49152 ? "3B" : (c.n_vocab < 40000 ? "7B" : "8B");
    case 36:
      return "8B";
    case 40:
      return "13B";
    case 48:
      return "34B";
    case 60:
      return "30B";
    case 80:
      return c.n_head == c.n_head_kv ? "65B" : "70B";
    default:
      return "?B";
  }
}

std::string_view llama_size_class_of_qwen2(const ModelConfig& c) {
  switch (c.n_layers) {
    case 24:
      return c.n_embd == 1024 ? "0.5B" : "1B";
    case 28:
      return c.n_embd == 1536 ? "1.5B" : "7B";
    case 32:
      return "7B";
    case 36:
      return "3B";
    case 40:
      return c.n_head == 20 ? "4B" : "13B";
    case 48:
      return "14B";
    case 64:
      return "32B";
    case 80:
      return "70B";
    default:
      return "?B";
  }
}

std::string_view llama_size_class_of_qwen3(const ModelConfig& c) {
  switch (c.n_layers) {
    case 28:
      return c.n_embd == 1024 ? "0.6B" : "1.7B";
    case 36:
      return c.n_embd == 2560 ? "4B" : "8B";
    case 40:
      return "14B";
    case 64:
      return "32B";
    default:
      return "?B";
  }
}

// The architectures whose size llama.cpp tells by the block count alone: {n_layers, class} pairs.
struct LayerCountClass {
  uint32_t n_layers;
  std::string_view size_class;
};

std::string_view size_class_by_layers(const ModelConfig& c, std::initializer_list<LayerCountClass> table) {
  for (const LayerCountClass& entry : table) {
    if (entry.n_layers == c.n_layers) return entry.size_class;
  }
  return "?B";
}

}  // namespace

std::optional<std::string_view> llama_file_type_name(uint32_t llama_ftype) {
  for (const auto& [number, name] : kFileTypeNames) {
    if (number == llama_ftype) return name;
  }
  return std::nullopt;
}

std::string_view llama_size_class(const ModelConfig& config) {
  switch (config.arch) {
    case ModelArch::Llama:
      return llama_size_class_of_llama(config);
    case ModelArch::Qwen2:
      return llama_size_class_of_qwen2(config);
    case ModelArch::Gemma3:
      return size_class_by_layers(config, {{18, "270M"}, {26, "1B"}, {32, "8B"}, {34, "4B"}, {48, "12B"}, {62, "27B"}});
    case ModelArch::Qwen3:
      return llama_size_class_of_qwen3(config);
    case ModelArch::Qwen3Moe:
      return size_class_by_layers(config, {{48, "30B.A3B"}, {94, "235B.A22B"}});
    case ModelArch::Qwen2Moe:
      return size_class_by_layers(config, {{24, "A2.7B"}, {28, "57B.A14B"}});
    case ModelArch::GptOss:
      return size_class_by_layers(config, {{24, "20B"}, {36, "120B"}});
    case ModelArch::Gemma2:
      return size_class_by_layers(config, {{26, "2B"}, {42, "9B"}, {46, "27B"}});
    case ModelArch::Phi3:
      return size_class_by_layers(config, {{24, "1B"}, {32, "3B"}, {40, "14B"}});
  }
  return "?B";
}

uint32_t guessed_llama_file_type(std::span<const GgufTensorInfo> tensors) {
  // llama.cpp counts over its tensors sorted by name, so ties go the same way whatever the file's order.
  std::vector<const GgufTensorInfo*> by_name;
  for (const GgufTensorInfo& tensor : tensors) by_name.push_back(&tensor);
  std::sort(by_name.begin(), by_name.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  std::map<GgmlType, uint32_t> counts;
  uint32_t most = 0;
  GgmlType most_common = GgmlType::F32;
  for (const GgufTensorInfo* tensor : by_name) {
    if (++counts[tensor->type] > most) {
      most = counts[tensor->type];
      most_common = tensor->type;
    }
  }
  for (const auto& [type, file_type] : kGuessedFileTypes) {
    if (type == most_common) return file_type;
  }
  return 0;
}

std::string model_description(const ModelConfig& config, std::span<const GgufTensorInfo> tensors) {
  std::string type;
  if (config.file_type) {
    type = std::string(llama_file_type_name(*config.file_type).value_or("unknown, may not work"));
  } else {
    type = fmt::format("(guessed) {}", llama_file_type_name(guessed_llama_file_type(tensors)).value_or("all F32"));
  }
  return fmt::format("{} {} {}", model_arch_name(config.arch), llama_size_class(config), type);
}

}  // namespace infertune
