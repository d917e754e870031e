// The model column against what llama.cpp's llama-bench prints for the same shapes and files (figures from
// llama-cpp-python 0.3.36's llama-bench; llama_bench_fields_check compares the column with the real tool).
#include "bench/llama_bench/model_description.h"

#include <gtest/gtest.h>

#include <vector>

namespace infertune {
namespace {

ModelConfig shape(ModelArch arch, uint32_t n_layers, uint32_t n_embd = 2048, uint32_t n_vocab = 128256,
                  uint32_t n_head = 32, uint32_t n_head_kv = 8) {
  ModelConfig config;
  config.arch = arch;
  config.n_layers = n_layers;
  config.n_embd = n_embd;
  config.n_vocab = n_vocab;
  config.n_head = n_head;
  config.n_head_kv = n_head_kv;
  return config;
}

GgufTensorInfo tensor(std::string name, GgmlType type) {
  GgufTensorInfo info;
  info.name = std::move(name);
  info.type = type;
  return info;
}

TEST(ModelDescription, SizeClassesOfLlamaFollowLlamaCppsTable) {
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 16)), "1B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 28)), "3B");
  // 32 layers: granite's vocabulary, llama-2's (32000) and llama-3's (128256) name three sizes.
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 32, 4096, 49152)), "3B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 32, 4096, 32000)), "7B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 32, 4096, 128256)), "8B");
  // 80 layers: llama-1 65B has no grouped KV heads, llama-2/3 70B has.
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 80, 8192, 32000, 64, 64)), "65B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 80, 8192, 32000, 64, 8)), "70B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Llama, 5)), "?B");
}

TEST(ModelDescription, SizeClassesOfQwen2Qwen3AndGemma3) {
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2, 24, 896)), "1B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2, 24, 1024)), "0.5B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2, 28, 1536)), "1.5B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2, 28, 3584)), "7B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2, 40, 2560, 151936, 20)), "4B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2, 40, 5120, 151936, 40)), "13B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2, 2)), "?B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Gemma3, 18, 640)), "270M");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Gemma3, 62, 5376)), "27B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Gemma3, 3)), "?B");
  // The mixtures of experts, told by their block count alone.
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen3Moe, 48)), "30B.A3B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen2Moe, 24)), "A2.7B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::GptOss, 24)), "20B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::GptOss, 36)), "120B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::GptOss, 4)), "?B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Gemma2, 26, 2304)), "2B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Gemma2, 42, 3584)), "9B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Gemma2, 46, 4608)), "27B");
  // phi3 by its block count: Phi-3-mini, Phi-3.5-mini and Phi-4-mini 3B, Phi-4 14B.
  EXPECT_EQ(llama_size_class(shape(ModelArch::Phi3, 32, 3072)), "3B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Phi3, 40, 5120)), "14B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Phi3, 24, 2048)), "1B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen3, 28, 1024)), "0.6B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen3, 28, 2048)), "1.7B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen3, 36, 2560)), "4B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen3, 36, 4096)), "8B");
  EXPECT_EQ(llama_size_class(shape(ModelArch::Qwen3, 64, 5120)), "32B");
}

TEST(ModelDescription, FileTypeFromTheFile) {
  ModelConfig config = shape(ModelArch::Gemma3, 18, 640);
  config.file_type = 15;
  EXPECT_EQ(model_description(config, {}), "gemma3 270M Q4_K - Medium");
  config.file_type = 9999;
  EXPECT_EQ(model_description(config, {}), "gemma3 270M unknown, may not work");
}

TEST(ModelDescription, GuessedFileTypeIsTheMostCommonTensorType) {
  const std::vector<GgufTensorInfo> tensors{
      tensor("blk.0.attn_norm.weight", GgmlType::F32), tensor("blk.0.attn_q.weight", GgmlType::Q4_K),
      tensor("blk.0.attn_k.weight", GgmlType::Q4_K), tensor("output.weight", GgmlType::Q6_K)};
  EXPECT_EQ(guessed_llama_file_type(tensors), 15u);  // Q4_K's "Medium" mix
  EXPECT_EQ(model_description(shape(ModelArch::Llama, 16), tensors), "llama 1B (guessed) Q4_K - Medium");
  EXPECT_EQ(guessed_llama_file_type({}), 0u);
}

TEST(ModelDescription, GuessTiesGoToTheFirstTypeInNameOrderWhateverTheFileOrder) {
  // Two F16 and two Q8_0: in name order ("a..." < "b...") F16 reaches two first.
  const std::vector<GgufTensorInfo> tensors{tensor("b.1", GgmlType::Q8_0), tensor("b.2", GgmlType::Q8_0),
                                            tensor("a.1", GgmlType::F16), tensor("a.2", GgmlType::F16)};
  EXPECT_EQ(guessed_llama_file_type(tensors), 1u);
}

TEST(ModelDescription, TypesWithoutAFileTypeGuessAllF32) {
  const std::vector<GgufTensorInfo> tensors{tensor("a", GgmlType::MXFP4), tensor("b", GgmlType::MXFP4)};
  EXPECT_EQ(model_description(shape(ModelArch::Llama, 7), tensors), "llama ?B (guessed) all F32");
}

}  // namespace
}  // namespace infertune
