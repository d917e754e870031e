// phi3's stored forms: the fused attn_qkv and ffn_up cut into the matrices the forward pass multiplies by (views of
// the file's rows, under the stored name), their inputs seen once by an importance matrix, and LongRoPE's factor
// choice by context length. Its logits are checked against llama.cpp by phi3_crosscheck.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/arch/activation_observer.h"
#include "engine/context/rope_setup.h"
#include "forward_test_models.h"

namespace infertune {
namespace {

Model load_phi3(bool repack = false) {
  auto bytes = test::synth_tiny(ModelArch::Phi3, "f32");
  EXPECT_TRUE(bytes.ok()) << bytes.error().message;
  auto model = Model::from_bytes(std::move(*bytes), "phi3", {.repack = repack});
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(*model);
}

// Each part is the next run of the stored tensor's rows, with its name.
void expect_consecutive_rows(std::initializer_list<const WeightMatrix*> parts, std::string_view name) {
  const std::byte* next = (*parts.begin())->data.data();
  for (const WeightMatrix* part : parts) {
    EXPECT_EQ(part->name, name);
    EXPECT_EQ(part->data.data(), next);
    EXPECT_EQ(part->data.size(), part->n_rows * part->n_cols * sizeof(float));
    next += part->data.size();
  }
}

TEST(Phi3Weights, FusedMatricesAreCutIntoTheirRowsInOrder) {
  const Model model = load_phi3();
  const GgufFile& file = model.file();
  for (uint32_t il = 0; il < model.config().n_layers; ++il) {
    const LayerWeights& l = model.weights().layers[il];
    EXPECT_EQ(l.attn_q.n_rows, 256u);
    EXPECT_EQ(l.attn_k.n_rows, 64u);
    EXPECT_EQ(l.attn_v.n_rows, 64u);
    EXPECT_EQ(l.ffn_gate.n_rows, 512u);
    EXPECT_EQ(l.ffn_up.n_rows, 512u);
    const std::string qkv = fmt::format("blk.{}.attn_qkv.weight", il);
    const std::string up = fmt::format("blk.{}.ffn_up.weight", il);
    expect_consecutive_rows({&l.attn_q, &l.attn_k, &l.attn_v}, qkv);
    expect_consecutive_rows({&l.ffn_gate, &l.ffn_up}, up);
    EXPECT_EQ(l.attn_q.data.data(), file.tensor_data(*file.find_tensor(qkv)).data());
    EXPECT_EQ(l.ffn_gate.data.data(), file.tensor_data(*file.find_tensor(up)).data());
  }
  EXPECT_EQ(model.weights().rope_factors_long.size(), 12u);  // n_rot / 2
  EXPECT_EQ(model.weights().rope_factors_short.size(), 12u);
}

// The parts of a fused matrix are repacked each on its own; the products give the same bits.
TEST(Phi3Weights, RepackedPartsGiveTheSameLogits) {
  auto bytes = test::synth_tiny(ModelArch::Phi3, "q4_0", /*pure=*/true);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto plain = Model::from_bytes(*bytes, "q4_0", {.repack = false});
  auto repacked = Model::from_bytes(std::move(*bytes), "q4_0");
  ASSERT_TRUE(plain.ok() && repacked.ok());
  if (repacked->interleaved_bytes() == 0) GTEST_SKIP() << "no kernel on this CPU reads the interleaved layout";
  const std::vector<int32_t> tokens{1, 17, 42, 99, 5, 300, 7};
  const auto logits = [&](const Model& model) {
    auto ctx = Context::create(model, {.n_ctx = 64, .n_threads = 2});
    EXPECT_TRUE(ctx.ok());
    EXPECT_TRUE(ctx->decode(tokens, Logits::All).ok());
    return std::vector<float>(ctx->logits().begin(), ctx->logits().end());
  };
  EXPECT_EQ(logits(*repacked), logits(*plain));
}

class NameCounter : public ActivationObserver {
 public:
  void observe(std::string_view name, std::span<const float>, size_t, size_t) override { ++calls[std::string(name)]; }
  std::map<std::string, int> calls;
};

// An importance matrix keys on the stored tensors: attn_qkv's input once per step, not once per part.
TEST(Phi3Weights, AnObserverSeesEachFusedInputOnce) {
  const Model model = load_phi3();
  auto ctx = Context::create(model, {.n_ctx = 64, .n_threads = 1});
  ASSERT_TRUE(ctx.ok());
  NameCounter counter;
  {
    const ScopedActivationObserver watching(counter);
    ASSERT_TRUE(ctx->decode(std::vector<int32_t>{1, 5, 9}, Logits::All).ok());
  }
  for (uint32_t il = 0; il < model.config().n_layers; ++il) {
    for (const char* role : {"attn_qkv", "attn_output", "ffn_up", "ffn_down"}) {
      EXPECT_EQ(counter.calls[fmt::format("blk.{}.{}.weight", il, role)], 1) << il << " " << role;
    }
  }
  // and output.weight; no attn_q, attn_k or ffn_gate: the file has none
  EXPECT_EQ(counter.calls.size(), 4 * model.config().n_layers + 1);
}

// LongRoPE's long factors past the original context (256 here), the short ones within it, with the context rounded
// up to 256 cells as llama.cpp rounds its own.
TEST(Phi3Weights, TheContextLengthPicksLongOrShortRopeFactors) {
  const Model model = load_phi3();
  const ModelWeights& w = model.weights();
  const ModelConfig& c = model.config();
  EXPECT_NE(w.rope_factors_long, w.rope_factors_short);
  for (uint32_t n_ctx : {1u, 64u, 256u}) EXPECT_EQ(rope_freq_factors(c, w, n_ctx).data(), w.rope_factors_short.data());
  for (uint32_t n_ctx : {257u, 512u, 4096u}) {
    EXPECT_EQ(rope_freq_factors(c, w, n_ctx).data(), w.rope_factors_long.data()) << n_ctx;
  }
  ModelConfig no_original = c;  // then context_length (2048) is the original
  no_original.rope_scaling_orig_ctx = 0;
  EXPECT_EQ(rope_freq_factors(no_original, w, 2048).data(), w.rope_factors_short.data());
  EXPECT_EQ(rope_freq_factors(no_original, w, 2049).data(), w.rope_factors_long.data());

  auto long_ctx = Context::create(model, {.n_ctx = 512, .n_threads = 1});
  auto short_ctx = Context::create(model, {.n_ctx = 256, .n_threads = 1});
  ASSERT_TRUE(long_ctx.ok() && short_ctx.ok());
  std::vector<float> long_logits, short_logits;
  for (auto [ctx, out] : {std::pair{&*long_ctx, &long_logits}, std::pair{&*short_ctx, &short_logits}}) {
    ASSERT_TRUE(ctx->decode(std::vector<int32_t>{1, 5, 9, 13, 200}, Logits::All).ok());
    out->assign(ctx->logits().begin(), ctx->logits().end());
  }
  EXPECT_NE(long_logits, short_logits);
}

TEST(Phi3Weights, ModelsWithoutLongRopeOrWithRopeFreqsKeepTheirFactors) {
  const Model model = load_phi3();
  ModelConfig plain = model.config();
  plain.has_longrope_factors = false;
  EXPECT_TRUE(rope_freq_factors(plain, model.weights(), 8192).empty());
  ModelWeights llama3 = model.weights();
  llama3.rope_freqs.assign(12, 2.0f);
  EXPECT_EQ(rope_freq_factors(model.config(), llama3, 8192).data(), llama3.rope_freqs.data());
}

}  // namespace
}  // namespace infertune
