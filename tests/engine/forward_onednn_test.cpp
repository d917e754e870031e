// The float fixture models (F32, F16, BF16) with every float-weight batch product on oneDNN
// (INFERTUNE_GEMM=onednn, kernels/onednn), against llama.cpp's logits (fixtures/ref), both sequences as one
// batch each. Bounds are the fixtures README's — F32 max|d|/std <= 1e-4 at every position and the same 32
// greedy tokens (one-token steps run our own kernels), F16 rms(d)/std(ref) <= 2e-3 — except BF16, held to
// 3e-3 as in forward_fixture_test.cpp: its distance is set by rare bf16 rounding flips and moves with
// summation order (oneDNN measured 2.0e-3 on seqB). Skipped when oneDNN is not built or cannot compute the
// type on this CPU.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "kernels/onednn/gemm_selection.h"
#include "kernels/onednn/onednn_matmul.h"
#include "test_support.h"

namespace infertune {
namespace {

struct OnednnCase {
  const char* model;  // file stem under fixtures/models
  GgmlType type;      // the type of its large weights
};

std::vector<int32_t> read_ids(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<int32_t> ids;
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.find_first_not_of(" \n\r\t") != std::string::npos) ids.push_back(std::stoi(item));
  }
  return ids;
}

double stddev(std::span<const float> v) {
  double mean = 0, var = 0;
  for (float x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (float x : v) var += (x - mean) * (x - mean);
  return std::sqrt(var / static_cast<double>(v.size()));
}

int32_t argmax(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

class ForwardOnednnTest : public ::testing::TestWithParam<OnednnCase> {};

TEST_P(ForwardOnednnTest, MatchesLlamaCppLogits) {
  const OnednnCase& c = GetParam();
  if (!onednn_supports(c.type)) {
    GTEST_SKIP() << "oneDNN cannot compute " << ggml_type_name(c.type) << " here (onednn: " << onednn_summary() << ")";
  }
  const ScopedGemmMode onednn(GemmMode::onednn);
  auto model = Model::load(test::fixture_path(fmt::format("models/{}.gguf", c.model)).string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  const size_t n_vocab = model->config().n_vocab;

  for (const char* seq : {"seqA", "seqB"}) {
    SCOPED_TRACE(seq);
    const std::string stem = fmt::format("{}.{}", c.model, seq);
    const auto tokens = read_ids(test::fixture_path(fmt::format("ref/{}.txt", seq)));
    const auto ref = test::read_f32_file(test::fixture_path(fmt::format("ref/{}.logits.f32", stem)));
    const auto want_greedy = read_ids(test::fixture_path(fmt::format("ref/{}.greedy.txt", stem)));
    ASSERT_EQ(ref.size(), tokens.size() * n_vocab);

    auto ctx = Context::create(*model, {.n_ctx = 256, .n_threads = 2});
    ASSERT_TRUE(ctx.ok()) << ctx.error().message;
    const size_t onednn_runs = gemm_selector().runs(GemmBackend::onednn);
    auto logits = ctx->decode(tokens, Logits::All);
    ASSERT_TRUE(logits.ok()) << logits.error().message;
    EXPECT_GT(gemm_selector().runs(GemmBackend::onednn), onednn_runs) << "oneDNN did not run";
    ASSERT_EQ(logits->size(), ref.size());

    double sum_sq = 0, max_over_std = 0;
    for (size_t p = 0; p < tokens.size(); ++p) {
      const auto g = logits->subspan(p * n_vocab, n_vocab);
      const auto r = std::span<const float>(ref).subspan(p * n_vocab, n_vocab);
      double max_d = 0;
      for (size_t i = 0; i < n_vocab; ++i) {
        const double d = static_cast<double>(g[i]) - r[i];
        sum_sq += d * d;
        max_d = std::max(max_d, std::fabs(d));
      }
      max_over_std = std::max(max_over_std, max_d / stddev(r));
    }
    const double rms_over_std = std::sqrt(sum_sq / static_cast<double>(ref.size())) / stddev(ref);
    std::cout << fmt::format("[fixture/onednn] {:28} rms/std {:.3e}  max/std {:.3e}\n", stem, rms_over_std,
                             max_over_std);
    if (c.type == GgmlType::F32) {
      EXPECT_LE(max_over_std, 1e-4);
      // Greedy steps through the cache (one token each: our kernels).
      std::vector<int32_t> greedy;
      std::vector<float> last(logits->end() - static_cast<ptrdiff_t>(n_vocab), logits->end());
      for (size_t i = 0; i < want_greedy.size(); ++i) {
        const int32_t token = argmax(last);
        greedy.push_back(token);
        if (i + 1 == want_greedy.size()) break;
        auto next = ctx->decode(std::span<const int32_t>(&token, 1));
        ASSERT_TRUE(next.ok()) << next.error().message;
        last.assign(next->begin(), next->end());
      }
      EXPECT_EQ(greedy, want_greedy);
    } else {
      EXPECT_LE(rms_over_std, c.type == GgmlType::BF16 ? 3e-3 : 2e-3);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FloatFixtures, ForwardOnednnTest,
                         ::testing::Values(OnednnCase{"stories260K", GgmlType::F32},
                                           OnednnCase{"fixture-llama-f32", GgmlType::F32},
                                           OnednnCase{"fixture-qwen2-f32", GgmlType::F32},
                                           OnednnCase{"fixture-llama-F16", GgmlType::F16},
                                           OnednnCase{"fixture-llama-BF16", GgmlType::BF16}),
                         [](const auto& info) {
                           std::string name = info.param.model;
                           std::replace_if(
                               name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
                           return name;
                         });

}  // namespace
}  // namespace infertune
