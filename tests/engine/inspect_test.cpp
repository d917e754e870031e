// `infertune inspect` end to end on the fixtures, and the value renderings it uses.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "engine/gguf/gguf_file.h"
#include "engine/inspect/tensor_totals.h"
#include "engine/inspect/value_text.h"
#include "test_support.h"

namespace infertune {
namespace {

using test::fixture_path;
using test::infertune_binary;
using test::run_command;

std::string inspect(const std::string& args) {
  const auto r = run_command(infertune_binary() + " inspect " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

TEST(Inspect, TextShowsMetadataTensorsTotalsAndArchitecture) {
  const std::string out = inspect(fixture_path("models/fixture-llama-Q4_K_M.gguf").string());
  EXPECT_NE(out.find("GGUF v3, alignment 32"), std::string::npos) << out;
  EXPECT_NE(out.find("general.architecture"), std::string::npos);
  EXPECT_NE(out.find("... (512 total)]"), std::string::npos) << "long arrays are abbreviated";
  EXPECT_NE(out.find("blk.2.ffn_down.weight     q6_K     512 x 256"), std::string::npos) << out;
  EXPECT_NE(out.find("totals: 39 tensors, 2492672 parameters"), std::string::npos) << out;
  EXPECT_NE(out.find("architecture: llama, 4 layers, dim 256, 8 heads (2 KV heads"), std::string::npos) << out;
  EXPECT_NE(out.find("model check: ok"), std::string::npos) << out;
}

TEST(Inspect, JsonTotalsAgreeWithTheTensorTable) {
  const auto j = nlohmann::json::parse(inspect("--json " + fixture_path("models/fixture-llama-Q4_K_M.gguf").string()));
  uint64_t params = 0, bytes = 0, q6k_bytes = 0;
  for (const auto& t : j["tensors"]) {
    params += t["elements"].get<uint64_t>();
    bytes += t["bytes"].get<uint64_t>();
    if (t["type"] == "q6_K") q6k_bytes += t["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(j["totals"]["parameters"], params);
  EXPECT_EQ(j["totals"]["bytes"], bytes);
  EXPECT_EQ(j["totals"]["by_type"]["q6_K"]["bytes"], q6k_bytes);
  EXPECT_NEAR(j["totals"]["bits_per_weight"].get<double>(), 8.0 * bytes / params, 1e-9);
  EXPECT_EQ(j["architecture"]["loadable"], true);
  EXPECT_EQ(j["architecture"]["n_head_kv"], 2);
  EXPECT_EQ(j["metadata"][0]["key"], "general.architecture");
  EXPECT_EQ(j["metadata"][0]["value"], "llama");
}

TEST(Inspect, MalformedFileIsRefusedWithItsOffset) {
  const auto bytes = test::read_file_bytes(fixture_path("models/fixture-llama-f32.gguf"));
  const auto path = test::temp_dir() / "truncated.gguf";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 1000);
  const auto r = run_command(infertune_binary() + " inspect " + path.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("truncated.gguf"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("offset"), std::string::npos) << r.output;
}

TEST(Inspect, VocabularyOnlyFileSaysWhyItIsNotAModel) {
  const std::string out = inspect(fixture_path("vocab/ggml-vocab-gpt-2.gguf").string());
  EXPECT_NE(out.find("architecture: not loadable:"), std::string::npos) << out;
}

TEST(ValueText, AbbreviatesArraysAndQuotesStrings) {
  GgufValue tokens{GgufArray{std::vector<std::string>{"a", "b\"c", "d"}}};
  EXPECT_EQ(value_to_text(tokens, 2), R"(["a", "b\"c", ... (3 total)])");
  EXPECT_EQ(value_to_text(GgufValue{uint8_t{7}}), "7");
  EXPECT_EQ(value_to_text(GgufValue{true}), "true");
  const auto j = value_to_json(tokens, 2);
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["element_type"], "string");
  EXPECT_EQ(j["head"].size(), 2u);
}

TEST(ValueText, NestedArraysRender) {
  GgufArray inner{std::vector<int32_t>{1, 2}};
  GgufValue outer{GgufArray{std::vector<GgufArray>{inner, inner}}};
  EXPECT_EQ(value_to_text(outer), "[[1, 2], [1, 2]]");
}

TEST(TensorTotals, SumsPerType) {
  std::vector<GgufTensorInfo> tensors(3);
  tensors[0].type = GgmlType::F32, tensors[0].n_elements = 10, tensors[0].n_bytes = 40;
  tensors[1].type = GgmlType::Q4_0, tensors[1].n_elements = 64, tensors[1].n_bytes = 36;
  tensors[2].type = GgmlType::Q4_0, tensors[2].n_elements = 32, tensors[2].n_bytes = 18;
  const TensorTotals t = tensor_totals(tensors);
  EXPECT_EQ(t.parameters, 106u);
  EXPECT_EQ(t.bytes, 94u);
  EXPECT_EQ(t.by_type.at(GgmlType::Q4_0).tensors, 2u);
  EXPECT_EQ(t.by_type.at(GgmlType::Q4_0).bytes, 54u);
  EXPECT_NEAR(t.bits_per_weight(), 8.0 * 94 / 106, 1e-12);
}

}  // namespace
}  // namespace infertune
