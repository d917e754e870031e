// The importance matrix (engine/quality/importance_matrix.h) and the forward pass's activation hook
// (engine/arch/activation_observer.h): sums of squares and token counts per weight of the blocks only, an input whose
// width changes is an error at writing, the GGUF file has llama-imatrix's keys and tensors, the .dat file its layout,
// and a forward pass reports every block weight's input to the installed observer, and nothing once it is gone.
// (Against numpy and llama-imatrix on a fixture: tests/engine/imatrix_check.py.)
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "engine/context/context.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "engine/quality/importance_matrix.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string temp_file(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

TEST(ImportanceMatrix, SumsSquaresAndCountsTokensOfBlockWeightsOnly) {
  ImportanceMatrix m;
  const std::vector<float> x = {1, 2, 3, -1, 0, 2};  // 2 tokens x 3 columns
  m.observe("blk.0.attn_q.weight", x, 2, 3);
  m.observe("blk.0.attn_q.weight", std::vector<float>{2, 0, 1}, 1, 3);
  m.observe("output.weight", x, 2, 3);
  ASSERT_EQ(m.entries().size(), 1u);
  const auto& e = m.entries().at("blk.0.attn_q.weight");
  EXPECT_EQ(e.sums, (std::vector<float>{6, 4, 14}));
  EXPECT_EQ(e.counts, std::vector<uint64_t>{3});
  ImportanceMatrix with_output(true);
  with_output.observe("output.weight", x, 2, 3);
  EXPECT_EQ(with_output.entries().size(), 1u);
}

TEST(ImportanceMatrix, ExpertsFillTheirOwnRowsOfOneStackedEntry) {
  ImportanceMatrix m(false, 3);
  m.observe("blk.1.ffn_up_exps.weight (expert 2)", std::vector<float>{1, 2, 3, -1}, 2, 2);
  m.observe("blk.1.ffn_up_exps.weight (expert 0)", std::vector<float>{3, 0}, 1, 2);
  ASSERT_EQ(m.entries().size(), 1u);
  const auto& e = m.entries().at("blk.1.ffn_up_exps.weight");
  EXPECT_EQ(e.sums, (std::vector<float>{9, 0, 0, 0, 10, 5}));  // expert 1 saw no token
  EXPECT_EQ(e.counts, (std::vector<uint64_t>{1, 0, 2}));
  m.observe("blk.1.ffn_up_exps.weight (expert 3)", std::vector<float>{1, 1}, 1, 2);
  const Status s = m.write_gguf(temp_file("infertune-imatrix-expert.gguf"), {});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, ::testing::HasSubstr("expert 3 of a model with 3 experts"));
}

TEST(ImportanceMatrix, AnInputWhoseWidthChangesIsAnErrorWhenWritten) {
  ImportanceMatrix m;
  m.observe("blk.0.ffn_down.weight", std::vector<float>(4, 1.0f), 1, 4);
  m.observe("blk.0.ffn_down.weight", std::vector<float>(8, 1.0f), 1, 8);
  const Status s = m.write_gguf(temp_file("infertune-imatrix-bad.gguf"), {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("blk.0.ffn_down.weight"), std::string::npos) << s.error().message;
}

TEST(ImportanceMatrix, WritesLlamaImatrixsGgufAndDatLayouts) {
  ImportanceMatrix m;
  m.observe("blk.1.ffn_up.weight", std::vector<float>{1, 2, 3, 4}, 2, 2);  // sums {10, 20}, count 2
  m.observe("blk.0.attn_k.weight", std::vector<float>{3, 4}, 1, 2);        // sums {9, 16}, count 1
  const ImportanceMatrix::Provenance p{{"text.txt"}, 2, 1};
  const std::string gguf = temp_file("infertune-imatrix-test.gguf");
  ASSERT_TRUE(m.write_gguf(gguf, p).ok());
  auto file = GgufFile::open(gguf);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(*file->get_string("general.type"), "imatrix");
  EXPECT_EQ(*file->get_uint("imatrix.chunk_count"), 2u);
  EXPECT_EQ(*file->get_uint("imatrix.chunk_size"), 1u);
  std::vector<std::string> names;
  for (const GgufTensorInfo& t : file->tensors()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"blk.0.attn_k.weight.in_sum2", "blk.0.attn_k.weight.counts",
                                             "blk.1.ffn_up.weight.in_sum2", "blk.1.ffn_up.weight.counts"}));
  const auto floats = [&](const std::string& name) {
    const auto bytes = file->tensor_data(*file->find_tensor(name));
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  };
  EXPECT_EQ(floats("blk.1.ffn_up.weight.in_sum2"), (std::vector<float>{10, 20}));
  EXPECT_EQ(floats("blk.1.ffn_up.weight.counts"), (std::vector<float>{2}));
  EXPECT_EQ(file->find_tensor("blk.1.ffn_up.weight.in_sum2")->dims, (std::vector<uint64_t>{2, 1}));

  const std::string dat = temp_file("infertune-imatrix-test.dat");
  ASSERT_TRUE(m.write_dat(dat, p).ok());
  std::ifstream in(dat, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto i32 = [&](size_t at) {
    int32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  EXPECT_EQ(i32(0), 2);                                                 // entries
  EXPECT_EQ(std::string(bytes.data() + 8, 19), "blk.0.attn_k.weight");  // first in name order
  EXPECT_EQ(i32(27), 1);                                                // ncall: 1 token / chunk of 1
  EXPECT_EQ(i32(31), 2);                                                // values
  float first;
  std::memcpy(&first, bytes.data() + 35, 4);
  EXPECT_EQ(first, 9.0f);  // sum 9 / count 1 * ncall 1
  std::filesystem::remove(gguf);
  std::filesystem::remove(dat);
}

class Recorder : public ActivationObserver {
 public:
  void observe(std::string_view name, std::span<const float>, size_t n_tokens, size_t) override {
    names.insert(std::string(name));
    tokens += n_tokens;
  }
  std::set<std::string> names;
  size_t tokens = 0;
};

TEST(ActivationObserver, SeesEveryBlockWeightsInputWhileInstalled) {
  auto model = Model::load(test::fixture_path("models/fixture-llama-f32.gguf").string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto ctx = Context::create(*model, {.n_ctx = 64, .n_threads = 1});
  ASSERT_TRUE(ctx.ok());
  Recorder recorder;
  {
    const ScopedActivationObserver watching(recorder);
    ASSERT_TRUE(ctx->decode(std::vector<int32_t>{1, 5, 9}, Logits::All).ok());
  }
  for (int layer = 0; layer < static_cast<int>(model->config().n_layers); ++layer) {
    for (const char* role : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
      EXPECT_TRUE(recorder.names.count("blk." + std::to_string(layer) + "." + role + ".weight")) << role;
    }
  }
  const size_t seen = recorder.tokens;
  ASSERT_TRUE(ctx->decode(std::vector<int32_t>{3}).ok());
  EXPECT_EQ(recorder.tokens, seen);  // uninstalled: nothing more
  EXPECT_EQ(activation_observer(), nullptr);
}

}  // namespace
}  // namespace infertune
