// The forward pass's op timers (engine/arch/op_profile.h): weight names map to their matmul ops; with the
// timers on, one decode step counts each op as often as the architecture runs it, the matmuls' weight bytes
// are their tensors' sizes, and the ops' times add up to no more than the step's; with them off nothing is
// counted. Also: the balanced split of one-token matmuls gives the same logits for any thread count.
#include "engine/arch/op_profile.h"

#include <gtest/gtest.h>

#include "forward_test_models.h"

namespace infertune {
namespace {

const OpTotals& of(const OpProfileTotals& totals, ProfiledOp op) { return totals[static_cast<size_t>(op)]; }

Model tiny_model(std::string_view type, bool tied = false) {
  auto bytes = test::synth_tiny(ModelArch::Llama, type, false, tied);
  EXPECT_TRUE(bytes.ok()) << bytes.error().message;
  auto model = Model::from_bytes(std::move(*bytes));
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(*model);
}

TEST(OpProfile, WeightNamesMapToTheirMatmulOps) {
  EXPECT_EQ(profiled_op_of_weight("blk.0.attn_q.weight"), ProfiledOp::attn_q);
  EXPECT_EQ(profiled_op_of_weight("blk.15.attn_output.weight"), ProfiledOp::attn_output);
  EXPECT_EQ(profiled_op_of_weight("blk.3.ffn_down.weight"), ProfiledOp::ffn_down);
  EXPECT_EQ(profiled_op_of_weight("output.weight"), ProfiledOp::output);
  EXPECT_EQ(profiled_op_of_weight("token_embd.weight"), ProfiledOp::output);  // a tied output
  EXPECT_EQ(profiled_op_of_weight("blk.2.ffn_gate_exps.weight"), ProfiledOp::matmul);
  EXPECT_EQ(profiled_op_of_weight("something"), ProfiledOp::matmul);
  EXPECT_EQ(profiled_op_name(ProfiledOp::kv_store), "kv_store");
}

TEST(OpProfile, OneStepCountsEveryOpOfTheArchitecture) {
  const Model model = tiny_model("q4_k_m");
  const ModelConfig& c = model.config();
  auto ctx = Context::create(model, {.n_ctx = 16, .n_threads = 2});
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  const auto tokens = test::test_tokens(3);
  ASSERT_TRUE(ctx->decode(std::span(tokens).first(2)).ok());  // not profiled

  OpProfile::enable(true);
  const bool decoded = ctx->decode(std::span(tokens).subspan(2, 1)).ok();
  const OpProfileTotals totals = OpProfile::totals();
  OpProfile::enable(false);
  ASSERT_TRUE(decoded);

  const uint64_t layers = c.n_layers;
  EXPECT_EQ(of(totals, ProfiledOp::step).calls, 1u);
  EXPECT_EQ(of(totals, ProfiledOp::embed).calls, 1u);
  EXPECT_EQ(of(totals, ProfiledOp::norm).calls, 2 * layers + 1);
  for (ProfiledOp op : {ProfiledOp::attn_qkv, ProfiledOp::attn_output, ProfiledOp::ffn_gate_up, ProfiledOp::ffn_down,
                        ProfiledOp::rope, ProfiledOp::kv_store, ProfiledOp::attention, ProfiledOp::silu}) {
    EXPECT_EQ(of(totals, op).calls, layers) << profiled_op_name(op);
  }
  EXPECT_EQ(of(totals, ProfiledOp::residual).calls, 2 * layers);
  EXPECT_EQ(of(totals, ProfiledOp::output).calls, 1u);
  // q/k/v share one quantized input, gate/up another; attn_output, ffn_down and the output quantize theirs.
  EXPECT_EQ(of(totals, ProfiledOp::quantize).calls, 4 * layers + 1);

  uint64_t qkv_bytes = 0, down_bytes = 0;  // per layer: Q4_K_M gives some layers Q6_K
  for (const LayerWeights& l : model.weights().layers) {
    qkv_bytes += l.attn_q.data.size() + l.attn_k.data.size() + l.attn_v.data.size();
    down_bytes += l.ffn_down.data.size();
  }
  EXPECT_EQ(of(totals, ProfiledOp::attn_qkv).weight_bytes, qkv_bytes);
  EXPECT_EQ(of(totals, ProfiledOp::ffn_down).weight_bytes, down_bytes);
  EXPECT_EQ(of(totals, ProfiledOp::output).weight_bytes, model.weights().output.data.size());
  uint64_t ops_ns = 0;
  for (size_t i = 1; i < totals.size(); ++i) ops_ns += totals[i].wall_ns;
  EXPECT_LE(ops_ns, of(totals, ProfiledOp::step).wall_ns);  // the op timers never overlap
  // Busy thread time never exceeds the threads' capacity.
  for (const OpTotals& t : totals) EXPECT_LE(t.busy_ns, t.thread_ns);
}

TEST(OpProfile, NothingIsCountedWhenOff) {
  const Model model = tiny_model("q8_0");
  auto ctx = Context::create(model, {.n_ctx = 16});
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  OpProfile::enable(true);  // clears the counters
  OpProfile::enable(false);
  ASSERT_TRUE(ctx->decode(test::test_tokens(4)).ok());
  for (const OpTotals& t : OpProfile::totals()) EXPECT_EQ(t.calls, 0u);
}

// One-token matmuls hand rows out as threads finish (ParallelFor::run_balanced); a row's result does not
// depend on the thread that computes it, so the logits are the same bits for any thread count.
class BalancedSplitTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BalancedSplitTest, OneTokenStepsGiveTheSameLogitsForAnyThreadCount) {
  const Model model = tiny_model(GetParam(), /*tied=*/true);
  const auto tokens = test::test_tokens(6);
  std::vector<std::vector<float>> per_threads;
  for (unsigned threads : {1u, 2u, 3u}) {
    auto ctx = Context::create(model, {.n_ctx = 16, .n_threads = threads});
    ASSERT_TRUE(ctx.ok()) << ctx.error().message;
    std::vector<float> all;
    for (int32_t token : tokens) {
      auto logits = ctx->decode(std::span(&token, 1));
      ASSERT_TRUE(logits.ok()) << logits.error().message;
      all.insert(all.end(), logits->begin(), logits->end());
    }
    per_threads.push_back(std::move(all));
  }
  EXPECT_EQ(per_threads[1], per_threads[0]) << "2 threads";
  EXPECT_EQ(per_threads[2], per_threads[0]) << "3 threads";
}

INSTANTIATE_TEST_SUITE_P(Types, BalancedSplitTest, ::testing::Values("q4_0", "q4_k_m", "q8_0", "f16"));

}  // namespace
}  // namespace infertune
