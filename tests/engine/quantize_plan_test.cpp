// `infertune quantize`'s plan and writer (engine/quantize) on the llama fixtures: which tensors are converted and
// which copied, the type names llama-quantize accepts, the errors for requantizing without --allow-requantize and for
// an override whose block does not divide a row, and a written file that loads and keeps every copied tensor's bytes.
// (Each file type's bytes against llama.cpp's own quantizer: tests/engine/quantize_crosscheck.py.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/quantize/model_quantizer.h"
#include "engine/quantize/quantize_plan.h"
#include "test_support.h"

namespace infertune {
namespace {

GgufFile open_fixture(const std::string& name) {
  auto file = GgufFile::open(test::fixture_path("models/" + name).string());
  EXPECT_TRUE(file.ok()) << file.error().message;
  return std::move(*file);
}

QuantizeOptions options_for(const std::string& type) {
  QuantizeOptions o;
  o.file_type = *quantize_file_type(type);
  o.threads = 2;
  return o;
}

TEST(QuantizeFileType, AcceptsLlamaQuantizesNamesAliasesAndNumbers) {
  EXPECT_EQ(quantize_file_type("Q4_K_M")->name, "q4_k_m");
  EXPECT_EQ(quantize_file_type("q8_0")->name, "q8_0");
  EXPECT_EQ(quantize_file_type("Q4_K")->name, "q4_k_m");  // llama-quantize's alias
  EXPECT_EQ(quantize_file_type("q5_k")->name, "q5_k_m");
  EXPECT_EQ(quantize_file_type("15")->name, "q4_k_m");
  EXPECT_FALSE(quantize_file_type("q4_k_x"));
  EXPECT_FALSE(quantize_file_type("99"));
  EXPECT_NE(quantize_type_names().find("Q4_K_M"), std::string::npos);
}

TEST(QuantizePlan, ConvertsTheWeightsAndCopiesNormsAsTheyAre) {
  const GgufFile file = open_fixture("fixture-llama-f32.gguf");
  auto plan = plan_quantization(file, options_for("q4_k_m"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->size(), file.tensors().size());
  for (const TensorPlan& p : *plan) {
    const bool weight = p.source->dims.size() >= 2;
    EXPECT_EQ(p.convert(), weight) << p.source->name;
    if (!weight) {
      EXPECT_EQ(p.type, GgmlType::F32) << p.source->name;
    }
    if (p.source->name == "output.weight") {
      EXPECT_EQ(p.type, GgmlType::Q6_K);
    }
  }
}

TEST(QuantizePlan, LeavesTheOutputTensorWhenAsked) {
  const GgufFile file = open_fixture("fixture-llama-f32.gguf");
  QuantizeOptions o = options_for("q4_0");
  o.leave_output_tensor = true;
  auto plan = plan_quantization(file, o);
  ASSERT_TRUE(plan.ok());
  for (const TensorPlan& p : *plan) {
    if (p.source->name == "output.weight") {
      EXPECT_FALSE(p.convert());
    }
  }
}

TEST(QuantizePlan, RequantizingNeedsAllowRequantize) {
  const GgufFile file = open_fixture("fixture-llama-Q8_0.gguf");
  auto refused = plan_quantization(file, options_for("q4_0"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--allow-requantize"), std::string::npos) << refused.error().message;
  QuantizeOptions o = options_for("q4_0");
  o.allow_requantize = true;
  EXPECT_TRUE(plan_quantization(file, o).ok());
}

TEST(QuantizePlan, AnOverrideWhoseBlockDoesNotDivideARowIsAnError) {
  // stories260K's rows have 64 values: Q4_K's 256-value block does not divide them (the mix itself falls back).
  const GgufFile file = open_fixture("stories260K.gguf");
  QuantizeOptions o = options_for("q8_0");
  o.token_embedding_type = GgmlType::Q4_K;
  auto refused = plan_quantization(file, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--token-embedding-type q4_K"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("64 values"), std::string::npos) << refused.error().message;
  o.token_embedding_type = GgmlType::Q4_0;
  auto plan = plan_quantization(file, o);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  for (const TensorPlan& p : *plan) {
    if (p.source->name == "token_embd.weight") {
      EXPECT_EQ(p.type, GgmlType::Q4_0);
    }
  }
}

TEST(QuantizeModel, WritesAFileThatLoadsWithThePlannedTypesAndCopiedBytes) {
  const GgufFile file = open_fixture("fixture-llama-f32.gguf");
  const QuantizeOptions o = options_for("q4_k_m");
  auto plan = plan_quantization(file, o);
  ASSERT_TRUE(plan.ok());
  const std::string out = (std::filesystem::temp_directory_path() / "infertune-quantize-test.gguf").string();
  size_t reported = 0;
  auto summary = quantize_model(file, *plan, o, out, [&](const TensorPlan&, size_t, size_t) { ++reported; });
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_EQ(reported, plan->size());
  EXPECT_EQ(summary->converted + summary->copied, plan->size());
  auto written = GgufFile::open(out);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(*written->get_uint("general.file_type"), o.file_type.llama_ftype);
  EXPECT_EQ(*written->get_uint("general.quantization_version"), 2u);
  for (size_t i = 0; i < plan->size(); ++i) {
    const GgufTensorInfo& t = written->tensors()[i];
    EXPECT_EQ(t.name, (*plan)[i].source->name);
    EXPECT_EQ(t.type, (*plan)[i].type) << t.name;
    if (!(*plan)[i].convert()) {
      const auto a = file.tensor_data(*(*plan)[i].source), b = written->tensor_data(t);
      EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << t.name;
    }
  }
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace infertune
