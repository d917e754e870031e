// The GGUF reader on valid input: hand-built images (structure, typed accessors, tensor data views)
// and every fixture file, checked against values computed independently of the reader.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/gguf/gguf_file.h"
#include "gguf_builder.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;
using ::testing::HasSubstr;

GgufImage sample_image(GgufBuilder b = {}) {
  b.kv_string("general.architecture", "llama")
      .kv_u32("llama.context_length", 2048)
      .kv("custom.u8", kU8, le_u8(200))
      .kv_i32("custom.negative", -5)
      .kv_u64("custom.big", UINT64_MAX)
      .kv_f32("llama.rope.freq_base", 10000.0f)
      .kv_f64("custom.f64", 0.125)
      .kv_bool("custom.flag", true)
      .kv_string_array("tokenizer.ggml.tokens", {"<s>", "a", "bc"})
      .kv_f32_array("tokenizer.ggml.scores", {0.0f, -1.5f, -2.5f});
  b.tensor("token_embd.weight", {8, 3}, kGgmlF32)
      .tensor("blk.0.attn_q.weight", {64, 2}, kGgmlQ8_0)
      .tensor("output_norm.weight", {8}, kGgmlF16);
  return b.build();
}

TEST(GgufReader, ParsesStructure) {
  const GgufImage image = sample_image();
  auto file = GgufFile::parse(image.bytes, "sample");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->data_offset(), image.data_offset);
  EXPECT_EQ(file->file_size(), image.bytes.size());
  ASSERT_EQ(file->metadata().size(), 10u);
  EXPECT_EQ(file->metadata()[0].key, "general.architecture");  // file order kept
  EXPECT_EQ(file->metadata()[9].key, "tokenizer.ggml.scores");
  EXPECT_EQ(file->metadata()[2].value.type(), GgufValueType::U8);

  ASSERT_EQ(file->tensors().size(), 3u);
  const GgufTensorInfo& q = file->tensors()[1];
  EXPECT_EQ(q.name, "blk.0.attn_q.weight");
  EXPECT_EQ(q.dims, (std::vector<uint64_t>{64, 2}));
  EXPECT_EQ(q.type, GgmlType::Q8_0);
  EXPECT_EQ(q.offset, image.tensor_offsets[1]);
  EXPECT_EQ(q.n_elements, 128u);
  EXPECT_EQ(q.n_bytes, 4u * 34u);  // 2 rows of 2 q8_0 blocks of 34 bytes
  EXPECT_EQ(file->tensors()[2].type, GgmlType::F16);
  EXPECT_EQ(file->tensors()[2].n_bytes, 16u);
}

TEST(GgufReader, AcceptsVersion2) {
  GgufBuilder b;
  b.version(2);
  auto file = GgufFile::parse(sample_image(b).bytes);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->version(), 2u);
}

TEST(GgufReader, TensorDataPointsIntoTheBytesAtDataOffsetPlusOffset) {
  const GgufImage image = sample_image();
  auto file = GgufFile::parse(image.bytes);
  ASSERT_TRUE(file.ok()) << file.error().message;
  for (size_t i = 0; i < file->tensors().size(); ++i) {
    const auto& t = file->tensors()[i];
    const auto data = file->tensor_data(t);
    EXPECT_EQ(data.data(), image.bytes.data() + image.data_offset + image.tensor_offsets[i]) << t.name;
    ASSERT_EQ(data.size(), image.tensor_bytes[i]) << t.name;
    for (size_t j = 0; j < data.size(); ++j) ASSERT_EQ(data[j], builder_data_byte(i, j)) << t.name << " byte " << j;
  }
}

TEST(GgufReader, HonoursACustomAlignment) {
  GgufBuilder b;
  b.kv_u32("general.alignment", 256).layout_alignment(256);
  const GgufImage image = sample_image(b);
  auto file = GgufFile::parse(image.bytes);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->alignment(), 256u);
  EXPECT_EQ(file->data_offset() % 256, 0u);
  EXPECT_EQ(file->data_offset(), image.data_offset);
  EXPECT_EQ(file->tensors()[1].offset, 256u);
  EXPECT_EQ(file->tensors()[2].offset, 512u);
}

TEST(GgufReader, FindsKeysAndTensors) {
  auto file = GgufFile::parse(sample_image().bytes);
  ASSERT_TRUE(file.ok());
  ASSERT_NE(file->find("custom.flag"), nullptr);
  EXPECT_EQ(file->find("custom.flag")->type(), GgufValueType::BOOL);
  EXPECT_EQ(file->find("custom.fla"), nullptr);
  EXPECT_EQ(file->find(""), nullptr);
  ASSERT_NE(file->find_tensor("output_norm.weight"), nullptr);
  EXPECT_EQ(file->find_tensor("output_norm.weight")->dims, (std::vector<uint64_t>{8}));
  EXPECT_EQ(file->find_tensor("output.weight"), nullptr);
}

TEST(GgufReader, TypedAccessors) {
  auto file = GgufFile::parse(sample_image().bytes, "sample");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(*file->get_uint("llama.context_length"), 2048u);
  EXPECT_EQ(*file->get_uint("custom.u8"), 200u);
  EXPECT_EQ(*file->get_uint("custom.big"), UINT64_MAX);
  EXPECT_EQ(*file->get_int("custom.negative"), -5);
  EXPECT_EQ(*file->get_int("custom.u8"), 200);
  EXPECT_FLOAT_EQ(static_cast<float>(*file->get_float("llama.rope.freq_base")), 10000.0f);
  EXPECT_DOUBLE_EQ(*file->get_float("custom.f64"), 0.125);
  EXPECT_TRUE(*file->get_bool("custom.flag"));
  EXPECT_EQ(*file->get_string("general.architecture"), "llama");
  auto tokens = file->get_array("tokenizer.ggml.tokens", GgufValueType::STRING);
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(std::get<std::vector<std::string>>((*tokens)->elements), (std::vector<std::string>{"<s>", "a", "bc"}));
  auto scores = file->get_array("tokenizer.ggml.scores", GgufValueType::F32);
  ASSERT_TRUE(scores.ok());
  EXPECT_EQ(std::get<std::vector<float>>((*scores)->elements), (std::vector<float>{0.0f, -1.5f, -2.5f}));
}

TEST(GgufReader, TypedAccessorErrors) {
  auto file = GgufFile::parse(sample_image().bytes, "sample");
  ASSERT_TRUE(file.ok());
  EXPECT_THAT(file->get_uint("llama.missing").error().message, HasSubstr("sample: key 'llama.missing' not found"));
  EXPECT_THAT(file->get_string("no.such").error().message, HasSubstr("key 'no.such' not found"));
  EXPECT_THAT(file->get_uint("custom.negative").error().message, HasSubstr("key 'custom.negative' holds -5"));
  EXPECT_THAT(file->get_uint("llama.rope.freq_base").error().message,
              HasSubstr("key 'llama.rope.freq_base' has type f32, expected an unsigned integer"));
  EXPECT_THAT(file->get_uint("custom.flag").error().message, HasSubstr("has type bool"));
  EXPECT_THAT(file->get_int("custom.big").error().message, HasSubstr("does not fit in an int64"));
  EXPECT_THAT(file->get_float("llama.context_length").error().message, HasSubstr("has type u32, expected f32 or f64"));
  EXPECT_THAT(file->get_bool("custom.u8").error().message, HasSubstr("key 'custom.u8' has type u8, expected bool"));
  EXPECT_THAT(file->get_string("tokenizer.ggml.tokens").error().message,
              HasSubstr("has type array of string, expected string"));
  EXPECT_THAT(file->get_array("tokenizer.ggml.scores", GgufValueType::I32).error().message,
              HasSubstr("key 'tokenizer.ggml.scores' has type array of f32, expected array of i32"));
  EXPECT_THAT(file->get_array("general.architecture", GgufValueType::STRING).error().message,
              HasSubstr("has type string, expected array of string"));
}

TEST(GgufReader, ArraysOfArraysForKeysWithoutAFixedType) {
  GgufBuilder b;
  const auto inner_a = gguf_array(kU16, 2, concat({le_u8(1), le_u8(0), le_u8(2), le_u8(0)}));
  const auto inner_b = gguf_array(kString, 1, gguf_string("x"));
  b.kv("custom.nested", kArray, gguf_array(kArray, 2, concat({inner_a, inner_b})));
  auto file = GgufFile::parse(b.build().bytes);
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto nested = file->get_array("custom.nested", GgufValueType::ARRAY);
  ASSERT_TRUE(nested.ok());
  const auto& arrays = std::get<std::vector<GgufArray>>((*nested)->elements);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(std::get<std::vector<uint16_t>>(arrays[0].elements), (std::vector<uint16_t>{1, 2}));
  EXPECT_EQ(std::get<std::vector<std::string>>(arrays[1].elements), (std::vector<std::string>{"x"}));
}

TEST(GgufReader, MetadataOnlyFileMayEndWithoutPadding) {
  GgufBuilder b;
  b.kv_string("general.architecture", "gpt2").kv_string("tokenizer.ggml.model", "gpt2");
  const GgufImage image = b.build();
  ASSERT_NE(image.bytes.size() % 32, 0u);
  auto file = GgufFile::parse(image.bytes);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(file->tensors().empty());
}

// A real-size vocabulary (128k tokens with scores, types and 280k merges) parses, and fast: the time is
// printed, not asserted (DESIGN.md: timed performance is measured by benchmarks, not unit tests).
TEST(GgufReader, LargeVocabularyHeader) {
  constexpr size_t kTokens = 128 * 1024, kMerges = 280'000;
  std::vector<std::string> tokens(kTokens), merges(kMerges);
  std::vector<float> scores(kTokens);
  std::vector<int32_t> types(kTokens, 1);
  for (size_t i = 0; i < kTokens; ++i) {
    tokens[i] = fmt::format("tok{}", i);
    scores[i] = -static_cast<float>(i);
  }
  for (size_t i = 0; i < kMerges; ++i) merges[i] = fmt::format("m{} x{}", i, i % 977);
  GgufBuilder b;
  b.kv_string("general.architecture", "llama")
      .kv_string_array("tokenizer.ggml.tokens", tokens)
      .kv_f32_array("tokenizer.ggml.scores", scores)
      .kv_i32_array("tokenizer.ggml.token_type", types)
      .kv_string_array("tokenizer.ggml.merges", merges);
  const GgufImage image = b.build();
  const auto start = std::chrono::steady_clock::now();
  auto file = GgufFile::parse(image.bytes);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(file.ok()) << file.error().message;
  std::printf("parsed a %zu-byte header with %zu tokens and %zu merges in %.1f ms\n", image.bytes.size(), kTokens,
              kMerges, ms);
  auto parsed = file->get_array("tokenizer.ggml.tokens", GgufValueType::STRING);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(std::get<std::vector<std::string>>((*parsed)->elements), tokens);
  EXPECT_EQ(std::get<std::vector<float>>((*file->get_array("tokenizer.ggml.scores", GgufValueType::F32))->elements),
            scores);
  EXPECT_EQ((*file->get_array("tokenizer.ggml.merges", GgufValueType::STRING))->size(), kMerges);
}

TEST(GgufReader, OpenReportsMissingAndEmptyFiles) {
  auto missing = GgufFile::open("/nonexistent/model.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/model.gguf"));

  const auto path = test::temp_dir() / "empty.gguf";
  std::ofstream(path).close();
  auto empty = GgufFile::open(path.string());
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("empty.gguf: truncated file: magic at offset 0"));

  auto directory = GgufFile::open(test::temp_dir().string());
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.error().message, HasSubstr("not a regular file"));
}

// ---- fixtures -----------------------------------------------------------------------------------

class GgufFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufFixture, ParsesAndTensorDataMatchesTheFile) {
  const auto path = test::fixture_path(GetParam());
  auto file = GgufFile::open(path.string());
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->file_size(), std::filesystem::file_size(path));
  EXPECT_TRUE(file->get_string("general.architecture").ok());
  auto tokens = file->get_array("tokenizer.ggml.tokens", GgufValueType::STRING);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  EXPECT_GT((*tokens)->size(), 0u);

  const auto bytes = test::read_file_bytes(path);
  const std::byte* base = file->tensors().empty() ? nullptr : file->tensor_data(file->tensors()[0]).data();
  for (const auto& t : file->tensors()) {
    const auto data = file->tensor_data(t);
    ASSERT_EQ(data.size(), t.n_bytes) << t.name;
    EXPECT_EQ(data.data() - base, static_cast<std::ptrdiff_t>(t.offset - file->tensors()[0].offset)) << t.name;
    ASSERT_TRUE(std::equal(data.begin(), data.end(), bytes.begin() + file->data_offset() + t.offset)) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(All, GgufFixture, ::testing::ValuesIn(test::fixture_gguf_files()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GgufFixture);  // no fixtures: FixturesDirectory.Exists says where

TEST(FixturesDirectory, Exists) {
  const auto models = test::fixture_path("models");
  ASSERT_TRUE(std::filesystem::is_directory(models))
      << models.string() << " is not a directory: the tests read the shared fixtures from there; set "
      << "INFERTUNE_FIXTURES_DIR=<the fixtures folder>, or configure with -DINFERTUNE_FIXTURES_DIR=<it>";
  EXPECT_FALSE(test::fixture_gguf_files().empty()) << "no .gguf file under " << models.parent_path().string();
}

// Layout numbers below were computed by an independent Python reading of the fixtures.
TEST(GgufFixtures, LayoutOfTheModels) {
  struct Expected {
    const char* name;
    size_t tensors, kvs;
    uint64_t data_offset;
  };
  for (const Expected& e :
       {Expected{"models/stories260K.gguf", 48, 19, 14112}, Expected{"models/fixture-llama-f32.gguf", 39, 19, 13568},
        Expected{"models/fixture-llama-Q4_K_M.gguf", 39, 20, 13600},
        Expected{"models/fixture-qwen2-Q8_0.gguf", 51, 20, 14176},
        Expected{"vocab/ggml-vocab-deepseek-llm.gguf", 0, 23, 3970176}}) {
    auto file = GgufFile::open(test::fixture_path(e.name).string());
    ASSERT_TRUE(file.ok()) << file.error().message;
    EXPECT_EQ(file->tensors().size(), e.tensors) << e.name;
    EXPECT_EQ(file->metadata().size(), e.kvs) << e.name;
    EXPECT_EQ(file->data_offset(), e.data_offset) << e.name;
  }
}

TEST(GgufFixtures, HyperParametersOfTheLlamaFixture) {  // values from fixtures/README.md
  auto file = GgufFile::open(test::fixture_path("models/fixture-llama-f32.gguf").string());
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(*file->get_string("general.architecture"), "llama");
  EXPECT_EQ(*file->get_uint("llama.embedding_length"), 256u);
  EXPECT_EQ(*file->get_uint("llama.block_count"), 4u);
  EXPECT_EQ(*file->get_uint("llama.attention.head_count"), 8u);
  EXPECT_EQ(*file->get_uint("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(*file->get_uint("llama.feed_forward_length"), 512u);
  EXPECT_DOUBLE_EQ(*file->get_float("llama.rope.freq_base"), 10000.0);
  EXPECT_FLOAT_EQ(static_cast<float>(*file->get_float("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_EQ((*file->get_array("tokenizer.ggml.tokens", GgufValueType::STRING))->size(), 512u);
  const GgufTensorInfo* embd = file->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->dims, (std::vector<uint64_t>{256, 512}));
  EXPECT_EQ(embd->type, GgmlType::F32);
  const GgufTensorInfo* ffn = file->find_tensor("blk.3.ffn_up.weight");
  ASSERT_NE(ffn, nullptr);
  EXPECT_EQ(ffn->dims, (std::vector<uint64_t>{256, 512}));
}

TEST(GgufFixtures, QuantizedTypesOfTheQ4KMFixture) {
  auto file = GgufFile::open(test::fixture_path("models/fixture-llama-Q4_K_M.gguf").string());
  ASSERT_TRUE(file.ok()) << file.error().message;
  std::map<GgmlType, int> count;
  for (const auto& t : file->tensors()) ++count[t.type];
  EXPECT_GT(count[GgmlType::Q4_K], 0);
  EXPECT_GT(count[GgmlType::Q6_K], 0);
  EXPECT_GT(count[GgmlType::F32], 0);  // norms stay f32
  EXPECT_EQ(file->find_tensor("blk.3.ffn_up.weight")->n_bytes, 256u / 256 * 144 * 512);
}

}  // namespace
}  // namespace infertune
