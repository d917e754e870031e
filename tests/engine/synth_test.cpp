// `infertune synth`: presets and overrides, the synthetic vocabulary, weight statistics, determinism,
// every --type producing a file that reads back and validates, and the command's error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "engine/gguf/gguf_file.h"
#include "engine/synth/presets.h"
#include "engine/synth/synthesizer.h"
#include "engine/synth/synthetic_vocab.h"
#include "engine/synth/weight_generator.h"
#include "kernels/quant.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

SynthRequest tiny_request(const char* type, uint64_t seed = 1, const ShapeOverrides& overrides = {},
                          const char* arch = "llama") {
  auto model = resolve_synth_model(std::string(arch), std::string("tiny"), overrides);
  EXPECT_TRUE(model.ok()) << model.error().message;
  return SynthRequest{model->config, model->preset, *file_type_from_name(type), {}, seed, 2};
}

std::vector<std::byte> synthesize(const SynthRequest& request) {
  auto bytes = synthesize_in_memory(request);
  EXPECT_TRUE(bytes.ok()) << bytes.error().message;
  return bytes.ok() ? std::move(*bytes) : std::vector<std::byte>{};
}

std::vector<float> tensor_floats(const GgufFile& file, std::string_view name) {
  const GgufTensorInfo* t = file.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (!t) return {};
  std::vector<float> values(t->n_elements);
  EXPECT_TRUE(dequantize_row(t->type, file.tensor_data(*t), values).ok()) << name;
  return values;
}

double mean_of(const std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += x;
  return sum / v.size();
}

double stddev_of(const std::vector<float>& v) {
  const double m = mean_of(v);
  double sum = 0;
  for (float x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / v.size());
}

uint64_t param_count(const ModelConfig& config) {
  uint64_t n = 0;
  for (const TensorSpec& spec : expected_tensors(config)) {
    uint64_t elements = 1;
    for (uint64_t d : spec.dims) elements *= d;
    n += elements;
  }
  return n;
}

ModelConfig preset_config(const char* name) {
  auto model = resolve_synth_model(std::nullopt, std::string(name), {});
  EXPECT_TRUE(model.ok()) << model.error().message;
  return model.ok() ? model->config : ModelConfig{};
}

// Overrides by flag name, e.g. shape({{"dim", 250}}).
ShapeOverrides shape(std::initializer_list<std::pair<std::string_view, uint32_t>> flags) {
  ShapeOverrides o;
  for (const auto& [flag, value] : flags) {
    if (flag == "dim") o.n_embd = value;
    if (flag == "layers") o.n_layers = value;
    if (flag == "heads") o.n_head = value;
    if (flag == "kv-heads") o.n_head_kv = value;
    if (flag == "ffn") o.n_ff = value;
    if (flag == "vocab") o.n_vocab = value;
    if (flag == "ctx") o.n_ctx = value;
    if (flag == "experts") o.n_expert = value;
    if (flag == "experts-used") o.n_expert_used = value;
    if (flag == "expert-ffn") o.n_ff_exp = value;
  }
  return o;
}

// --- presets -------------------------------------------------------------------------------------

TEST(SynthPresets, ParameterCountsMatchThePublishedModels) {
  // Parameter counts of the Hugging Face checkpoints (embeddings, norms and biases included).
  EXPECT_EQ(param_count(preset_config("llama-1b")), 1'235'814'400u);
  EXPECT_EQ(param_count(preset_config("llama-3b")), 3'212'749'824u);
  EXPECT_EQ(param_count(preset_config("llama-8b")), 8'030'261'248u);
  EXPECT_EQ(param_count(preset_config("qwen2.5-0.5b")), 494'032'768u);
  EXPECT_EQ(param_count(preset_config("qwen2.5-1.5b")), 1'543'714'304u);
  EXPECT_EQ(param_count(preset_config("qwen2.5-7b")), 7'615'616'512u);
}

TEST(SynthPresets, ShapesOfTheLargerPresets) {
  const ModelConfig l1 = preset_config("llama-1b");
  EXPECT_EQ(l1.arch, ModelArch::Llama);
  EXPECT_EQ(l1.head_dim, 64u);
  EXPECT_EQ(l1.k_dim(), 512u);
  EXPECT_TRUE(l1.tied_output);
  EXPECT_FLOAT_EQ(l1.rope_freq_base, 500000.0f);
  EXPECT_FLOAT_EQ(l1.rms_eps, 1e-5f);
  EXPECT_EQ(expected_tensors(l1).size(), 1u + 16 * 9 + 1);  // no output.weight

  const ModelConfig l8 = preset_config("llama-8b");
  EXPECT_FALSE(l8.tied_output);
  EXPECT_EQ(l8.head_dim, 128u);
  const auto l8_tensors = expected_tensors(l8);
  EXPECT_EQ(l8_tensors.back().name, "output.weight");
  EXPECT_EQ(l8_tensors.back().dims, (std::vector<uint64_t>{4096, 128256}));
  EXPECT_EQ(l8_tensors[3].name, "blk.0.attn_k.weight");
  EXPECT_EQ(l8_tensors[3].dims, (std::vector<uint64_t>{4096, 1024}));

  const ModelConfig q05 = preset_config("qwen2.5-0.5b");
  EXPECT_EQ(q05.arch, ModelArch::Qwen2);
  EXPECT_EQ(q05.head_dim, 64u);
  EXPECT_EQ(q05.n_gqa(), 7u);
  EXPECT_FLOAT_EQ(q05.rope_freq_base, 1e6f);
  EXPECT_FLOAT_EQ(q05.rms_eps, 1e-6f);
  EXPECT_EQ(expected_tensors(q05).size(), 290u);  // the real Qwen2.5-0.5B GGUF has 290 tensors

  const ModelConfig q7 = preset_config("qwen2.5-7b");
  EXPECT_EQ(q7.n_vocab, 152064u);
  EXPECT_FALSE(q7.tied_output);

  // Qwen3-0.6B: heads 128 wide where n_embd / n_head is 64, so the query projection is wider than n_embd.
  const ModelConfig q3 = preset_config("qwen3-0.6b");
  EXPECT_EQ(q3.arch, ModelArch::Qwen3);
  EXPECT_EQ(q3.head_dim, 128u);
  EXPECT_TRUE(q3.tied_output);
  const auto q3_tensors = expected_tensors(q3);
  EXPECT_EQ(q3_tensors.size(), 2u + 28u * 11u);  // token_embd, output_norm, 11 per block; no biases
  auto named = [&](std::string_view name) {
    return std::find_if(q3_tensors.begin(), q3_tensors.end(), [&](const auto& t) { return t.name == name; });
  };
  ASSERT_NE(named("blk.0.attn_q.weight"), q3_tensors.end());
  EXPECT_EQ(named("blk.0.attn_q.weight")->dims, (std::vector<uint64_t>{1024, 2048}));
  ASSERT_NE(named("blk.27.attn_k_norm.weight"), q3_tensors.end());
  EXPECT_EQ(named("blk.27.attn_k_norm.weight")->dims, (std::vector<uint64_t>{128}));
  EXPECT_EQ(named("blk.0.attn_q.bias"), q3_tensors.end());
  EXPECT_FALSE(preset_config("qwen3-8b").tied_output);
}

TEST(SynthPresets, ExpertsMakeAMixtureOfExperts) {
  const ModelConfig a3b = preset_config("qwen3-30b-a3b");
  EXPECT_EQ(a3b.arch, ModelArch::Qwen3Moe);
  EXPECT_EQ(a3b.n_expert, 128u);
  EXPECT_EQ(a3b.n_expert_used, 8u);
  EXPECT_EQ(a3b.n_ff_exp, 768u);
  EXPECT_EQ(expected_tensors(a3b).size(), 579u);  // the published Qwen3-30B-A3B GGUF has 579 tensors
  EXPECT_EQ(param_count(a3b), 30'532'122'624u);   // and its checkpoint 30.5 B parameters

  // gpt-oss-20b: 64-wide heads that n_embd / n_head (45) is not, sinks and biases; the published GGUF has 459
  // tensors and the checkpoint 20.9 B parameters. --layers keeps the preset's head size.
  const ModelConfig oss = preset_config("gpt-oss-20b");
  EXPECT_EQ(oss.arch, ModelArch::GptOss);
  EXPECT_EQ(oss.head_dim, 64u);
  EXPECT_EQ(oss.sliding_window, 128u);
  EXPECT_EQ(expected_tensors(oss).size(), 459u);
  EXPECT_GT(param_count(oss), 20'800'000'000u);
  EXPECT_LT(param_count(oss), 21'000'000'000u);
  auto cut = resolve_synth_model(std::nullopt, std::string("gpt-oss-20b"), shape({{"layers", 4}}));
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_EQ(cut->config.head_dim, 64u);

  auto mixtral = resolve_synth_model(std::string("llama"), std::string("tiny"), shape({{"experts", 8}}));
  ASSERT_TRUE(mixtral.ok()) << mixtral.error().message;
  EXPECT_EQ(mixtral->config.n_expert_used, 2u);  // Mixtral's, when not given
  EXPECT_EQ(mixtral->config.n_ff_exp, mixtral->config.n_ff);
  auto dense = resolve_synth_model(std::nullopt, std::string("mixtral-8x7b"), shape({{"experts", 0}}));
  ASSERT_TRUE(dense.ok()) << dense.error().message;
  EXPECT_FALSE(dense->config.is_moe());

  auto error = [](std::string arch, const ShapeOverrides& o) {
    auto model = resolve_synth_model(arch, std::string("tiny"), o);
    return model.ok() ? std::string() : model.error().message;
  };
  EXPECT_THAT(error("qwen2", shape({{"experts", 4}})), HasSubstr("--experts: qwen2 has no mixture-of-experts form"));
  EXPECT_THAT(error("qwen3moe", shape({{"experts", 0}})), HasSubstr("--experts 0: a qwen3moe model has experts"));
  EXPECT_THAT(error("qwen3moe", shape({{"experts-used", 17}})),
              HasSubstr("--experts-used 17 must be between 1 and --experts 16 (the preset's)"));
  EXPECT_THAT(error("llama", shape({{"experts", 8}, {"expert-ffn", 64}})),
              HasSubstr("--expert-ffn: a llama expert is as wide as --ffn"));
}

// Gemma 2: the checkpoints' parameter counts as published (2.61 B, 9.24 B, 27.2 B), every other layer sliding over
// 4096, the soft caps, and the 27B's query scale by n_embd / n_head (144), not its 128-wide heads.
TEST(SynthPresets, Gemma2Shapes) {
  const ModelConfig small = preset_config("gemma2-2b");
  EXPECT_EQ(small.arch, ModelArch::Gemma2);
  EXPECT_EQ(param_count(small), 2'614'341'888u);
  EXPECT_EQ(small.sliding_window, 4096u);
  EXPECT_EQ(small.sliding_window_period, 2u);
  EXPECT_EQ(small.attn_logit_softcap, 50.0f);
  EXPECT_EQ(small.final_logit_softcap, 30.0f);
  EXPECT_FLOAT_EQ(small.attention_score_scale(), 1.0f / 16);
  EXPECT_EQ(param_count(preset_config("gemma2-9b")), 9'241'705'984u);
  const ModelConfig large = preset_config("gemma2-27b");
  EXPECT_EQ(param_count(large), 27'227'128'320u);
  EXPECT_EQ(large.head_dim, 128u);
  EXPECT_FLOAT_EQ(large.attention_score_scale(), 1.0f / 12);
}

// The phi3 family: checkpoints' parameter counts as published (Phi-3-mini 3.82 B, Phi-4 14.66 B, Phi-4-mini 3.84 B),
// LongRoPE where the model stretches its context, and Phi-4-mini's partly rotated heads.
TEST(SynthPresets, Phi3FamilyShapes) {
  const ModelConfig mini = preset_config("phi-3-mini");
  EXPECT_EQ(mini.arch, ModelArch::Phi3);
  EXPECT_FALSE(mini.has_longrope_factors);
  EXPECT_EQ(param_count(mini), 3'821'079'552u);
  EXPECT_EQ(expected_tensors(mini).size(), 195u);  // 6 per block, token_embd, output_norm, output
  const ModelConfig mini35 = preset_config("phi-3.5-mini");
  EXPECT_TRUE(mini35.has_longrope_factors);
  EXPECT_EQ(mini35.rope_scaling_orig_ctx, 4096u);
  EXPECT_NEAR(mini35.rope_scaling_attn_factor, 1.1902381, 1e-6);  // the attn_factor of the published GGUF
  EXPECT_EQ(param_count(preset_config("phi-4")), 14'659'507'200u);
  const ModelConfig mini4 = preset_config("phi-4-mini");
  EXPECT_TRUE(mini4.tied_output);
  EXPECT_EQ(mini4.head_dim, 128u);
  EXPECT_EQ(mini4.n_rot, 96u);
  EXPECT_EQ(param_count(mini4), 3'836'021'760u + 2 * 48);  // and the GGUF's two LongRoPE factor tensors
}

TEST(SynthPresets, OverridesReplaceThePresetValues) {
  const ShapeOverrides overrides = shape(
      {{"dim", 512}, {"layers", 2}, {"heads", 4}, {"kv-heads", 1}, {"ffn", 1024}, {"vocab", 1000}, {"ctx", 4096}});
  auto model = resolve_synth_model(std::nullopt, std::string("llama-1b"), overrides);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->preset, "llama-1b");
  EXPECT_EQ(model->config.n_embd, 512u);
  EXPECT_EQ(model->config.n_layers, 2u);
  EXPECT_EQ(model->config.n_head, 4u);
  EXPECT_EQ(model->config.n_head_kv, 1u);
  EXPECT_EQ(model->config.head_dim, 128u);  // recomputed from the new dim and heads
  EXPECT_EQ(model->config.n_rot, 128u);
  EXPECT_EQ(model->config.n_ff, 1024u);
  EXPECT_EQ(model->config.n_vocab, 1000u);
  EXPECT_EQ(model->config.n_ctx_train, 4096u);
  EXPECT_TRUE(model->config.tied_output);  // kept from the preset
}

TEST(SynthPresets, PresetImpliesItsArchitecture) {
  auto qwen = resolve_synth_model(std::nullopt, std::string("qwen2.5-1.5b"), {});
  ASSERT_TRUE(qwen.ok());
  EXPECT_EQ(qwen->config.arch, ModelArch::Qwen2);
  auto mismatch = resolve_synth_model(std::string("llama"), std::string("qwen2.5-1.5b"), {});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.error().message, HasSubstr("--preset qwen2.5-1.5b is a qwen2 model, but --arch llama"));
  // tiny (the fixtures' shape) takes either architecture.
  auto tiny_qwen = resolve_synth_model(std::string("qwen2"), std::string("tiny"), {});
  ASSERT_TRUE(tiny_qwen.ok());
  EXPECT_EQ(tiny_qwen->config.arch, ModelArch::Qwen2);
  auto arch_only = resolve_synth_model(std::string("qwen2"), std::nullopt, {});
  ASSERT_TRUE(arch_only.ok());
  EXPECT_EQ(arch_only->preset, "tiny");
}

TEST(SynthPresets, BadValuesGiveClearErrors) {
  auto error = [](std::optional<std::string> arch, std::optional<std::string> preset,
                  const ShapeOverrides& overrides = {}) {
    auto model = resolve_synth_model(arch, preset, overrides);
    EXPECT_FALSE(model.ok());
    return model.ok() ? std::string() : model.error().message;
  };
  EXPECT_THAT(error(std::nullopt, "llama-70b"), HasSubstr("--preset 'llama-70b' is unknown (presets: tiny, llama-1b"));
  EXPECT_THAT(error("gpt2", "tiny"), HasSubstr("--arch 'gpt2' is not supported (supported: llama, qwen2, gemma2, "
                                               "gemma3, qwen3, qwen3moe, qwen2moe, gpt-oss, "
                                               "phi3)"));
  EXPECT_THAT(error(std::nullopt, std::nullopt), HasSubstr("give --preset"));
  EXPECT_THAT(error(std::nullopt, "tiny", shape({{"dim", 250}})),
              HasSubstr("--dim 250 is not divisible by --heads 8 (the preset's)"));
  EXPECT_THAT(error(std::nullopt, "tiny", shape({{"heads", 5}})),
              HasSubstr("--kv-heads 2 (the preset's) does not divide --heads 5"));
  EXPECT_THAT(error(std::nullopt, "tiny", shape({{"heads", 6}, {"kv-heads", 3}})),
              HasSubstr("--dim 256 (the preset's) is not divisible by --heads 6"));
  EXPECT_THAT(error(std::nullopt, "tiny", shape({{"kv-heads", 3}})), HasSubstr("--kv-heads 3 does not divide"));
  EXPECT_THAT(error(std::nullopt, "tiny", shape({{"layers", 0}})), HasSubstr("--layers 0: must be at least 1"));
  EXPECT_THAT(error(std::nullopt, "tiny", shape({{"vocab", 100}})),
              HasSubstr("--vocab 100: the synthetic vocabulary needs at "
                        "least 259 tokens"));
  EXPECT_THAT(error(std::nullopt, "tiny", shape({{"dim", 264}, {"heads", 8}, {"kv-heads", 8}})),
              HasSubstr("odd head size 33"));
}

// --- vocabulary ----------------------------------------------------------------------------------

TEST(SyntheticVocab, SpecialAndByteTokensComeFirst) {
  auto vocab = make_synthetic_vocab(512);
  ASSERT_TRUE(vocab.ok());
  ASSERT_EQ(vocab->tokens.size(), 512u);
  ASSERT_EQ(vocab->scores.size(), 512u);
  ASSERT_EQ(vocab->token_types.size(), 512u);
  EXPECT_EQ(vocab->tokens[0], "<unk>");
  EXPECT_EQ(vocab->tokens[1], "<s>");
  EXPECT_EQ(vocab->tokens[2], "</s>");
  EXPECT_EQ(vocab->token_types[0], 2);
  EXPECT_EQ(vocab->token_types[1], 3);
  EXPECT_EQ(vocab->token_types[2], 3);
  for (int byte = 0; byte < 256; ++byte) {
    char expected[8];
    std::snprintf(expected, sizeof expected, "<0x%02X>", byte);
    EXPECT_EQ(vocab->tokens[3 + byte], expected);
    EXPECT_EQ(vocab->token_types[3 + byte], 6);
  }
  EXPECT_EQ(vocab->tokens[259], "\xE2\x96\x81");  // "▁"
  for (size_t i = 259; i < 512; ++i) {
    EXPECT_EQ(vocab->token_types[i], 1);
    if (i > 259) {
      EXPECT_LT(vocab->scores[i], vocab->scores[i - 1]);
    }
  }
}

TEST(SyntheticVocab, LargeVocabularyIsUniqueDeterministicAndPrefixClosed) {
  auto vocab = make_synthetic_vocab(152064);
  ASSERT_TRUE(vocab.ok());
  ASSERT_EQ(vocab->tokens.size(), 152064u);
  std::unordered_set<std::string> seen(vocab->tokens.begin(), vocab->tokens.end());
  EXPECT_EQ(seen.size(), vocab->tokens.size());
  EXPECT_TRUE(seen.count("\xE2\x96\x81the"));
  EXPECT_TRUE(seen.count("ing"));
  // Every filler piece longer than one character is a shorter piece plus one character, so that
  // SentencePiece's pairwise merges can build it.
  for (size_t i = kSynthMinVocab; i < vocab->tokens.size(); ++i) {
    const std::string& piece = vocab->tokens[i];
    size_t last = piece.size() - 1;
    while (last > 0 && (static_cast<unsigned char>(piece[last]) & 0xC0) == 0x80) --last;  // UTF-8 start
    if (last == 0) continue;
    EXPECT_TRUE(seen.count(piece.substr(0, last))) << "no prefix for '" << piece << "'";
  }
  auto again = make_synthetic_vocab(152064);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->tokens, vocab->tokens);
}

// A family's chat markers replace the last pieces (added last, so no piece needs them as a prefix); a synthesized
// phi3 carries Phi-3's, which llama.cpp needs to load a file named phi-3.
TEST(SyntheticVocab, ControlTokensTakeTheLastPieces) {
  auto vocab = make_synthetic_vocab(512);
  ASSERT_TRUE(vocab.ok());
  const std::vector<std::string> before = vocab->tokens;
  const std::array<std::string_view, 2> markers = {"<|user|>", "<|end|>"};
  ASSERT_TRUE(add_control_tokens(*vocab, markers).ok());
  EXPECT_EQ(vocab->tokens[510], "<|user|>");
  EXPECT_EQ(vocab->tokens[511], "<|end|>");
  EXPECT_EQ(vocab->token_types[511], 3);
  EXPECT_EQ(vocab->scores[511], 0.0f);
  EXPECT_TRUE(std::equal(before.begin(), before.begin() + 510, vocab->tokens.begin()));
  auto tight = make_synthetic_vocab(kSynthMinVocab + 1);
  ASSERT_TRUE(tight.ok());
  EXPECT_THAT(add_control_tokens(*tight, markers).error().message, HasSubstr("has no room for 2 control tokens"));

  auto phi3 = resolve_synth_model(std::string("phi3"), std::string("tiny"), {});
  ASSERT_TRUE(phi3.ok());
  auto plan = plan_synthetic_model({phi3->config, "tiny", *file_type_from_name("f32"), {}, 1, 1});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const GgufValue* tokens = nullptr;
  for (const GgufKeyValue& kv : plan->writer.metadata()) {
    if (kv.key == "tokenizer.ggml.tokens") tokens = &kv.value;
  }
  ASSERT_NE(tokens, nullptr);
  const auto& texts = std::get<std::vector<std::string>>(std::get<GgufArray>(tokens->storage).elements);
  for (std::string_view marker : {"<|endoftext|>", "<|assistant|>", "<|system|>", "<|end|>", "<|user|>"}) {
    EXPECT_NE(std::find(texts.begin(), texts.end(), marker), texts.end()) << marker;
  }
}

TEST(SyntheticVocab, RefusesTooSmallAVocabulary) {
  auto vocab = make_synthetic_vocab(258);
  ASSERT_FALSE(vocab.ok());
  EXPECT_THAT(vocab.error().message, HasSubstr("at least 259 tokens"));
  EXPECT_TRUE(make_synthetic_vocab(259).ok());
}

// --- weights -------------------------------------------------------------------------------------

TEST(WeightGenerator, RowsAreReproducibleAndIndependentOfOrder) {
  const WeightGenerator gen(7, "blk.0.attn_q.weight", {0.0f, 1.0f});
  std::vector<float> a(256), b(256), c(256);
  gen.fill_row(5, a);
  gen.fill_row(6, c);
  gen.fill_row(5, b);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const WeightGenerator other_name(7, "blk.0.attn_k.weight", {0.0f, 1.0f});
  other_name.fill_row(5, c);
  EXPECT_NE(a, c);
  const WeightGenerator other_seed(8, "blk.0.attn_q.weight", {0.0f, 1.0f});
  other_seed.fill_row(5, c);
  EXPECT_NE(a, c);
}

TEST(WeightGenerator, ValuesHaveTheRequestedMeanAndSpread) {
  const WeightGenerator gen(1, "t", {0.5f, 0.1f});
  std::vector<float> values(1 << 20);
  gen.fill_row(0, values);
  EXPECT_NEAR(mean_of(values), 0.5, 0.001);
  EXPECT_NEAR(stddev_of(values), 0.1, 0.001);
  float lo = values[0], hi = values[0];
  for (float v : values) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_GT(lo, 0.5 - 3.5 * 0.1);  // bounded: a sum of four uniforms stops at 2 * sqrt(3) sigma
  EXPECT_LT(hi, 0.5 + 3.5 * 0.1);
}

// --- whole files ---------------------------------------------------------------------------------

TEST(Synthesizer, SameSeedGivesIdenticalBytesDifferentSeedDoesNot) {
  const auto a = synthesize(tiny_request("q4_k_m", 1));
  const auto b = synthesize(tiny_request("q4_k_m", 1));
  const auto c = synthesize(tiny_request("q4_k_m", 2));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

TEST(Synthesizer, ThreadCountDoesNotChangeTheFile) {
  // A vocabulary of 8192 makes token_embd 8 MiB in f32: several chunks, so both threads take part.
  SynthRequest one = tiny_request("f32", 3, shape({{"vocab", 8192}}));
  one.threads = 1;
  SynthRequest three = one;
  three.threads = 3;
  EXPECT_EQ(synthesize(one), synthesize(three));
}

TEST(Synthesizer, WeightsHaveSaneScales) {
  const auto bytes = synthesize(tiny_request("f32"));
  auto file = GgufFile::parse(bytes);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_NEAR(stddev_of(tensor_floats(*file, "token_embd.weight")), 0.02, 0.002);
  EXPECT_NEAR(mean_of(tensor_floats(*file, "blk.0.attn_norm.weight")), 1.0, 0.01);
  EXPECT_NEAR(stddev_of(tensor_floats(*file, "blk.0.attn_q.weight")), 1 / std::sqrt(256.0), 0.005);
  EXPECT_NEAR(stddev_of(tensor_floats(*file, "blk.0.ffn_down.weight")), 1 / std::sqrt(512.0 * 8), 0.002);
  EXPECT_NEAR(mean_of(tensor_floats(*file, "blk.0.ffn_gate.weight")), 0.0, 0.002);
}

TEST(Synthesizer, QuantizedFileHoldsTheSameWeightsAsTheF32One) {
  // The weights depend on (seed, tensor name, row) only, so a q8_0 / q4_k_m file is the f32 file
  // quantized: the decoded values are within each type's usual error of the f32 values.
  const auto f32_bytes = synthesize(tiny_request("f32"));
  auto f32_file = GgufFile::parse(f32_bytes);
  ASSERT_TRUE(f32_file.ok());
  for (auto [type, tolerance] : {std::pair{"q8_0", 0.01}, std::pair{"q4_k_m", 0.12}}) {
    const auto bytes = synthesize(tiny_request(type));
    auto file = GgufFile::parse(bytes);
    ASSERT_TRUE(file.ok()) << file.error().message;
    for (const char* name : {"blk.1.attn_q.weight", "blk.3.ffn_down.weight", "output.weight"}) {
      const auto reference = tensor_floats(*f32_file, name);
      const auto decoded = tensor_floats(*file, name);
      ASSERT_EQ(reference.size(), decoded.size());
      double err = 0, norm = 0;
      for (size_t i = 0; i < reference.size(); ++i) {
        err += (reference[i] - decoded[i]) * (reference[i] - decoded[i]);
        norm += reference[i] * reference[i];
      }
      EXPECT_LT(std::sqrt(err / norm), tolerance) << type << " " << name;
    }
  }
}

class SynthEveryType : public ::testing::TestWithParam<FileType> {};

TEST_P(SynthEveryType, FileParsesValidatesAndHasTheMixTypes) {
  const FileType& ft = GetParam();
  for (const char* arch : {"llama", "qwen2"}) {
    const SynthRequest request = tiny_request(std::string(ft.name).c_str(), 1, {}, arch);
    const auto bytes = synthesize(request);
    auto file = GgufFile::parse(bytes);
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto config = read_model_config(*file);
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->file_type, ft.llama_ftype);
    EXPECT_EQ(config->n_vocab, 512u);
    EXPECT_EQ(config->arch, request.config.arch);
    for (const TensorSpec& spec : expected_tensors(*config)) {
      const GgufTensorInfo* t = file->find_tensor(spec.name);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->type, tensor_type_for(ft, spec, *config)) << spec.name;
    }
    // Every block decodes to finite values.
    for (const GgufTensorInfo& t : file->tensors()) {
      std::vector<float> values(t.n_elements);
      ASSERT_TRUE(dequantize_row(t.type, file->tensor_data(t), values).ok()) << t.name;
      for (float v : values) ASSERT_TRUE(std::isfinite(v)) << t.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, SynthEveryType, ::testing::ValuesIn(file_types().begin(), file_types().end()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Synthesizer, MetadataMirrorsTheFixtureKeys) {
  const auto bytes = synthesize(tiny_request("f32"));
  auto ours = GgufFile::parse(bytes);
  ASSERT_TRUE(ours.ok());
  auto fixture = GgufFile::open(test::fixture_path("models/fixture-llama-f32.gguf").string());
  ASSERT_TRUE(fixture.ok());
  for (const GgufKeyValue& kv : fixture->metadata()) {
    const GgufValue* value = ours->find(kv.key);
    ASSERT_NE(value, nullptr) << kv.key;
    EXPECT_EQ(value->type(), kv.value.type()) << kv.key;
    if (kv.key.starts_with("llama.") || kv.key.ends_with("_token_id") || kv.key == "general.file_type" ||
        kv.key == "tokenizer.ggml.model") {
      EXPECT_EQ(*value, kv.value) << kv.key;
    }
  }
}

// --- the command ---------------------------------------------------------------------------------

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

CommandResult run_infertune(const std::string& args) {
  const std::string command = test::infertune_binary() + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(SynthCommand, WritesAFileThatValidates) {
  const auto path = test::temp_dir() / "tiny.gguf";
  const CommandResult r = run_infertune("synth --preset tiny --type q8_0 --seed 5 -o " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto file = GgufFile::open(path.string());
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto config = read_model_config(*file);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->file_type, 7u);
  EXPECT_EQ(file->get_uint("infertune.synth.seed").value(), 5u);
  // The same bytes as the library call with the same request.
  SynthRequest request = tiny_request("q8_0", 5);
  EXPECT_EQ(test::read_file_bytes(path), synthesize(request));
}

TEST(SynthCommand, OverridesAndDefaultOutputName) {
  const auto dir = test::temp_dir();
  // The default name lands in the working directory; run from `dir` to find it there.
  const std::string command = "cd " + dir.string() + " && " + test::infertune_binary() +
                              " synth --preset llama-8b --type q4_0 --dim 128 --layers 2 --heads 4 --kv-heads 2"
                              " --ffn 256 --vocab 300 --ctx 1024 -t 1 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  auto file = GgufFile::open((dir / "llama-8b-q4_0.gguf").string());
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto config = read_model_config(*file);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->n_embd, 128u);
  EXPECT_EQ(config->n_layers, 2u);
  EXPECT_EQ(config->n_head, 4u);
  EXPECT_EQ(config->n_head_kv, 2u);
  EXPECT_EQ(config->n_ff, 256u);
  EXPECT_EQ(config->n_vocab, 300u);
  EXPECT_EQ(config->n_ctx_train, 1024u);
  EXPECT_FALSE(config->tied_output);
}

TEST(SynthCommand, BadFlagsGiveClearErrors) {
  const auto out = (test::temp_dir() / "x.gguf").string();
  CommandResult r = run_infertune("synth --preset nope -o " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("infertune synth: --preset 'nope' is unknown"));
  r = run_infertune("synth --preset tiny --type q9_k -o " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("--type 'q9_k' is unknown (types: f32, f16"));
  r = run_infertune("synth --preset tiny --dim 250 -o " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("--dim 250 is not divisible by --heads 8 (the preset's)"));
  r = run_infertune("synth --arch llama --preset qwen2.5-7b -o " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("is a qwen2 model, but --arch llama"));
  r = run_infertune("synth --preset tiny --dim abc -o " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("--dim"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace infertune
