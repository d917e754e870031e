// The per-tensor type rules against files that llama.cpp's quantizer wrote (the shared fixtures) and
// against the tensor-type counts llama.cpp reports when it loads well-known published quantizations.
#include "engine/synth/quant_mix.h"

#include <gtest/gtest.h>

#include <map>

#include "engine/gguf/gguf_file.h"
#include "engine/model/arch_tensors.h"
#include "engine/synth/presets.h"
#include "test_support.h"

namespace infertune {
namespace {

struct FixtureCase {
  const char* file;
  const char* type;
};

class QuantMixFixture : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(QuantMixFixture, EveryTensorTypeMatchesLlamaCppsQuantizer) {
  const FixtureCase& c = GetParam();
  auto file = GgufFile::open(test::fixture_path(std::string("models/") + c.file).string());
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto config = read_model_config(*file);
  ASSERT_TRUE(config.ok()) << config.error().message;
  const auto file_type = file_type_from_name(c.type);
  ASSERT_TRUE(file_type.has_value());
  ASSERT_EQ(file->get_uint("general.file_type").value(), file_type->llama_ftype);
  for (const TensorSpec& spec : expected_tensors(*config)) {
    const GgufTensorInfo* tensor = file->find_tensor(spec.name);
    ASSERT_NE(tensor, nullptr) << spec.name;
    EXPECT_EQ(ggml_type_name(tensor_type_for(*file_type, spec, *config)), ggml_type_name(tensor->type)) << spec.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, QuantMixFixture,
    ::testing::Values(FixtureCase{"fixture-llama-Q4_K_M.gguf", "q4_k_m"},
                      FixtureCase{"fixture-llama-Q6_K.gguf", "q6_k"}, FixtureCase{"fixture-llama-Q4_0.gguf", "q4_0"},
                      FixtureCase{"fixture-llama-Q8_0.gguf", "q8_0"}, FixtureCase{"fixture-llama-F16.gguf", "f16"},
                      FixtureCase{"fixture-llama-BF16.gguf", "bf16"}, FixtureCase{"fixture-qwen2-Q8_0.gguf", "q8_0"}),
    [](const auto& info) {
      std::string name = info.param.file;
      name = name.substr(8, name.size() - 8 - 5);  // drop "fixture-" and ".gguf"
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

// Tensors per type for a preset's config, as llama.cpp's loader prints them ("type q4_K: 193 tensors").
std::map<std::string, int> type_counts(const char* preset, const char* type) {
  auto model = resolve_synth_model(std::nullopt, std::string(preset), {});
  EXPECT_TRUE(model.ok());
  const auto file_type = file_type_from_name(type);
  EXPECT_TRUE(file_type.has_value());
  std::map<std::string, int> counts;
  for (const TensorSpec& spec : expected_tensors(model->config)) {
    ++counts[std::string(ggml_type_name(tensor_type_for(*file_type, spec, model->config)))];
  }
  return counts;
}

TEST(QuantMix, Llama3_8B_Q4_K_M_MatchesThePublishedTypeCounts) {
  // llama.cpp loading Meta-Llama-3-8B Q4_K_M: f32 65, q4_K 193, q6_K 33.
  const std::map<std::string, int> expected = {{"f32", 65}, {"q4_K", 193}, {"q6_K", 33}};
  EXPECT_EQ(type_counts("llama-8b", "q4_k_m"), expected);
}

TEST(QuantMix, Llama32_1B_Q4_K_M_PutsTheTiedEmbeddingInQ6_K) {
  // Llama-3.2-1B Q4_K_M: q4_K 96, q6_K 17 (16 attn_v/ffn_down + the tied token_embd); f32 33 here,
  // as the synthetic model has no rope_freqs tensor.
  const std::map<std::string, int> expected = {{"f32", 33}, {"q4_K", 96}, {"q6_K", 17}};
  EXPECT_EQ(type_counts("llama-1b", "q4_k_m"), expected);
}

TEST(QuantMix, Qwen25_05B_Q4_K_M_FallsBackForRowsOf896) {
  // n_embd 896 is not a multiple of 256: q4_K -> q5_0, q6_K -> q8_0, and the tied embedding -> q8_0.
  // Qwen2.5-0.5B Q4_K_M as llama.cpp loads it: f32 121, q5_0 132, q8_0 13, q4_K 12, q6_K 12.
  const std::map<std::string, int> expected = {{"f32", 121}, {"q5_0", 132}, {"q8_0", 13}, {"q4_K", 12}, {"q6_K", 12}};
  EXPECT_EQ(type_counts("qwen2.5-0.5b", "q4_k_m"), expected);
}

TEST(QuantMix, Qwen3_30B_A3B_Q4_K_M_KeepsTheRouterF32AndMixesTheExpertsAsFfnDown) {
  // 48 blocks: f32 = 5 per block (attn/ffn norms, q/k norms, the router) + output_norm; q6_K = the output, and
  // attn_v and ffn_down_exps in the 24 use_more_bits layers each; every other matrix q4_K (as llama.cpp loads the
  // published Qwen3-30B-A3B Q4_K_M).
  const std::map<std::string, int> expected = {{"f32", 241}, {"q4_K", 289}, {"q6_K", 49}};
  EXPECT_EQ(type_counts("qwen3-30b-a3b", "q4_k_m"), expected);
}

TEST(QuantMix, Phi3MiniQ4_K_MGivesTheFusedQkvTheRulesOfAttnV) {
  // llama.cpp counts attn_qkv among the attn_v tensors: q6_K in the 16 use_more_bits layers of 32 (0-3, 28-31 and
  // every third between), as ffn_down; the output q6_K; token_embd, attn_output, the fused ffn_up and the other
  // layers' attn_qkv and ffn_down q4_K; the 65 norms f32.
  const std::map<std::string, int> expected = {{"f32", 65}, {"q4_K", 1 + 16 + 32 + 32 + 16}, {"q6_K", 16 + 16 + 1}};
  EXPECT_EQ(type_counts("phi-3-mini", "q4_k_m"), expected);
}

TEST(QuantMix, EightExpertsGetMixtralsAttentionBits) {
  auto model = resolve_synth_model(std::nullopt, std::string("mixtral-8x7b"), {});
  ASSERT_TRUE(model.ok()) << model.error().message;
  const auto q4_k_m = file_type_from_name("q4_k_m");
  std::map<std::string, std::string> types;  // role -> type, of block 5 (not a use_more_bits layer)
  for (const TensorSpec& spec : expected_tensors(model->config)) {
    if (spec.layer == 5)
      types[std::string(tensor_role_name(spec.role))] = ggml_type_name(tensor_type_for(*q4_k_m, spec, model->config));
  }
  EXPECT_EQ(types["attn_v"], "q8_0");
  EXPECT_EQ(types["attn_k"], "q8_0");
  EXPECT_EQ(types["attn_output"], "q5_K");
  EXPECT_EQ(types["attn_q"], "q4_K");
  EXPECT_EQ(types["ffn_gate_inp"], "f32");
  EXPECT_EQ(types["ffn_gate_exps"], "q4_K");
  EXPECT_EQ(types["ffn_down_exps"], "q4_K");
}

TEST(QuantMix, Qwen3_30B_A3B_Mxfp4MoePutsTheExpertsInMxfp4AndTheRestInQ8_0) {
  // llama.cpp's MXFP4_MOE: the three expert stacks of each of the 48 blocks mxfp4; attn_q/k/v/output of
  // every block, token_embd and output q8_0 (no per-role mix, no q6_K output); norms and the router f32.
  const std::map<std::string, int> expected = {{"f32", 241}, {"q8_0", 48 * 4 + 2}, {"mxfp4", 48 * 3}};
  EXPECT_EQ(type_counts("qwen3-30b-a3b", "mxfp4_moe"), expected);
}

TEST(QuantMix, Mxfp4MoeOnADenseModelIsAllQ8_0) {
  // No 3-D tensor: every weight q8_0, the tied embedding (the output) too.
  auto model = resolve_synth_model(std::string("llama"), std::string("tiny"), {});
  ASSERT_TRUE(model.ok());
  model->config.tied_output = true;
  const FileType mxfp4_moe = *file_type_from_name("MXFP4_MOE");
  EXPECT_EQ(mxfp4_moe.llama_ftype, 38u);
  EXPECT_EQ(mxfp4_moe.default_type, GgmlType::MXFP4);
  for (const TensorSpec& spec : expected_tensors(model->config)) {
    const GgmlType want = spec.dims.size() == 1 ? GgmlType::F32 : GgmlType::Q8_0;
    EXPECT_EQ(tensor_type_for(mxfp4_moe, spec, model->config), want) << spec.name;
  }
}

TEST(QuantMix, Mxfp4MoeKeepsMixtralsAttentionInQ8_0AndSharedExpertsInQ8_0) {
  // The MXFP4_MOE rule comes before the per-role ones in llama.cpp: Mixtral's attention is q8_0 like the
  // rest (not q5_K), the 2-D shared expert of qwen2moe q8_0, its expert stacks mxfp4.
  for (const char* preset : {"mixtral-8x7b", "qwen1.5-moe-a2.7b"}) {
    auto model = resolve_synth_model(std::nullopt, std::string(preset), {});
    ASSERT_TRUE(model.ok()) << model.error().message;
    const FileType mxfp4_moe = *file_type_from_name("mxfp4_moe");
    for (const TensorSpec& spec : expected_tensors(model->config)) {
      const bool vector = spec.dims.size() == 1 || spec.role == TensorRole::FfnGateInp;
      const GgmlType want = vector ? GgmlType::F32 : is_expert_role(spec.role) ? GgmlType::MXFP4 : GgmlType::Q8_0;
      EXPECT_EQ(tensor_type_for(mxfp4_moe, spec, model->config), want) << preset << " " << spec.name;
    }
  }
}

TEST(QuantMix, Mxfp4MoePureAndRowsThatDoNotFit) {
  // --pure: every weight mxfp4 (llama-quantize --pure MXFP4_MOE); a row of 172 fits no 32-value block: f16.
  auto model = resolve_synth_model(std::nullopt, std::string("tiny"), {});
  ASSERT_TRUE(model.ok());
  QuantMixOptions pure;
  pure.pure = true;
  const FileType mxfp4_moe = *file_type_from_name("mxfp4_moe");
  for (const TensorSpec& spec : expected_tensors(model->config)) {
    const GgmlType want = spec.dims.size() == 1 ? GgmlType::F32 : GgmlType::MXFP4;
    EXPECT_EQ(tensor_type_for(mxfp4_moe, spec, model->config, pure), want) << spec.name;
  }
  EXPECT_EQ(fallback_for_row_length(GgmlType::MXFP4, 172), GgmlType::F16);
  EXPECT_EQ(fallback_for_row_length(GgmlType::MXFP4, 2880), GgmlType::MXFP4);  // gpt-oss's n_embd
}

TEST(QuantMix, UseMoreBitsPicksFirstAndLastEighthAndEveryThirdLayer) {
  std::vector<int> picked;
  for (int i = 0; i < 16; ++i) {
    if (use_more_bits(i, 16)) picked.push_back(i);
  }
  EXPECT_EQ(picked, (std::vector<int>{0, 1, 4, 7, 10, 13, 14, 15}));
}

TEST(QuantMix, FallbacksForRowsThatDoNotFitTheBlock) {
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q4_K, 896), GgmlType::Q5_0);
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q5_K, 896), GgmlType::Q5_1);
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q6_K, 896), GgmlType::Q8_0);
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q2_K, 896), GgmlType::Q4_0);
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q3_K, 896), GgmlType::Q4_0);
  EXPECT_EQ(fallback_for_row_length(GgmlType::IQ4_XS, 896), GgmlType::IQ4_NL);
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q4_K, 1024), GgmlType::Q4_K);
  // 172 (stories260K's FFN) fits no 32-value block either: f16.
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q4_K, 172), GgmlType::F16);
  EXPECT_EQ(fallback_for_row_length(GgmlType::Q8_0, 172), GgmlType::F16);
}

TEST(QuantMix, NormsAndBiasesStayF32) {
  auto model = resolve_synth_model(std::string("qwen2"), std::string("tiny"), {});
  ASSERT_TRUE(model.ok());
  for (const FileType& ft : file_types()) {
    for (const TensorSpec& spec : expected_tensors(model->config)) {
      if (spec.dims.size() == 1) {
        EXPECT_EQ(tensor_type_for(ft, spec, model->config), GgmlType::F32) << spec.name;
      }
    }
  }
}

TEST(QuantMix, PureGivesEveryWeightTheBaseType) {
  auto model = resolve_synth_model(std::nullopt, std::string("tiny"), {});
  ASSERT_TRUE(model.ok());
  const FileType q2 = *file_type_from_name("q2_k");
  QuantMixOptions pure;
  pure.pure = true;
  for (const TensorSpec& spec : expected_tensors(model->config)) {
    const GgmlType expected = spec.dims.size() == 1 ? GgmlType::F32 : GgmlType::Q2_K;
    EXPECT_EQ(tensor_type_for(q2, spec, model->config, pure), expected) << spec.name;
  }
  // Without --pure, q2_k is a mix: attn_v q4_K (GQA 4), ffn_down and attn_output q3_K, output q6_K.
  const auto specs = expected_tensors(model->config);
  auto type_of = [&](std::string_view name) {
    for (const TensorSpec& spec : specs) {
      if (spec.name == name) return tensor_type_for(q2, spec, model->config);
    }
    return GgmlType::F32;
  };
  EXPECT_EQ(type_of("blk.0.attn_v.weight"), GgmlType::Q4_K);
  EXPECT_EQ(type_of("blk.0.ffn_down.weight"), GgmlType::Q3_K);
  EXPECT_EQ(type_of("blk.0.attn_output.weight"), GgmlType::Q3_K);
  EXPECT_EQ(type_of("blk.0.attn_q.weight"), GgmlType::Q2_K);
  EXPECT_EQ(type_of("output.weight"), GgmlType::Q6_K);
}

TEST(QuantMix, NamesMatchLlamaQuantizeCaseInsensitively) {
  EXPECT_EQ(file_type_from_name("Q4_K_M")->llama_ftype, 15u);
  EXPECT_EQ(file_type_from_name("q4_k_m")->llama_ftype, 15u);
  EXPECT_EQ(file_type_from_name("Q8_0")->llama_ftype, 7u);
  EXPECT_EQ(file_type_from_name("bf16")->llama_ftype, 32u);
  EXPECT_EQ(file_type_from_name("iq4_xs")->llama_ftype, 30u);
  EXPECT_EQ(file_type_from_name("q4_K")->default_type, GgmlType::Q4_K);
  EXPECT_FALSE(file_type_from_name("q4_K")->mixed);
  EXPECT_FALSE(file_type_from_name("q9_0").has_value());
  EXPECT_FALSE(file_type_from_name("").has_value());
}

}  // namespace
}  // namespace infertune
