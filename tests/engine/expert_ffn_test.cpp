// The mixture-of-experts feed-forward against references that need no other engine: the router's choices
// against a full sort of its logits, and a whole model whose experts are copies of a dense model's
// feed-forward (any mix of them with weights summing to 1 is that feed-forward) against the dense model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engine/arch/expert_routing.h"
#include "engine/gguf/gguf_writer.h"
#include "forward_test_models.h"

namespace infertune {
namespace {

struct Choice {
  uint32_t expert;
  float weight;
};

// Each token's (expert, weight) pairs, read back from the routes.
std::map<uint32_t, std::vector<Choice>> choices_by_token(const ExpertRoutes& routes, uint32_t n_expert) {
  std::map<uint32_t, std::vector<Choice>> by_token;
  for (uint32_t e = 0; e < n_expert; ++e) {
    for (uint32_t i = routes.offsets[e]; i < routes.offsets[e + 1]; ++i) {
      by_token[routes.tokens[i]].push_back({e, routes.weights[i]});
    }
  }
  return by_token;
}

TEST(ExpertRouting, PicksTheLargestLogitsWeighedByTheirSoftmax) {
  constexpr size_t kTokens = 37;
  constexpr uint32_t kExperts = 16, kUsed = 4;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(kTokens * kExperts);
  for (float& l : logits) l = normal(rng);
  ExpertRoutes routes;
  route_tokens(logits, kTokens, kExperts, kUsed, true, routes);

  ASSERT_EQ(routes.offsets.size(), kExperts + 1);
  EXPECT_EQ(routes.offsets.back(), kTokens * kUsed);
  for (uint32_t e = 0; e < kExperts; ++e) {
    const auto first = routes.tokens.begin() + routes.offsets[e], last = routes.tokens.begin() + routes.offsets[e + 1];
    EXPECT_TRUE(std::is_sorted(first, last)) << "expert " << e << "'s tokens in batch order";
  }
  const auto by_token = choices_by_token(routes, kExperts);
  ASSERT_EQ(by_token.size(), kTokens);
  for (const auto& [t, chosen] : by_token) {
    const float* row = logits.data() + t * kExperts;
    std::vector<uint32_t> order(kExperts);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [row](uint32_t a, uint32_t b) { return row[a] > row[b]; });
    double denominator = 0;
    for (uint32_t i = 0; i < kUsed; ++i) denominator += std::exp(static_cast<double>(row[order[i]]));
    ASSERT_EQ(chosen.size(), kUsed) << "token " << t;
    double sum = 0;
    for (const Choice& c : chosen) {
      const auto rank = std::find(order.begin(), order.end(), c.expert) - order.begin();
      EXPECT_LT(rank, kUsed) << "token " << t << " went to expert " << c.expert << ", not among its top " << kUsed;
      EXPECT_NEAR(c.weight, std::exp(static_cast<double>(row[c.expert])) / denominator, 1e-6);
      sum += c.weight;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(ExpertRouting, WithoutNormalizingTheWeightsAreTheSoftmaxProbabilities) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, -1.0f};
  ExpertRoutes routes;
  route_tokens(logits, 1, 4, 2, false, routes);
  const auto chosen = choices_by_token(routes, 4).at(0);
  double denominator = 0;
  for (float l : logits) denominator += std::exp(static_cast<double>(l));
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].expert, 1u);
  EXPECT_NEAR(chosen[0].weight, std::exp(2.0) / denominator, 1e-6);
  EXPECT_EQ(chosen[1].expert, 2u);
  EXPECT_NEAR(chosen[1].weight, std::exp(1.0) / denominator, 1e-6);
}

TEST(ExpertRouting, TiesGoToTheLowerExpert) {
  const std::vector<float> logits(8, 0.5f);
  ExpertRoutes routes;
  route_tokens(logits, 1, 8, 2, true, routes);
  const auto chosen = choices_by_token(routes, 8).at(0);
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].expert, 0u);
  EXPECT_EQ(chosen[1].expert, 1u);
  EXPECT_FLOAT_EQ(chosen[0].weight, 0.5f);
}

constexpr uint64_t kCopies = 3;

// The dense qwen3 file as a qwen3moe one: every ffn_gate/up/down becomes a stack of kCopies copies, and each block
// gets a random router, so that tokens go to different pairs of copies with different weights.
Result<std::vector<std::byte>> as_copied_experts(const GgufFile& dense, uint32_t n_embd, uint32_t n_ff) {
  GgufWriter w;
  for (const GgufKeyValue& kv : dense.metadata()) {
    if (kv.key == "general.architecture") {
      w.set(kv.key, GgufValue{std::string("qwen3moe")});
    } else if (kv.key.starts_with("qwen3.")) {
      w.set("qwen3moe." + kv.key.substr(6), kv.value);
    } else {
      w.set(kv.key, kv.value);
    }
  }
  w.set("qwen3moe.expert_count", GgufValue{static_cast<uint32_t>(kCopies)});
  w.set("qwen3moe.expert_used_count", GgufValue{uint32_t{2}});
  w.set("qwen3moe.expert_feed_forward_length", GgufValue{n_ff});
  std::vector<std::string> routers;
  for (const GgufTensorInfo& t : dense.tensors()) {
    const bool ffn =
        t.name.ends_with("ffn_gate.weight") || t.name.ends_with("ffn_up.weight") || t.name.ends_with("ffn_down.weight");
    if (!ffn) {
      if (Status s = w.add_tensor(t.name, t.dims, t.type); !s) return s.error();
      continue;
    }
    const std::string stacked = t.name.substr(0, t.name.size() - 7) + "_exps.weight";
    if (Status s = w.add_tensor(stacked, {t.dims[0], t.dims[1], kCopies}, t.type); !s) return s.error();
    if (t.name.ends_with("ffn_gate.weight"))
      routers.push_back(t.name.substr(0, t.name.size() - 15) + "ffn_gate_inp.weight");
  }
  for (const std::string& router : routers) {
    if (Status s = w.add_tensor(router, {n_embd, kCopies}, GgmlType::F32); !s) return s.error();
  }
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 0.2f);
  return w.write_memory([&](size_t, const GgufTensorInfo& info, std::span<std::byte> out) -> Status {
    if (info.name.ends_with("ffn_gate_inp.weight")) {
      std::vector<float> values(info.n_elements);
      for (float& v : values) v = normal(rng);
      std::memcpy(out.data(), values.data(), out.size());
      return {};
    }
    std::string source_name = info.name;
    if (const auto at = source_name.find("_exps.weight"); at != std::string::npos) {
      source_name = source_name.substr(0, at) + ".weight";
    }
    const GgufTensorInfo* source = dense.find_tensor(source_name);
    if (!source) return fail("no tensor {}", source_name);
    const auto bytes = dense.tensor_data(*source);
    for (size_t offset = 0; offset < out.size(); offset += bytes.size()) {
      std::copy(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(offset));
    }
    return {};
  });
}

TEST(ExpertFfn, ExpertsThatCopyADenseFeedForwardGiveTheDenseModelsLogits) {
  auto dense_bytes = test::synth_tiny(ModelArch::Qwen3, "f32");
  ASSERT_TRUE(dense_bytes.ok()) << dense_bytes.error().message;
  auto dense = Model::from_bytes(*dense_bytes);
  ASSERT_TRUE(dense.ok()) << dense.error().message;
  const ModelConfig& c = dense->config();
  auto moe_bytes = as_copied_experts(dense->file(), c.n_embd, c.n_ff);
  ASSERT_TRUE(moe_bytes.ok()) << moe_bytes.error().message;
  auto moe = Model::from_bytes(std::move(*moe_bytes));
  ASSERT_TRUE(moe.ok()) << moe.error().message;
  ASSERT_TRUE(moe->config().is_moe());

  const auto tokens = test::test_tokens(24);
  auto want = test::logits_all(*dense, tokens);
  auto got = test::logits_all(*moe, tokens);
  ASSERT_TRUE(want.ok() && got.ok());
  // Only the rounding of w1 * f + w2 * f with w1 + w2 = 1 separates the two.
  EXPECT_LE(test::logits_diff(*got, *want).max_over_std, 1e-4);
}

}  // namespace
}  // namespace infertune
