// read_model_config: valid files (the shared fixtures, synthesized models) and one broken variant per
// check, each asserting the error names the key or tensor and what was expected.
#include "engine/model/model_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "engine/gguf/gguf_writer.h"
#include "engine/model/arch_tensors.h"
#include "engine/synth/presets.h"
#include "engine/synth/synthesizer.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

struct TensorEntry {
  std::string name;
  std::vector<uint64_t> dims;
  GgmlType type = GgmlType::F32;
};

// A model as metadata + tensor table that a test edits before writing it (tensor data is zeros: the
// checks under test look at shapes and keys only).
struct ModelParts {
  std::vector<GgufKeyValue> metadata;
  std::vector<TensorEntry> tensors;

  GgufKeyValue* find(std::string_view key) {
    auto it = std::find_if(metadata.begin(), metadata.end(), [&](const GgufKeyValue& kv) { return kv.key == key; });
    return it == metadata.end() ? nullptr : &*it;
  }
  void set(std::string_view key, GgufValue value) {
    if (GgufKeyValue* kv = find(key)) {
      kv->value = std::move(value);
    } else {
      metadata.push_back({std::string(key), std::move(value)});
    }
  }
  void erase_key(std::string_view key) {
    std::erase_if(metadata, [&](const GgufKeyValue& kv) { return kv.key == key; });
  }
  void erase_tensors(const std::function<bool(const std::string&)>& predicate) {
    std::erase_if(tensors, [&](const TensorEntry& t) { return predicate(t.name); });
  }
  TensorEntry& tensor(std::string_view name) {
    return *std::find_if(tensors.begin(), tensors.end(), [&](const TensorEntry& t) { return t.name == name; });
  }
};

ModelParts tiny_parts(ModelArch arch = ModelArch::Llama) {
  auto model = resolve_synth_model(std::string(model_arch_name(arch)), std::string("tiny"), {});
  EXPECT_TRUE(model.ok());
  SynthRequest request;
  request.config = model->config;
  request.preset = model->preset;
  request.file_type = *file_type_from_name("f32");
  auto plan = plan_synthetic_model(request);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  ModelParts parts;
  parts.metadata = plan->writer.metadata();
  for (const GgufTensorInfo& t : plan->writer.tensors()) parts.tensors.push_back({t.name, t.dims, t.type});
  return parts;
}

// Writes the parts into memory and reads the config back (ModelConfig keeps no reference to the bytes).
Result<ModelConfig> read_parts(const ModelParts& parts) {
  GgufWriter writer;
  for (const GgufKeyValue& kv : parts.metadata) writer.set(kv.key, kv.value);
  for (const TensorEntry& t : parts.tensors) {
    if (Status s = writer.add_tensor(t.name, t.dims, t.type); !s) return s.error();
  }
  auto bytes = writer.write_memory([](size_t, const GgufTensorInfo&, std::span<std::byte>) { return Status{}; });
  if (!bytes) return bytes.error();
  auto file = GgufFile::parse(*bytes, "test.gguf");
  if (!file) return file.error();
  return read_model_config(*file);
}

std::string error_of(const ModelParts& parts) {
  auto config = read_parts(parts);
  EXPECT_FALSE(config.ok()) << "the broken model was accepted";
  return config.ok() ? std::string() : config.error().message;
}

GgufValue u32(uint32_t v) { return GgufValue{v}; }

TEST(ModelConfig, AcceptsTheSynthesizedTinyModel) {
  auto config = read_parts(tiny_parts());
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->arch, ModelArch::Llama);
  EXPECT_EQ(config->n_layers, 4u);
  EXPECT_EQ(config->n_embd, 256u);
  EXPECT_EQ(config->n_head, 8u);
  EXPECT_EQ(config->n_head_kv, 2u);
  EXPECT_EQ(config->head_dim, 32u);
  EXPECT_EQ(config->n_ff, 512u);
  EXPECT_EQ(config->n_vocab, 512u);
  EXPECT_EQ(config->n_gqa(), 4u);
  EXPECT_FALSE(config->tied_output);
  EXPECT_EQ(config->tokens.bos, 1u);
  EXPECT_EQ(config->tokens.eos, 2u);
  EXPECT_EQ(config->tokens.unk, 0u);
  EXPECT_EQ(config->tokens.pad, std::nullopt);
}

TEST(ModelConfig, ReadsEveryFixtureModel) {
  const auto dir = test::fixture_path("models");
  int n_models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gguf") continue;
    auto file = GgufFile::open(entry.path().string());
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto config = read_model_config(*file);
    ASSERT_TRUE(config.ok()) << config.error().message;
    ++n_models;
  }
  EXPECT_GE(n_models, 10);
}

TEST(ModelConfig, FixtureValuesMatchTheirReadme) {
  // fixtures/README.md: dim 256, 4 layers, 8 heads, 2 KV heads, head dim 32, FFN 512, vocab 512, rope
  // base 10000, rms eps 1e-5, untied output; qwen2 uses NEOX rope.
  for (const char* name : {"models/fixture-llama-f32.gguf", "models/fixture-qwen2-Q8_0.gguf"}) {
    auto file = GgufFile::open(test::fixture_path(name).string());
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto c = read_model_config(*file);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->n_embd, 256u);
    EXPECT_EQ(c->n_layers, 4u);
    EXPECT_EQ(c->n_head, 8u);
    EXPECT_EQ(c->n_head_kv, 2u);
    EXPECT_EQ(c->head_dim, 32u);
    EXPECT_EQ(c->n_rot, 32u);
    EXPECT_EQ(c->n_ff, 512u);
    EXPECT_EQ(c->n_vocab, 512u);
    EXPECT_FLOAT_EQ(c->rope_freq_base, 10000.0f);
    EXPECT_FLOAT_EQ(c->rms_eps, 1e-5f);
    EXPECT_FALSE(c->tied_output);
  }
  auto qwen = GgufFile::open(test::fixture_path("models/fixture-qwen2-f32.gguf").string());
  ASSERT_TRUE(qwen.ok());
  auto qc = read_model_config(*qwen);
  ASSERT_TRUE(qc.ok()) << qc.error().message;
  EXPECT_EQ(qc->arch, ModelArch::Qwen2);
  EXPECT_EQ(rope_style(qc->arch), RopeStyle::Neox);
  EXPECT_EQ(rope_style(ModelArch::Llama), RopeStyle::Interleaved);
}

TEST(ModelConfig, Stories260KHasNoPaddingOrSeparatorToken) {
  // stories260K stores padding and separator ids as 0xFFFFFFFF (llama.cpp's "none").
  auto file = GgufFile::open(test::fixture_path("models/stories260K.gguf").string());
  ASSERT_TRUE(file.ok());
  auto c = read_model_config(*file);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->n_embd, 64u);
  EXPECT_EQ(c->n_layers, 5u);
  EXPECT_EQ(c->n_head_kv, 4u);
  EXPECT_EQ(c->n_ff, 172u);
  EXPECT_EQ(c->n_ctx_train, 128u);
  EXPECT_EQ(c->tokens.pad, std::nullopt);
  EXPECT_EQ(c->tokens.sep, std::nullopt);
  EXPECT_EQ(c->tokens.bos, 1u);
}

TEST(ModelConfig, ErrorsStartWithTheSourceName) {
  ModelParts parts = tiny_parts();
  parts.set("llama.attention.head_count", u32(0));
  EXPECT_THAT(error_of(parts), ::testing::StartsWith("test.gguf: "));
}

TEST(ModelConfig, RejectsZeroHeads) {
  ModelParts parts = tiny_parts();
  parts.set("llama.attention.head_count", u32(0));
  EXPECT_THAT(error_of(parts), HasSubstr("llama.attention.head_count = 0"));
}

TEST(ModelConfig, RejectsZeroKvHeads) {
  ModelParts parts = tiny_parts();
  parts.set("llama.attention.head_count_kv", u32(0));
  EXPECT_THAT(error_of(parts), HasSubstr("llama.attention.head_count_kv = 0"));
}

TEST(ModelConfig, RejectsKvHeadsThatDoNotDivideHeads) {
  ModelParts parts = tiny_parts();
  parts.set("llama.attention.head_count_kv", u32(3));
  EXPECT_THAT(error_of(parts),
              HasSubstr("llama.attention.head_count_kv = 3 does not divide llama.attention.head_count = 8"));
}

TEST(ModelConfig, RejectsEmbeddingNotDivisibleByHeadsWithoutKeyLength) {
  ModelParts parts = tiny_parts();
  parts.set("llama.attention.head_count", u32(6));
  parts.set("llama.attention.head_count_kv", u32(6));
  const std::string error = error_of(parts);
  EXPECT_THAT(error, HasSubstr("llama.embedding_length = 256 is not divisible by llama.attention.head_count = 6"));
  EXPECT_THAT(error, HasSubstr("llama.attention.key_length"));
}

TEST(ModelConfig, KeyLengthGivesTheHeadSizeWhenHeadsDoNotDivide) {
  // 6 heads of 32 = 192 query rows: the tensors must then follow key_length, not n_embd / n_head.
  ModelParts parts = tiny_parts();
  parts.set("llama.attention.head_count", u32(6));
  parts.set("llama.attention.head_count_kv", u32(2));
  parts.set("llama.attention.key_length", u32(32));
  parts.set("llama.attention.value_length", u32(32));
  const std::string error = error_of(parts);  // attn_q is still [256, 256]
  EXPECT_THAT(error, HasSubstr("tensor 'blk.0.attn_q.weight': expected [n_embd, n_head * head_dim] = [256, 192], "
                               "found [256, 256]"));
  for (int layer = 0; layer < 4; ++layer) {
    parts.tensor(fmt::format("blk.{}.attn_q.weight", layer)).dims = {256, 192};
    parts.tensor(fmt::format("blk.{}.attn_output.weight", layer)).dims = {192, 256};
  }
  auto config = read_parts(parts);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->head_dim, 32u);
  EXPECT_EQ(config->q_dim(), 192u);
}

TEST(ModelConfig, RejectsMissingLayerTensor) {
  ModelParts parts = tiny_parts();
  parts.erase_tensors([](const std::string& name) { return name == "blk.2.ffn_up.weight"; });
  EXPECT_THAT(error_of(parts), HasSubstr("missing tensor 'blk.2.ffn_up.weight' (llama.block_count = 4: blocks 0..3)"));
}

TEST(ModelConfig, RejectsMissingLastLayer) {
  ModelParts parts = tiny_parts();
  parts.erase_tensors([](const std::string& name) { return name.starts_with("blk.3."); });
  EXPECT_THAT(error_of(parts), HasSubstr("missing tensor 'blk.3.attn_norm.weight' (llama.block_count = 4"));
}

TEST(ModelConfig, RejectsBlocksBeyondBlockCount) {
  ModelParts parts = tiny_parts();
  parts.tensors.push_back({"blk.4.attn_norm.weight", {256}, GgmlType::F32});
  EXPECT_THAT(error_of(parts),
              HasSubstr("tensor 'blk.4.attn_norm.weight' is in block 4, beyond llama.block_count = 4: blocks 0..3"));
}

TEST(ModelConfig, RejectsBlockCountLargerThanTheTensors) {
  ModelParts parts = tiny_parts();
  parts.set("llama.block_count", u32(5));
  EXPECT_THAT(error_of(parts), HasSubstr("missing tensor 'blk.4.attn_norm.weight' (llama.block_count = 5"));
}

TEST(ModelConfig, RejectsWrongEmbeddingShape) {
  ModelParts parts = tiny_parts();
  parts.tensor("token_embd.weight").dims = {255, 512};
  const std::string error = error_of(parts);
  EXPECT_THAT(error, HasSubstr("tensor 'token_embd.weight': expected [n_embd, n_vocab] = [256, n_vocab]"));
  EXPECT_THAT(error, HasSubstr("found [255, 512]"));
}

TEST(ModelConfig, RejectsWrongProjectionShape) {
  ModelParts parts = tiny_parts();
  parts.tensor("blk.1.attn_k.weight").dims = {256, 128};
  EXPECT_THAT(error_of(parts), HasSubstr("tensor 'blk.1.attn_k.weight': expected [n_embd, n_head_kv * head_dim] = "
                                         "[256, 64], found [256, 128]"));
}

TEST(ModelConfig, RejectsOutputWithAnotherVocabulary) {
  ModelParts parts = tiny_parts();
  parts.tensor("output.weight").dims = {256, 500};
  EXPECT_THAT(error_of(parts), HasSubstr("tensor 'output.weight': expected [n_embd, n_vocab] = [256, 512]"));
}

TEST(ModelConfig, MissingOutputMeansTiedEmbeddings) {
  ModelParts parts = tiny_parts();
  parts.erase_tensors([](const std::string& name) { return name == "output.weight"; });
  auto config = read_parts(parts);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_TRUE(config->tied_output);
}

TEST(ModelConfig, RejectsMissingOutputNorm) {
  ModelParts parts = tiny_parts();
  parts.erase_tensors([](const std::string& name) { return name == "output_norm.weight"; });
  EXPECT_THAT(error_of(parts), HasSubstr("missing tensor 'output_norm.weight'"));
}

TEST(ModelConfig, RejectsUnknownTensor) {
  ModelParts parts = tiny_parts();
  parts.tensors.push_back({"blk.0.attn_q_norm.weight", {32}, GgmlType::F32});
  EXPECT_THAT(error_of(parts), HasSubstr("unexpected tensor 'blk.0.attn_q_norm.weight' for architecture llama"));
}

TEST(ModelConfig, RejectsBosIdOutsideTheVocabulary) {
  ModelParts parts = tiny_parts();
  parts.set("tokenizer.ggml.bos_token_id", u32(512));
  EXPECT_THAT(error_of(parts), HasSubstr("tokenizer.ggml.bos_token_id = 512 is out of range: the vocabulary has "
                                         "512 tokens (ids 0..511)"));
}

TEST(ModelConfig, RejectsEosAndPadIdsOutsideTheVocabulary) {
  ModelParts eos = tiny_parts();
  eos.set("tokenizer.ggml.eos_token_id", u32(100000));
  EXPECT_THAT(error_of(eos), HasSubstr("tokenizer.ggml.eos_token_id = 100000 is out of range"));
  ModelParts pad = tiny_parts();
  pad.set("tokenizer.ggml.padding_token_id", u32(512));
  EXPECT_THAT(error_of(pad), HasSubstr("tokenizer.ggml.padding_token_id = 512 is out of range"));
}

TEST(ModelConfig, RejectsTokenArrayOfTheWrongLength) {
  ModelParts parts = tiny_parts();
  auto& tokens = std::get<std::vector<std::string>>(
      std::get<GgufArray>(parts.find("tokenizer.ggml.tokens")->value.storage).elements);
  tokens.pop_back();
  EXPECT_THAT(error_of(parts), HasSubstr("tokenizer.ggml.tokens has 511 entries, expected n_vocab = 512 (rows of "
                                         "token_embd.weight)"));
}

TEST(ModelConfig, RejectsScoresOfTheWrongLength) {
  ModelParts parts = tiny_parts();
  parts.set("tokenizer.ggml.scores", GgufValue{GgufArray{std::vector<float>(600, 0.0f)}});
  EXPECT_THAT(error_of(parts), HasSubstr("tokenizer.ggml.scores has 600 entries, expected n_vocab = 512"));
}

TEST(ModelConfig, RejectsMissingVocabulary) {
  ModelParts parts = tiny_parts();
  parts.erase_key("tokenizer.ggml.tokens");
  EXPECT_THAT(error_of(parts), HasSubstr("missing key 'tokenizer.ggml.tokens'"));
}

TEST(ModelConfig, RejectsVocabSizeKeyThatDisagrees) {
  ModelParts parts = tiny_parts();
  parts.set("llama.vocab_size", u32(1000));
  EXPECT_THAT(error_of(parts), HasSubstr("llama.vocab_size = 1000 does not match token_embd.weight [256, 512]"));
}

TEST(ModelConfig, RejectsUnsupportedArchitecture) {
  ModelParts parts = tiny_parts();
  parts.set("general.architecture", GgufValue{std::string("gemma")});
  EXPECT_THAT(
      error_of(parts),
      HasSubstr("general.architecture = 'gemma' is not supported (supported: llama, qwen2, gemma2, gemma3, qwen3, "
                "qwen3moe, qwen2moe, gpt-oss, phi3)"));
}

TEST(ModelConfig, RejectsMissingHyperParameter) {
  ModelParts parts = tiny_parts();
  parts.erase_key("llama.block_count");
  EXPECT_THAT(error_of(parts), HasSubstr("missing key 'llama.block_count'"));
}

TEST(ModelConfig, RejectsHyperParameterOfTheWrongType) {
  ModelParts parts = tiny_parts();
  parts.set("llama.embedding_length", GgufValue{std::string("256")});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.embedding_length"));
}

TEST(ModelConfig, RejectsRopeDimensionsLargerThanTheHead) {
  ModelParts parts = tiny_parts();
  parts.set("llama.rope.dimension_count", u32(64));
  EXPECT_THAT(error_of(parts),
              HasSubstr("llama.rope.dimension_count = 64: must be even, at least 2 and at most the head size 32"));
  parts.set("llama.rope.dimension_count", u32(0));  // no rotation at all: refused at load, not a silent no-op
  EXPECT_THAT(error_of(parts), HasSubstr("llama.rope.dimension_count = 0: must be even, at least 2"));
}

// A NaN epsilon is a bad value, said as such; only an absent key is "missing".
TEST(ModelConfig, NanEpsilonIsABadValueNotAMissingKey) {
  ModelParts parts = tiny_parts();
  parts.set("llama.attention.layer_norm_rms_epsilon", GgufValue{std::nanf("")});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.attention.layer_norm_rms_epsilon = nan: must be positive and finite"));
  parts.erase_key("llama.attention.layer_norm_rms_epsilon");
  EXPECT_THAT(error_of(parts), HasSubstr("missing key 'llama.attention.layer_norm_rms_epsilon'"));
}

// The tokenizer's metadata is checked when the model loads, not at its first tokenization.
TEST(ModelConfig, TokenizerMetadataIsCheckedAtLoad) {
  ModelParts parts = tiny_parts();
  parts.set("tokenizer.ggml.model", GgufValue{std::string("rwkv-world")});
  EXPECT_THAT(error_of(parts), HasSubstr("tokenizer.ggml.model = 'rwkv-world': unsupported tokenizer"));
  parts.set("tokenizer.ggml.model", GgufValue{std::string("llama")});
  std::vector<int32_t> types(512, 1);
  types[7] = 9;
  parts.set("tokenizer.ggml.token_type", GgufValue{GgufArray{types}});
  EXPECT_THAT(error_of(parts), HasSubstr("tokenizer.ggml.token_type[7] = 9: not a token type"));
}

TEST(ModelConfig, Qwen2RequiresItsBiases) {
  ModelParts parts = tiny_parts(ModelArch::Qwen2);
  ASSERT_TRUE(read_parts(parts).ok());
  parts.erase_tensors([](const std::string& name) { return name == "blk.0.attn_k.bias"; });
  EXPECT_THAT(error_of(parts), HasSubstr("missing tensor 'blk.0.attn_k.bias' (qwen2.block_count = 4"));
}

TEST(ModelConfig, Qwen2BiasShapeIsChecked) {
  ModelParts parts = tiny_parts(ModelArch::Qwen2);
  parts.tensor("blk.2.attn_v.bias").dims = {256};
  EXPECT_THAT(error_of(parts),
              HasSubstr("tensor 'blk.2.attn_v.bias': expected [n_head_kv * head_dim_v] = [64], found [256]"));
}

TEST(ModelConfig, Qwen3RequiresItsHeadNormsOfHeadDim) {
  ModelParts parts = tiny_parts(ModelArch::Qwen3);
  ASSERT_TRUE(read_parts(parts).ok());
  ModelParts wide = parts;
  wide.tensor("blk.1.attn_q_norm.weight").dims = {256};
  EXPECT_THAT(error_of(wide), HasSubstr("tensor 'blk.1.attn_q_norm.weight': expected [head_dim] = [32], found [256]"));
  parts.erase_tensors([](const std::string& name) { return name == "blk.3.attn_k_norm.weight"; });
  EXPECT_THAT(error_of(parts), HasSubstr("missing tensor 'blk.3.attn_k_norm.weight'"));
}

TEST(ModelConfig, Qwen3RejectsQwen2Biases) {
  ModelParts parts = tiny_parts(ModelArch::Qwen3);
  parts.tensors.push_back({"blk.0.attn_q.bias", {256}, GgmlType::F32});
  EXPECT_THAT(error_of(parts), HasSubstr("unexpected tensor 'blk.0.attn_q.bias' for architecture qwen3"));
}

TEST(ModelConfig, Qwen3MoeReadsItsExpertsAndTheirStackedTensors) {
  ModelParts parts = tiny_parts(ModelArch::Qwen3Moe);
  auto config = read_parts(parts);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->n_expert, 16u);
  EXPECT_EQ(config->n_expert_used, 4u);
  EXPECT_EQ(config->n_ff_exp, 128u);
  ModelParts flat = parts;
  flat.tensor("blk.2.ffn_up_exps.weight").dims = {256, 128};
  EXPECT_THAT(error_of(flat), HasSubstr("tensor 'blk.2.ffn_up_exps.weight': expected [n_embd, n_ff_exp, n_expert] = "
                                        "[256, 128, 16], found [256, 128]"));
  ModelParts dense = parts;
  dense.erase_key("qwen3moe.expert_count");
  EXPECT_THAT(error_of(dense), HasSubstr("missing key 'qwen3moe.expert_count' (a qwen3moe model has experts)"));
  parts.set("qwen3moe.expert_used_count", GgufValue{uint32_t{17}});
  EXPECT_THAT(error_of(parts),
              HasSubstr("qwen3moe.expert_used_count = 17: must be between 1 and qwen3moe.expert_count = 16"));
}

// gpt-oss: the even layers slide, rope is YaRN, every projection and expert has a bias and each head a sink.
TEST(ModelConfig, GptOssReadsItsSlidingLayersSinksAndBiases) {
  ModelParts parts = tiny_parts(ModelArch::GptOss);
  auto config = read_parts(parts);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->n_expert, 16u);
  EXPECT_EQ(config->n_expert_used, 4u);
  EXPECT_EQ(config->sliding_window, 32u);
  EXPECT_TRUE(config->is_sliding_layer(0));
  EXPECT_FALSE(config->is_sliding_layer(1));
  EXPECT_TRUE(config->is_sliding_layer(2));
  EXPECT_EQ(config->rope_scaling_type, "yarn");
  EXPECT_EQ(config->rope_scaling_orig_ctx, 4096u);
  EXPECT_TRUE(config->expert_weights_norm());
  EXPECT_EQ(rope_style(ModelArch::GptOss), RopeStyle::Neox);
  for (const char* name : {"blk.1.attn_sinks.weight", "blk.1.attn_output.bias", "blk.1.ffn_gate_inp.bias",
                           "blk.1.ffn_down_exps.bias", "blk.1.post_attention_norm.weight"}) {
    ModelParts missing = parts;
    missing.erase_tensors([&](const std::string& tensor) { return tensor == name; });
    EXPECT_THAT(error_of(missing), HasSubstr(fmt::format("missing tensor '{}'", name)));
  }
  parts.tensor("blk.0.attn_sinks.weight").dims = {4};
  EXPECT_THAT(error_of(parts), HasSubstr("tensor 'blk.0.attn_sinks.weight': expected [n_head] = [8], found [4]"));
  ModelParts no_window = tiny_parts(ModelArch::GptOss);
  no_window.erase_key("gpt-oss.attention.sliding_window");
  EXPECT_THAT(error_of(no_window), HasSubstr("missing key 'gpt-oss.attention.sliding_window'"));
}

// gemma2: every other layer slides, attention scores and logits are soft-capped (50 and 30 when the file does not
// say, as llama.cpp), queries scale by the head (the 27B by n_embd / n_head); gemma3's norms without the q/k ones.
TEST(ModelConfig, Gemma2ReadsItsSoftCapsAndSlidingLayers) {
  ModelParts parts = tiny_parts(ModelArch::Gemma2);
  auto config = read_parts(parts);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->sliding_window, 32u);
  EXPECT_TRUE(config->is_sliding_layer(0));
  EXPECT_FALSE(config->is_sliding_layer(1));
  EXPECT_TRUE(config->is_sliding_layer(2));
  EXPECT_EQ(config->attn_logit_softcap, 2.0f);  // the tiny preset's, low enough to matter
  EXPECT_EQ(config->final_logit_softcap, 1.0f);
  EXPECT_FLOAT_EQ(config->attention_score_scale(), 1.0f / std::sqrt(32.0f));
  EXPECT_EQ(config->rope_freq_base_swa, 0.0f);
  EXPECT_TRUE(config->tied_output);
  EXPECT_EQ(rope_style(ModelArch::Gemma2), RopeStyle::Neox);

  ModelParts defaults = parts;
  for (const char* key :
       {"gemma2.attn_logit_softcapping", "gemma2.final_logit_softcapping", "gemma2.attention.sliding_window"}) {
    defaults.erase_key(key);
  }
  auto published = read_parts(defaults);
  ASSERT_TRUE(published.ok()) << published.error().message;
  EXPECT_EQ(published->attn_logit_softcap, 50.0f);
  EXPECT_EQ(published->final_logit_softcap, 30.0f);
  EXPECT_EQ(published->sliding_window, 4096u);

  ModelParts swa_base = parts;
  swa_base.set("gemma2.rope.freq_base_swa", GgufValue{1000.0f});
  EXPECT_EQ(read_parts(swa_base)->rope_freq_base_swa, 1000.0f);
  ModelParts negative = parts;
  negative.set("gemma2.attn_logit_softcapping", GgufValue{-1.0f});
  EXPECT_THAT(error_of(negative), HasSubstr("gemma2.attn_logit_softcapping = -1: must be at least 0 and finite"));
  ModelParts head_norms = parts;
  head_norms.tensors.push_back({"blk.0.attn_q_norm.weight", {32}, GgmlType::F32});
  EXPECT_THAT(error_of(head_norms), HasSubstr("unexpected tensor 'blk.0.attn_q_norm.weight' for architecture gemma2"));
  ModelParts no_post_norm = parts;
  no_post_norm.erase_tensors([](const std::string& name) { return name == "blk.2.post_ffw_norm.weight"; });
  EXPECT_THAT(error_of(no_post_norm), HasSubstr("missing tensor 'blk.2.post_ffw_norm.weight'"));
}

// phi3: q/k/v in one attn_qkv, gate and up in one ffn_up twice n_ff long, and LongRoPE's two factor tensors.
TEST(ModelConfig, Phi3ReadsFusedMatricesAndLongRopeFactors) {
  ModelParts parts = tiny_parts(ModelArch::Phi3);
  auto config = read_parts(parts);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_TRUE(config->has_longrope_factors);
  EXPECT_EQ(config->n_rot, 24u);  // 3/4 of the 32-wide heads, as Phi-4-mini rotates 96 of 128
  EXPECT_EQ(config->rope_scaling_orig_ctx, 256u);
  EXPECT_NEAR(config->rope_scaling_attn_factor, std::sqrt(1 + std::log(2048.0 / 256) / std::log(256.0)), 1e-6);
  EXPECT_EQ(config->rope_scaling_type, "none");
  EXPECT_EQ(config->sliding_window, 0u);
  EXPECT_EQ(rope_style(ModelArch::Phi3), RopeStyle::Neox);

  ModelParts plain = parts;  // Phi-3-mini-4k and Phi-4 have no factors
  plain.erase_tensors([](const std::string& name) { return name.starts_with("rope_factors_"); });
  auto no_factors = read_parts(plain);
  ASSERT_TRUE(no_factors.ok()) << no_factors.error().message;
  EXPECT_FALSE(no_factors->has_longrope_factors);

  ModelParts one_factor = parts;
  one_factor.erase_tensors([](const std::string& name) { return name == "rope_factors_short.weight"; });
  EXPECT_THAT(error_of(one_factor), HasSubstr("missing tensor 'rope_factors_short.weight'"));
  ModelParts short_qkv = parts;
  short_qkv.tensor("blk.1.attn_qkv.weight").dims = {256, 256};
  EXPECT_THAT(error_of(short_qkv),
              HasSubstr("tensor 'blk.1.attn_qkv.weight': expected [n_embd, n_head * head_dim + 2 * n_head_kv * "
                        "head_dim] = [256, 384], found [256, 256]"));
  ModelParts half_up = parts;
  half_up.tensor("blk.0.ffn_up.weight").dims = {256, 512};
  EXPECT_THAT(error_of(half_up),
              HasSubstr("tensor 'blk.0.ffn_up.weight': expected [n_embd, 2 * n_ff] = [256, 1024], found [256, 512]"));
  ModelParts split = parts;  // the llama layout is not a phi3 file
  split.tensors.push_back({"blk.0.attn_q.weight", {256, 256}, GgmlType::F32});
  EXPECT_THAT(error_of(split), HasSubstr("unexpected tensor 'blk.0.attn_q.weight' for architecture phi3"));
  ModelParts experts = parts;
  experts.set("phi3.expert_count", u32(16));
  EXPECT_THAT(error_of(experts), HasSubstr("phi3.expert_count = 16: mixture-of-experts phi3 models are not supported"));
}

TEST(ModelConfig, LlamaWithExpertsIsMixtralAndOtherArchitecturesHaveNone) {
  ModelParts dense = tiny_parts();
  dense.set("llama.expert_count", GgufValue{uint32_t{8}});
  dense.set("llama.expert_used_count", GgufValue{uint32_t{2}});
  // The dense feed-forward's tensors are not what a llama with experts has.
  EXPECT_THAT(error_of(dense), HasSubstr("unexpected tensor 'blk.0.ffn_gate.weight' for architecture llama"));
  ModelParts qwen2 = tiny_parts(ModelArch::Qwen2);
  qwen2.set("qwen2.expert_count", GgufValue{uint32_t{8}});
  EXPECT_THAT(error_of(qwen2), HasSubstr("qwen2.expert_count = 8: mixture-of-experts qwen2 models are not supported"));
}

TEST(ModelConfig, LlamaRejectsQwen2Biases) {
  ModelParts parts = tiny_parts();
  parts.tensors.push_back({"blk.0.attn_q.bias", {256}, GgmlType::F32});
  EXPECT_THAT(error_of(parts), HasSubstr("unexpected tensor 'blk.0.attn_q.bias' for architecture llama"));
}

TEST(ModelConfig, ArchitecturePrintsAsItsName) {
  EXPECT_EQ(fmt::format("{}", ModelArch::Qwen2), "qwen2");
  EXPECT_EQ(nlohmann::json(ModelArch::Llama), "llama");
  EXPECT_EQ(model_arch_from_name("qwen2"), ModelArch::Qwen2);
  EXPECT_EQ(model_arch_from_name("Llama"), std::nullopt);  // GGUF names are lower-case, compared exactly
}

TEST(ArchTensors, LayerIndexOfNames) {
  EXPECT_EQ(tensor_layer_index("blk.0.attn_q.weight"), 0u);
  EXPECT_EQ(tensor_layer_index("blk.31.ffn_down.weight"), 31u);
  EXPECT_EQ(tensor_layer_index("token_embd.weight"), std::nullopt);
  EXPECT_EQ(tensor_layer_index("blk.x.attn_q.weight"), std::nullopt);
  EXPECT_EQ(tensor_layer_index("blk.3"), std::nullopt);
}

TEST(ArchTensors, TinyLlamaTableMatchesTheFixtureTensorTable) {
  // The fixture was written by llama.cpp's converter: same names, shapes and order.
  auto file = GgufFile::open(test::fixture_path("models/fixture-llama-f32.gguf").string());
  ASSERT_TRUE(file.ok());
  auto config = read_model_config(*file);
  ASSERT_TRUE(config.ok()) << config.error().message;
  const auto expected = expected_tensors(*config);
  ASSERT_EQ(expected.size(), file->tensors().size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(expected[i].name, file->tensors()[i].name);
    EXPECT_EQ(expected[i].dims, file->tensors()[i].dims) << expected[i].name;
  }
}

TEST(ArchTensors, TinyQwen2TableMatchesTheFixtureTensorTable) {
  auto file = GgufFile::open(test::fixture_path("models/fixture-qwen2-f32.gguf").string());
  ASSERT_TRUE(file.ok());
  auto config = read_model_config(*file);
  ASSERT_TRUE(config.ok()) << config.error().message;
  const auto expected = expected_tensors(*config);
  ASSERT_EQ(expected.size(), file->tensors().size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(expected[i].name, file->tensors()[i].name);
    EXPECT_EQ(expected[i].dims, file->tensors()[i].dims) << expected[i].name;
  }
}

// Rope scaling metadata: {arch}.rope.scaling.type / factor / original_context_length / attn_factor.
TEST(ModelConfigRope, ReadsYarnScaling) {
  ModelParts parts = tiny_parts();
  parts.set("llama.rope.scaling.type", GgufValue{std::string("yarn")});
  parts.set("llama.rope.scaling.factor", GgufValue{4.0f});
  parts.set("llama.rope.scaling.original_context_length", u32(32));
  parts.set("llama.rope.scaling.attn_factor", GgufValue{0.75f});
  auto config = read_parts(parts);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->rope_scaling_type, "yarn");
  EXPECT_EQ(config->rope_scaling_factor, 4.0f);
  EXPECT_EQ(config->rope_scaling_orig_ctx, 32u);
  EXPECT_EQ(config->rope_scaling_attn_factor, 0.75f);
}

TEST(ModelConfigRope, AbsentScalingIsNoneAndAFactorAloneIsLinear) {
  auto plain = read_parts(tiny_parts());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->rope_scaling_type, "none");
  EXPECT_EQ(plain->rope_scaling_attn_factor, 1.0f);
  EXPECT_EQ(plain->rope_scaling_orig_ctx, 0u);
  // llama.cpp reads a missing rope.scaling.type as "linear".
  ModelParts parts = tiny_parts();
  parts.set("llama.rope.scaling.factor", GgufValue{2.0f});
  EXPECT_EQ(read_parts(parts)->rope_scaling_type, "linear");
  parts.set("llama.rope.scaling.type", GgufValue{std::string("none")});
  EXPECT_EQ(read_parts(parts)->rope_scaling_type, "none");
}

TEST(ModelConfigRope, RefusesLongrope) {
  ModelParts parts = tiny_parts();
  parts.set("llama.rope.scaling.type", GgufValue{std::string("longrope")});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.rope.scaling.type = 'longrope' is not supported"));
}

TEST(ModelConfigRope, BadScalingValuesNameTheKey) {
  ModelParts parts = tiny_parts();
  parts.set("llama.rope.scaling.attn_factor", GgufValue{-1.0f});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.rope.scaling.attn_factor = -1: must be positive and finite"));
  parts = tiny_parts();
  parts.set("llama.rope.scaling.attn_factor", GgufValue{std::string("big")});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.rope.scaling.attn_factor"));
  parts = tiny_parts();
  parts.set("llama.rope.scaling.original_context_length", GgufValue{1.5f});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.rope.scaling.original_context_length"));
  parts = tiny_parts();
  parts.set("llama.rope.scaling.factor", GgufValue{0.0f});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.rope.scaling.factor = 0: must be positive and finite"));
  parts = tiny_parts();
  parts.set("llama.rope.scaling.type", GgufValue{std::string("dynamic")});
  EXPECT_THAT(error_of(parts), HasSubstr("llama.rope.scaling.type = 'dynamic' is not supported (none, linear, yarn)"));
}

}  // namespace
}  // namespace infertune
