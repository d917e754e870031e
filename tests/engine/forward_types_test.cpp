// Every weight type the engine accepts, in the synthesized tiny model, against the same model with each
// tensor decoded to f32. On the scalar reference kernels both run float activations over bit-identical
// weight values, so the logits must agree to float rounding: this catches a type that loads but is
// decoded wrongly. F16 / BF16 are bounded by the activation rounding instead: their activations are rounded
// to the weight type, the f32 model's are not. (The SIMD kernels quantize activations to int8; they are held
// to the scalar kernels by tests/kernels/matmul_simd_accuracy_test.cpp and to llama.cpp by the fixture tests.)
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <iostream>
#include <set>

#include "forward_test_models.h"
#include "kernels/matmul/matmul_registry.h"

namespace infertune {
namespace {

struct TypeCase {
  const char* file_type;  // as `synth --type` takes it
  bool pure;              // every weight in the base type
  GgmlType expect;        // a type the model must then contain
  ModelArch arch = ModelArch::Llama;
  GgmlType also = expect;  // and a second one (the mixes)
};

class ForwardTypesTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(ForwardTypesTest, MatchesF32ForwardOnDequantizedWeights) {
  const TypeCase& tc = GetParam();
  const ScopedMatmulVariant scalar_kernels("scalar");
  auto bytes = test::synth_tiny(tc.arch, tc.file_type, tc.pure);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto model = Model::from_bytes(std::move(*bytes), tc.file_type);
  ASSERT_TRUE(model.ok()) << model.error().message;

  std::set<GgmlType> types;
  for (const GgufTensorInfo& t : model->file().tensors()) types.insert(t.type);
  for (GgmlType type : {tc.expect, tc.also}) {
    ASSERT_TRUE(types.contains(type)) << "the synthesized model has no " << ggml_type_name(type) << " tensor";
  }

  test::GgufEdit decode_everything;
  decode_everything.dequantize = true;
  auto f32_bytes = test::rewrite_gguf(model->file(), decode_everything);
  ASSERT_TRUE(f32_bytes.ok()) << f32_bytes.error().message;
  auto f32_model = Model::from_bytes(std::move(*f32_bytes), "dequantized");
  ASSERT_TRUE(f32_model.ok()) << f32_model.error().message;

  const auto tokens = test::test_tokens(24);
  auto got = test::logits_all(*model, tokens);
  auto want = test::logits_all(*f32_model, tokens);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(want.ok()) << want.error().message;
  const test::LogitsDiff d = test::logits_diff(*got, *want);
  std::cout << fmt::format("[type] {:7} {:5} vs f32 of its weights: max/std {:.2e} rms/std {:.2e}\n", tc.file_type,
                           tc.arch == ModelArch::Llama ? "llama" : "qwen2", d.max_over_std, d.rms_over_std);
  if (tc.expect == GgmlType::F16 || tc.expect == GgmlType::BF16) {
    // F16 / BF16 weights meet activations rounded to their type (ggml's pairing, kernels/matmul), the f32
    // model meets them unrounded: the logits differ by that rounding, in rms a few units of the type's
    // precision (2^-11 resp. 2^-8; measured 7.7e-4 and 6.2e-3). A decoding error is of order 1.
    EXPECT_LE(d.rms_over_std, tc.expect == GgmlType::F16 ? 2e-3 : 1.6e-2);
  } else {
    EXPECT_LE(d.max_over_std, 1e-5);
  }
}

const TypeCase kCases[] = {
    {"f32", false, GgmlType::F32},
    {"f16", false, GgmlType::F16},
    {"bf16", false, GgmlType::BF16},
    {"q4_0", true, GgmlType::Q4_0},
    {"q4_1", true, GgmlType::Q4_1},
    {"q5_0", true, GgmlType::Q5_0},
    {"q5_1", true, GgmlType::Q5_1},
    {"q8_0", true, GgmlType::Q8_0},
    {"q2_k", true, GgmlType::Q2_K},
    {"q3_K", true, GgmlType::Q3_K},
    {"q4_K", true, GgmlType::Q4_K},
    {"q5_K", true, GgmlType::Q5_K},
    {"q6_k", true, GgmlType::Q6_K},
    {"iq4_nl", true, GgmlType::IQ4_NL},
    {"iq4_xs", true, GgmlType::IQ4_XS},
    {"mxfp4_moe", true, GgmlType::MXFP4},
    {"mxfp4_moe", false, GgmlType::MXFP4, ModelArch::Qwen3Moe, GgmlType::Q8_0},  // experts mxfp4, the rest q8_0
    {"q4_k_m", false, GgmlType::Q4_K, ModelArch::Llama, GgmlType::Q6_K},
    {"q8_0", false, GgmlType::Q8_0, ModelArch::Qwen2},
};

std::string case_name(const ::testing::TestParamInfo<TypeCase>& info) {
  return fmt::format("{}_{}{}_{}", info.param.file_type, info.param.pure ? "pure_" : "",
                     ggml_type_name(info.param.expect), model_arch_name(info.param.arch));
}

INSTANTIATE_TEST_SUITE_P(EveryType, ForwardTypesTest, ::testing::ValuesIn(kCases), case_name);

}  // namespace
}  // namespace infertune
