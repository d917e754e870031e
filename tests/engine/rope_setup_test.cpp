// resolve_rope: the model's rope metadata under the --rope-* / --yarn-* overrides, resolved as llama.cpp
// does (which value wins, llama.cpp's defaults, "none" never scales); the flags parse into those
// overrides with llama.cpp's "not given" values; and on a real forward pass, YaRN from the flags on a file
// without scaling metadata computes exactly what the file with the metadata computes.
#include "engine/context/rope_setup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/run/rope_flags.h"
#include "forward_test_models.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

ModelConfig tiny_config(ModelArch arch = ModelArch::Llama) {
  ModelConfig c = find_synth_preset("tiny")->config;
  c.arch = arch;
  return c;
}

ModelConfig yarn_config(float factor, uint32_t orig_ctx) {
  ModelConfig c = tiny_config();
  c.rope_scaling_type = "yarn";
  c.rope_scaling_factor = factor;
  c.rope_scaling_orig_ctx = orig_ctx;
  return c;
}

TEST(RopeSetup, NoScalingIsPlainRope) {
  auto rope = resolve_rope(tiny_config(), {});
  ASSERT_TRUE(rope.ok()) << rope.error().message;
  EXPECT_EQ(rope->n_rot, 32u);
  EXPECT_EQ(rope->freq_base, 10000.0f);
  EXPECT_EQ(rope->freq_scale, 1.0f);
  EXPECT_EQ(rope->ext_factor, 0.0f);
  EXPECT_EQ(rope->attn_factor, 1.0f);
  EXPECT_EQ(rope->layout, RopeLayout::Interleaved);
  EXPECT_EQ(resolve_rope(tiny_config(ModelArch::Qwen2), {})->layout, RopeLayout::Neox);
}

TEST(RopeSetup, NoneNeverScalesEvenWithAFactor) {
  ModelConfig c = tiny_config();
  c.rope_scaling_factor = 4;  // rope.scaling.type = none and a factor: llama.cpp ignores the factor
  EXPECT_EQ(resolve_rope(c, {})->freq_scale, 1.0f);
  RopeOverrides o;
  o.scaling = RopeScaling::None;
  o.freq_scale = 0.5f;
  EXPECT_EQ(resolve_rope(c, {}, o)->freq_scale, 1.0f);
}

TEST(RopeSetup, LinearScalesByOneOverTheFactor) {
  ModelConfig c = tiny_config();
  c.rope_scaling_type = "linear";
  c.rope_scaling_factor = 4;
  auto rope = resolve_rope(c, {});
  EXPECT_EQ(rope->freq_scale, 0.25f);
  EXPECT_EQ(rope->ext_factor, 0.0f);
}

TEST(RopeSetup, YarnTakesLlamaCppsDefaults) {
  auto rope = resolve_rope(yarn_config(4, 32), {});
  ASSERT_TRUE(rope.ok()) << rope.error().message;
  EXPECT_EQ(rope->freq_scale, 0.25f);
  EXPECT_EQ(rope->ext_factor, 1.0f);
  EXPECT_EQ(rope->attn_factor, 1.0f);
  EXPECT_EQ(rope->n_ctx_orig, 32u);
  EXPECT_EQ(rope->beta_fast, 32.0f);
  EXPECT_EQ(rope->beta_slow, 1.0f);
  // Without original_context_length: the training context.
  EXPECT_EQ(resolve_rope(yarn_config(4, 0), {})->n_ctx_orig, 2048u);
}

TEST(RopeSetup, TheFilesAttnFactorMultipliesTheFlags) {
  ModelConfig c = yarn_config(4, 32);
  c.rope_scaling_attn_factor = 0.5f;
  EXPECT_EQ(resolve_rope(c, {})->attn_factor, 0.5f);
  RopeOverrides o;
  o.yarn_attn_factor = 3.0f;
  EXPECT_EQ(resolve_rope(c, {}, o)->attn_factor, 1.5f);
}

TEST(RopeSetup, OverridesReplaceTheFile) {
  RopeOverrides o;
  o.scaling = RopeScaling::Yarn;
  o.freq_base = 500000.0f;
  o.freq_scale = 0.125f;
  o.yarn_orig_ctx = 64;
  o.yarn_ext_factor = 0.5f;
  o.yarn_beta_fast = 16.0f;
  o.yarn_beta_slow = 2.0f;
  auto rope = resolve_rope(tiny_config(), {}, o);
  ASSERT_TRUE(rope.ok()) << rope.error().message;
  EXPECT_EQ(rope->freq_base, 500000.0f);
  EXPECT_EQ(rope->freq_scale, 0.125f);
  EXPECT_EQ(rope->n_ctx_orig, 64u);
  EXPECT_EQ(rope->ext_factor, 0.5f);
  EXPECT_EQ(rope->beta_fast, 16.0f);
  EXPECT_EQ(rope->beta_slow, 2.0f);
  // --rope-scaling yarn on a file with a factor of its own uses the file's factor.
  ModelConfig c = tiny_config();
  c.rope_scaling_type = "linear";
  c.rope_scaling_factor = 2;
  RopeOverrides yarn;
  yarn.scaling = RopeScaling::Yarn;
  EXPECT_EQ(resolve_rope(c, {}, yarn)->freq_scale, 0.5f);
  EXPECT_EQ(resolve_rope(c, {}, yarn)->ext_factor, 1.0f);
  // An explicit ext_factor turns the YaRN ramp on for linear scaling too, as in llama.cpp.
  RopeOverrides ext;
  ext.yarn_ext_factor = 1.0f;
  EXPECT_EQ(resolve_rope(c, {}, ext)->ext_factor, 1.0f);
}

TEST(RopeSetup, BadOverridesNameTheFlag) {
  const std::pair<const char*, RopeOverrides> cases[] = {
      {"--rope-freq-base -1: must be positive and finite", {.freq_base = -1.0f}},
      {"--rope-freq-scale inf: must be positive and finite", {.freq_scale = INFINITY}},
      {"--yarn-orig-ctx 0: must be at least 1", {.yarn_orig_ctx = 0u}},
      {"--yarn-ext-factor -0.5: must be at least 0 and finite", {.yarn_ext_factor = -0.5f}},
      {"--yarn-attn-factor 0: must be positive and finite", {.yarn_attn_factor = 0.0f}},
      {"--yarn-beta-slow nan: must be positive and finite", {.yarn_beta_slow = NAN}},
      {"--yarn-beta-fast -3: must be positive and finite", {.yarn_beta_fast = -3.0f}},
  };
  for (const auto& [message, overrides] : cases) {
    auto rope = resolve_rope(tiny_config(), {}, overrides);
    ASSERT_FALSE(rope.ok()) << message;
    EXPECT_THAT(rope.error().message, HasSubstr(message));
  }
}

TEST(RopeSetup, UnknownFileScalingIsRefused) {
  ModelConfig c = tiny_config();
  c.rope_scaling_type = "longrope";
  auto rope = resolve_rope(c, {});
  ASSERT_FALSE(rope.ok());
  EXPECT_THAT(rope.error().message, HasSubstr("llama.rope.scaling.type = 'longrope' is not supported"));
}

RopeFlags parse(const std::string& args) {
  CLI::App app("test");
  RopeFlags flags;
  add_rope_flags(app, flags);
  app.parse(args, false);
  return flags;
}

TEST(RopeFlags, ParseLlamaCppNames) {
  auto o =
      rope_overrides(parse("--rope-scaling yarn --rope-freq-base 20000 --rope-freq-scale 0.25 --yarn-orig-ctx 512 "
                           "--yarn-ext-factor 0.75 --yarn-attn-factor 1.5 --yarn-beta-slow 2 --yarn-beta-fast 24"));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->scaling, RopeScaling::Yarn);
  EXPECT_EQ(o->freq_base, 20000.0f);
  EXPECT_EQ(o->freq_scale, 0.25f);
  EXPECT_EQ(o->yarn_orig_ctx, 512u);
  EXPECT_EQ(o->yarn_ext_factor, 0.75f);
  EXPECT_EQ(o->yarn_attn_factor, 1.5f);
  EXPECT_EQ(o->yarn_beta_slow, 2.0f);
  EXPECT_EQ(o->yarn_beta_fast, 24.0f);
}

TEST(RopeFlags, RopeScaleIsTheInverseFrequencyScale) {
  auto o = rope_overrides(parse("--rope-scale 4"));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->freq_scale, 0.25f);
  EXPECT_EQ(o->scaling, std::nullopt);
  EXPECT_THROW(parse("--rope-scale 4 --rope-freq-scale 0.5"), CLI::ExcludesError);
  auto bad = rope_overrides(parse("--rope-scale 0"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("--rope-scale 0: must be positive and finite"));
}

TEST(RopeFlags, LlamaCppsNotGivenValuesMeanTheFile) {
  auto o = rope_overrides(
      parse("--rope-freq-base 0 --rope-freq-scale 0 --yarn-orig-ctx 0 --yarn-ext-factor -1 --yarn-attn-factor -1 "
            "--yarn-beta-slow -1 --yarn-beta-fast -1"));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->freq_base, std::nullopt);
  EXPECT_EQ(o->freq_scale, std::nullopt);
  EXPECT_EQ(o->yarn_orig_ctx, std::nullopt);
  EXPECT_EQ(o->yarn_ext_factor, std::nullopt);
  EXPECT_EQ(o->yarn_attn_factor, std::nullopt);
  EXPECT_EQ(o->yarn_beta_slow, std::nullopt);
  EXPECT_EQ(o->yarn_beta_fast, std::nullopt);
  EXPECT_EQ(rope_overrides(parse(""))->scaling, std::nullopt);
}

TEST(RopeFlags, BadValuesAreRefused) {
  EXPECT_THROW(parse("--rope-scaling longrope"), CLI::ValidationError);
  EXPECT_THROW(parse("--rope-freq-base abc"), CLI::ParseError);
  auto o = rope_overrides(parse("--rope-freq-base -5"));
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.error().message, HasSubstr("--rope-freq-base -5: must be positive and finite"));
}

// The forward pass: the tiny llama with yarn metadata, and the same weights without it run with the
// overrides the flags would give, compute the same logits bit for bit; and they differ from plain rope
// (the scaling is not silently ignored) and from linear scaling (the ramp and temperature do something).
TEST(RopeForward, YarnFromTheFlagsEqualsYarnFromTheFile) {
  for (ModelArch arch : {ModelArch::Llama, ModelArch::Qwen2}) {
    auto plain_bytes = test::synth_tiny(arch, "f32");
    ASSERT_TRUE(plain_bytes.ok()) << plain_bytes.error().message;
    auto plain_file = GgufFile::parse(*plain_bytes, "plain.gguf");
    ASSERT_TRUE(plain_file.ok());
    const std::string p = std::string(model_arch_name(arch)) + ".";
    test::GgufEdit edit;
    edit.set = {{p + "rope.scaling.type", GgufValue{std::string("yarn")}},
                {p + "rope.scaling.factor", GgufValue{4.0f}},
                {p + "rope.scaling.original_context_length", GgufValue{uint32_t{32}}}};
    auto yarn_bytes = test::rewrite_gguf(*plain_file, edit);
    ASSERT_TRUE(yarn_bytes.ok()) << yarn_bytes.error().message;
    auto plain = Model::from_bytes(std::move(*plain_bytes));
    auto yarn = Model::from_bytes(std::move(*yarn_bytes));
    ASSERT_TRUE(plain.ok() && yarn.ok());

    const auto tokens = test::test_tokens(100);
    auto from_file = test::logits_all(*yarn, tokens);
    ASSERT_TRUE(from_file.ok()) << from_file.error().message;
    auto overrides = rope_overrides(parse("--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32"));
    ASSERT_TRUE(overrides.ok());
    auto from_flags = test::logits_all(*plain, tokens, {.n_ctx = 256, .n_threads = 1, .rope = *overrides});
    ASSERT_TRUE(from_flags.ok()) << from_flags.error().message;
    EXPECT_EQ(*from_flags, *from_file) << model_arch_name(arch);

    auto unscaled = test::logits_all(*plain, tokens);
    const RopeOverrides linear_x4{.scaling = RopeScaling::Linear, .freq_scale = 0.25f};
    auto linear = test::logits_all(*plain, tokens, {.n_ctx = 256, .n_threads = 1, .rope = linear_x4});
    ASSERT_TRUE(unscaled.ok() && linear.ok());
    EXPECT_GT(test::logits_diff(*unscaled, *from_file).rms_over_std, 1e-3) << model_arch_name(arch);
    EXPECT_GT(test::logits_diff(*linear, *from_file).rms_over_std, 1e-3) << model_arch_name(arch);
  }
}

}  // namespace
}  // namespace infertune
