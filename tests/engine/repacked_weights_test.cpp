// Weights repacked at load (Model::load's `repack`, kernels/matmul/interleaved_rows.h): the Q4_K, Q6_K, Q4_0, Q8_0,
// Q2_K, Q3_K, Q5_K, Q5_0 and IQ4_XS matrices that a kernel reads interleaved are repacked into memory the Model owns,
// their bytes the file's in another order; an untied token_embd, the other types and a model loaded with repack off
// stay in the file's bytes; a tied output projection is repacked and the embedding lookup reads it interleaved; the
// logits are the same bits either way, for prompts (tiled kernels), a few tokens and one-token steps; and a model
// repacked for one kernel but run with another that cannot read the layout fails with a message, not wrong numbers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "forward_test_models.h"
#include "kernels/matmul/matmul_registry.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::string fixture(const char* name) { return test::fixture_path(std::string("models/") + name).string(); }

bool kernel_reads_interleaved(GgmlType type) {
  const auto kernel = matmul_registry().find(type);
  return kernel.ok() && kernel->reads_interleaved;
}

// The fixture's Q4_K_M mix: Q4_K matrices, Q6_K attn_v / ffn_down in some layers and a Q6_K output matrix.
TEST(RepackedWeights, ProductMatricesAreInterleavedCopiesOfTheFileBytes) {
  auto model = Model::load(fixture("fixture-llama-Q4_K_M.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().message;
  std::vector<const WeightMatrix*> products = {&model->weights().output};
  for (const LayerWeights& l : model->weights().layers) {
    products.insert(products.end(),
                    {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up, &l.ffn_down});
  }
  uint64_t repacked = 0;
  for (const WeightMatrix* m : products) {
    const GgufTensorInfo* info = model->file().find_tensor(m->name);
    ASSERT_NE(info, nullptr);
    const auto file_bytes = model->file().tensor_data(*info);
    ASSERT_EQ(m->data.size(), file_bytes.size());
    if (!has_interleaved_layout(m->type) || !kernel_reads_interleaved(m->type)) {
      EXPECT_EQ(m->layout, WeightLayout::rows) << m->name;
      EXPECT_EQ(m->data.data(), file_bytes.data()) << m->name;
      continue;
    }
    EXPECT_EQ(m->layout, WeightLayout::interleaved8) << m->name;
    std::vector<std::byte> back(m->data.size());
    ASSERT_TRUE(deinterleave_rows(m->type, m->data, m->n_rows, m->n_cols, back).ok());
    EXPECT_TRUE(std::equal(back.begin(), back.end(), file_bytes.begin())) << m->name;
    repacked += m->data.size();
  }
  EXPECT_EQ(model->weights().token_embd.layout, WeightLayout::rows);  // untied: only the embedding lookup reads it
  EXPECT_EQ(model->interleaved_bytes(), repacked);
  if (kernel_reads_interleaved(GgmlType::Q4_K)) {
    EXPECT_GT(repacked, 0u);
  }
  if (kernel_reads_interleaved(GgmlType::Q6_K)) {
    EXPECT_EQ(model->weights().output.layout, WeightLayout::interleaved8);
  }
}

// Logits of a 12-token prompt (tiled), then a 3-token batch (matrix-vector passes), then 3 one-token steps.
std::vector<float> logits_of(const Model& model, unsigned threads) {
  auto ctx = Context::create(model, {.n_ctx = 32, .n_threads = threads});
  EXPECT_TRUE(ctx.ok()) << ctx.error().message;
  const auto tokens = test::test_tokens(18, static_cast<uint32_t>(model.config().n_vocab));
  std::vector<float> all;
  size_t at = 0;
  for (size_t n : {12, 3, 1, 1, 1}) {
    auto logits = ctx->decode(std::span(tokens).subspan(at, n));
    EXPECT_TRUE(logits.ok()) << logits.error().message;
    if (!logits.ok()) return all;
    all.insert(all.end(), logits->begin(), logits->end());
    at += n;
  }
  return all;
}

// llama.cpp's quantizations of the fixture model: Q4_K_M (Q4_K and Q6_K), Q4_0 and Q8_0 files.
class RepackedFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(RepackedFixture, LogitsAreTheSameBitsAsFromTheFileLayout) {
  auto repacked = Model::load(fixture(GetParam()));
  auto plain = Model::load(fixture(GetParam()), {.repack = false});
  ASSERT_TRUE(repacked.ok() && plain.ok());
  if (repacked->interleaved_bytes() == 0) GTEST_SKIP() << "no kernel on this CPU reads the interleaved layout";
  for (unsigned threads : {1u, 2u, 3u}) EXPECT_EQ(logits_of(*repacked, threads), logits_of(*plain, 1)) << threads;
}

INSTANTIATE_TEST_SUITE_P(Files, RepackedFixture,
                         ::testing::Values("fixture-llama-Q4_K_M.gguf", "fixture-llama-Q4_0.gguf",
                                           "fixture-llama-Q8_0.gguf"),
                         [](const auto& info) {
                           std::string name = info.param;
                           return name.substr(14, name.size() - 14 - 5);  // fixture-llama-X.gguf -> X
                         });

// Files of one type throughout (no Q6_K output), every matrix repacked.
class RepackedPure : public ::testing::TestWithParam<const char*> {};

// A model of `arch` in `type` gives the same logits, repacked at load or not, at 1 and 2 threads.
void expect_repacking_changes_no_bit(ModelArch arch, const char* type, bool pure) {
  auto bytes = test::synth_tiny(arch, type, pure);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto plain = Model::from_bytes(*bytes, type, {.repack = false});
  auto repacked = Model::from_bytes(std::move(*bytes), type);
  ASSERT_TRUE(repacked.ok() && plain.ok());
  if (repacked->interleaved_bytes() == 0) GTEST_SKIP() << "no kernel on this CPU reads the interleaved layout";
  EXPECT_EQ(plain->interleaved_bytes(), 0u);
  for (unsigned threads : {1u, 2u}) EXPECT_EQ(logits_of(*repacked, threads), logits_of(*plain, 1)) << threads;
}

TEST_P(RepackedPure, LogitsAreTheSameBitsAsFromTheFileLayout) {
  expect_repacking_changes_no_bit(ModelArch::Llama, GetParam(), /*pure=*/true);
}

INSTANTIATE_TEST_SUITE_P(Types, RepackedPure,
                         ::testing::Values("q4_0", "q8_0", "q2_k", "q3_k_m", "iq4_xs", "q5_0", "q5_k_m", "mxfp4_moe"),
                         [](const auto& info) { return std::string(info.param); });

// gpt-oss as it ships: every expert an MXFP4 matrix of its own, repacked, the rest Q8_0.
TEST(RepackedGptOss, ExpertsInMxfp4GiveTheSameLogitsRepacked) {
  expect_repacking_changes_no_bit(ModelArch::GptOss, "mxfp4_moe", /*pure=*/false);
}

// A tied output projection (token_embd read by the products and by the embedding lookup, as in Llama 3.2 1B):
// repacked once, token_embd the same interleaved bytes, and every token's embedding the file row's.
class RepackedTied : public ::testing::TestWithParam<const char*> {};

TEST_P(RepackedTied, TheTiedOutputIsRepackedAndLookupsReadIt) {
  auto bytes = test::synth_tiny(ModelArch::Llama, GetParam(), /*pure=*/false, /*tied=*/true);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto plain = Model::from_bytes(*bytes, GetParam(), {.repack = false});
  auto repacked = Model::from_bytes(std::move(*bytes), GetParam());
  ASSERT_TRUE(repacked.ok() && plain.ok());
  ASSERT_TRUE(repacked->config().tied_output);
  const WeightMatrix& output = repacked->weights().output;
  if (!kernel_reads_interleaved(output.type))
    GTEST_SKIP() << "no kernel on this CPU reads " << ggml_type_name(output.type) << " interleaved";
  EXPECT_EQ(output.layout, WeightLayout::interleaved8);
  EXPECT_EQ(repacked->weights().token_embd.layout, WeightLayout::interleaved8);
  EXPECT_EQ(repacked->weights().token_embd.data.data(), output.data.data());
  EXPECT_EQ(plain->weights().token_embd.layout, WeightLayout::rows);
  for (unsigned threads : {1u, 2u}) EXPECT_EQ(logits_of(*repacked, threads), logits_of(*plain, 1)) << threads;
}

INSTANTIATE_TEST_SUITE_P(Types, RepackedTied, ::testing::Values("q4_k_m", "q4_0", "q8_0", "q2_k", "iq4_xs"),
                         [](const auto& info) { return std::string(info.param); });

TEST(RepackedWeights, AKernelThatCannotReadTheLayoutIsAnError) {
  auto bytes = test::synth_tiny(ModelArch::Llama, "q4_k_m");
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto model = Model::from_bytes(std::move(*bytes));
  ASSERT_TRUE(model.ok()) << model.error().message;
  if (model->interleaved_bytes() == 0) GTEST_SKIP() << "no kernel on this CPU reads the interleaved layout";
  const ScopedMatmulVariant scalar("scalar");
  auto ctx = Context::create(*model, {.n_ctx = 16, .n_threads = 1});
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  const auto tokens = test::test_tokens(2);
  auto logits = ctx->decode(tokens);
  ASSERT_FALSE(logits.ok());
  EXPECT_THAT(logits.error().message, HasSubstr("repacked at load"));
  EXPECT_THAT(logits.error().message, HasSubstr("--no-repack"));
}

}  // namespace
}  // namespace infertune
