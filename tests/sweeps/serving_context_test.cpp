// The context a recommendation's command lines carry (sweeps/recommend/serving_context.h) on the llama fixture's
// real shape: the default target (4096, or the training context when smaller), a candidate's own larger context
// kept, the memory at the command's context from the memory model (its KV cache in proportion to the cells),
// --max-mem checked against it, and a model file that cannot be read said, not guessed.
#include <gtest/gtest.h>

#include "sweeps/recommend/candidates.h"
#include "sweeps/recommend/serving_context.h"
#include "test_support.h"

namespace infertune {
namespace {

Candidate candidate_at(int64_t n_ctx, const std::string& model) {
  Candidate c;
  c.config = {{"model", model}, {"n_ctx", n_ctx}, {"n_batch", 512}, {"n_ubatch", 256}, {"threads", 2}};
  c.model_path = model;
  return c;
}

// The fixture's shape with the training context set to `n_ctx_train`.
ModelShapeFn shapes_with_training_context(uint32_t n_ctx_train) {
  return [n_ctx_train](const std::string& path, const std::string&) -> Result<ModelShape> {
    auto shape = read_model_shape(path);
    if (shape) shape->config.n_ctx_train = n_ctx_train;
    return shape;
  };
}

const std::string kModel = test::fixture_path("models/fixture-llama-Q4_0.gguf").string();

TEST(ServingContext, DefaultIs4096OrTheTrainingContextWhenSmaller) {
  std::vector<Candidate> cs = {candidate_at(128, kModel), candidate_at(8192, kModel)};
  assign_serving_contexts(cs, 0, shapes_with_training_context(32768));
  EXPECT_EQ(cs[0].command_ctx, 4096);
  EXPECT_EQ(cs[1].command_ctx, 8192);  // a larger measured context is kept
  assign_serving_contexts(cs, 0, shapes_with_training_context(2048));
  EXPECT_EQ(cs[0].command_ctx, 2048);
  assign_serving_contexts(cs, 1000, shapes_with_training_context(2048));  // --min-ctx wins over the default
  EXPECT_EQ(cs[0].command_ctx, 1000);
}

TEST(ServingContext, MemoryIsTheModelsAtTheCommandsContext) {
  std::vector<Candidate> cs = {candidate_at(128, kModel), candidate_at(128, kModel)};
  assign_serving_contexts(cs, 2048, gguf_model_shapes());
  std::vector<Candidate> doubled = {candidate_at(128, kModel)};
  assign_serving_contexts(doubled, 4096, gguf_model_shapes());
  ASSERT_TRUE(cs[0].command_memory) << cs[0].command_memory_note;
  ASSERT_TRUE(doubled[0].command_memory) << doubled[0].command_memory_note;
  const MemoryPrediction& m = *cs[0].command_memory;
  EXPECT_GT(m.weights, 0u);
  EXPECT_GT(m.kv, 0u);
  EXPECT_EQ(doubled[0].command_memory->weights, m.weights);
  EXPECT_EQ(doubled[0].command_memory->kv, 2 * m.kv);  // twice the cells

  // --max-mem between the two: only the larger context is over it, and the reason names the context.
  const uint64_t limit = (m.total() + doubled[0].command_memory->total()) / 2;
  RecommendOptions options;
  options.max_mem_bytes = limit;
  apply_constraints(cs, options);
  apply_constraints(doubled, options);
  EXPECT_TRUE(cs[0].excluded_reason.empty()) << cs[0].excluded_reason;
  EXPECT_NE(doubled[0].excluded_reason.find("at -c 4096"), std::string::npos) << doubled[0].excluded_reason;
}

TEST(ServingContext, AnUnreadableModelIsSaidNotGuessed) {
  std::vector<Candidate> cs = {candidate_at(128, "/nowhere/model.gguf")};
  assign_serving_contexts(cs, 0, gguf_model_shapes());
  EXPECT_EQ(cs[0].command_ctx, 4096);
  EXPECT_FALSE(cs[0].command_memory);
  EXPECT_NE(cs[0].command_memory_note.find("/nowhere/model.gguf"), std::string::npos) << cs[0].command_memory_note;
}

}  // namespace
}  // namespace infertune
