// The GGUF v3 writer: byte-identical round trips of every fixture, agreement with the independent
// builder's layout, the metadata and tensor rules it enforces, and atomic replacement of the output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "gguf_builder.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;
using ::testing::HasSubstr;

GgufValue u32(uint32_t v) { return GgufValue{GgufValue::Storage(std::in_place_type<uint32_t>, v)}; }
GgufValue str(std::string v) { return GgufValue{GgufValue::Storage(std::in_place_type<std::string>, std::move(v))}; }

// Fills every tensor with the builder's byte pattern, so writer output can be compared with builder images.
Status pattern_fill(size_t index, const GgufTensorInfo&, std::span<std::byte> data) {
  for (size_t j = 0; j < data.size(); ++j) data[j] = builder_data_byte(index, j);
  return Status::success();
}

class GgufRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufRoundTrip, FromFileAndCopyWritesTheIdenticalBytes) {
  const auto path = fixture_path(GetParam());
  auto source = GgufFile::open(path.string());
  ASSERT_TRUE(source.ok()) << source.error().message;
  const GgufWriter writer = GgufWriter::from_file(*source);
  const auto out = temp_dir() / "copy.gguf";
  const Status written = writer.write_file(out.string(), copy_tensors_from(*source));
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".tmp"));
  const auto original = read_file_bytes(path);
  const auto copy = read_file_bytes(out);
  ASSERT_EQ(copy.size(), original.size());
  const auto mismatch = std::mismatch(copy.begin(), copy.end(), original.begin());
  EXPECT_TRUE(mismatch.first == copy.end()) << "first difference at byte " << (mismatch.first - copy.begin());

  auto in_memory = writer.write_memory(copy_tensors_from(*source));
  ASSERT_TRUE(in_memory.ok()) << in_memory.error().message;
  EXPECT_TRUE(*in_memory == original);
}

TEST_P(GgufRoundTrip, ReadWriteReadKeepsMetadataAndTensors) {
  auto first = GgufFile::open(fixture_path(GetParam()).string());
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto bytes = GgufWriter::from_file(*first).write_memory(copy_tensors_from(*first));
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto second = GgufFile::parse(*bytes, "second");
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(second->metadata() == first->metadata());
  ASSERT_TRUE(second->tensors() == first->tensors());
  for (const auto& t : first->tensors()) {
    const auto a = first->tensor_data(t);
    const auto b = second->tensor_data(*second->find_tensor(t.name));
    ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(All, GgufRoundTrip, ::testing::ValuesIn(test::fixture_gguf_files()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GgufRoundTrip);  // no fixtures: FixturesDirectory.Exists says where

// The builder lays files out as gguf-py does (pad_last); the writer must produce the same bytes.
TEST(GgufWriter, MatchesTheIndependentBuilderLayout) {
  for (uint32_t alignment : {32u, 64u, 4096u}) {
    GgufBuilder b;
    b.layout_alignment(alignment).pad_last(true);
    if (alignment != 32) b.kv_u32("general.alignment", alignment);
    b.kv_string("general.architecture", "llama")
        .kv_u32("llama.block_count", 1)
        .kv_bool("tokenizer.ggml.add_bos_token", true)
        .kv_string_array("tokenizer.ggml.tokens", {"a", "", "ccc"});
    b.tensor("a", {8, 3}, kGgmlF32).tensor("b", {64, 2}, kGgmlQ8_0).tensor("c", {7}, kGgmlF16);  // 14 bytes: padded
    const GgufImage image = b.build();
    auto parsed = GgufFile::parse(image.bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const GgufWriter writer = GgufWriter::from_file(*parsed);
    EXPECT_EQ(writer.alignment(), alignment);
    auto written = writer.write_memory(copy_tensors_from(*parsed));
    ASSERT_TRUE(written.ok()) << written.error().message;
    EXPECT_TRUE(*written == image.bytes) << "alignment " << alignment;
  }
}

TEST(GgufWriter, WritesANewFileThatReadsBack) {
  GgufWriter writer;
  writer.set("general.architecture", str("llama"));
  writer.set("llama.context_length", u32(128));
  ASSERT_TRUE(writer.add_tensor("w", {32, 3}, GgmlType::Q8_0).ok());
  ASSERT_TRUE(writer.add_tensor("norm", {5}, GgmlType::F32).ok());
  ASSERT_TRUE(writer.add_tensor("last", {3}, GgmlType::F16).ok());
  EXPECT_EQ(writer.tensors()[0].offset, 0u);
  EXPECT_EQ(writer.tensors()[1].offset, 128u);  // 3 * 34 = 102 bytes, rounded up to 32
  EXPECT_EQ(writer.tensors()[2].offset, 160u);  // 20 bytes, rounded up

  const auto path = temp_dir() / "new.gguf";
  ASSERT_TRUE(writer.write_file(path.string(), pattern_fill).ok());
  const auto bytes = read_file_bytes(path);
  auto file = GgufFile::parse(bytes, "new");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(*file->get_uint("llama.context_length"), 128u);
  EXPECT_EQ(file->data_offset() % 32, 0u);
  EXPECT_EQ(bytes.size(), file->data_offset() + 192);  // the last tensor's 6 bytes padded to 32, like gguf-py
  ASSERT_TRUE(file->tensors() == writer.tensors());
  // Zero padding after the tensor table and between and after the tensors.
  uint64_t header_end = file->data_offset();
  while (header_end > 0 && bytes[header_end - 1] == std::byte{0}) --header_end;
  for (uint64_t i = header_end; i < file->data_offset(); ++i) ASSERT_EQ(bytes[i], std::byte{0});
  const uint64_t d = file->data_offset();
  for (uint64_t i = d + 102; i < d + 128; ++i) ASSERT_EQ(bytes[i], std::byte{0}) << i;
  for (uint64_t i = d + 166; i < d + 192; ++i) ASSERT_EQ(bytes[i], std::byte{0}) << i;
  for (size_t t = 0; t < 3; ++t) {
    const auto data = file->tensor_data(file->tensors()[t]);
    for (size_t j = 0; j < data.size(); ++j) ASSERT_EQ(data[j], builder_data_byte(t, j));
  }
}

TEST(GgufWriter, MetadataOnlyFileEndsAfterTheTable) {
  GgufWriter writer;
  writer.set("general.architecture", str("gpt2"));
  auto bytes = writer.write_memory(pattern_fill);
  ASSERT_TRUE(bytes.ok());
  // magic + version + 2 counts + key (8 + 20) + type + value (8 + 4)
  EXPECT_EQ(bytes->size(), 24u + 28u + 4u + 12u);
  EXPECT_EQ(std::memcmp(bytes->data(), "GGUF\x03\0\0\0", 8), 0);
}

TEST(GgufWriter, SetReplacesInPlace) {
  GgufWriter writer;
  writer.set("a.x", u32(1));
  writer.set("b.y", u32(2));
  writer.set("a.x", str("again"));
  ASSERT_EQ(writer.metadata().size(), 2u);
  EXPECT_EQ(writer.metadata()[0].key, "a.x");
  EXPECT_EQ(std::get<std::string>(writer.metadata()[0].value.storage), "again");
}

TEST(GgufWriter, AlignmentIsStoredAsU32AndHonoured) {
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor("a", {3}, GgmlType::F32).ok());
  ASSERT_TRUE(writer.add_tensor("b", {3}, GgmlType::F32).ok());
  writer.set("general.alignment", GgufValue{GgufValue::Storage(std::in_place_type<uint64_t>, 64)});
  EXPECT_EQ(writer.alignment(), 64u);
  EXPECT_EQ(writer.metadata()[0].value.type(), GgufValueType::U32);
  EXPECT_EQ(writer.tensors()[1].offset, 64u);  // laid out again after the change
  auto bytes = writer.write_memory(pattern_fill);
  ASSERT_TRUE(bytes.ok());
  auto file = GgufFile::parse(*bytes);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->alignment(), 64u);
  EXPECT_EQ(file->data_offset() % 64, 0u);
  EXPECT_EQ(file->tensors()[1].offset, 64u);
  EXPECT_EQ(bytes->size(), file->data_offset() + 128);
}

TEST(GgufWriter, AddTensorRefusesBadTensors) {
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor("ok", {32}, GgmlType::Q4_0).ok());
  const auto error = [&](std::string name, std::vector<uint64_t> dims, GgmlType type) {
    Status s = writer.add_tensor(std::move(name), std::move(dims), type);
    return s.ok() ? std::string("<accepted>") : s.error().message;
  };
  EXPECT_THAT(error("ok", {32}, GgmlType::F32), HasSubstr("duplicate tensor name 'ok'"));
  EXPECT_THAT(error("", {32}, GgmlType::F32), HasSubstr("empty tensor name"));
  EXPECT_THAT(error(std::string(64, 'x'), {32}, GgmlType::F32), HasSubstr("the limit is 63"));
  EXPECT_THAT(error("t", {}, GgmlType::F32), HasSubstr("tensor 't': 0 dimensions"));
  EXPECT_THAT(error("t", {1, 1, 1, 1, 1}, GgmlType::F32), HasSubstr("5 dimensions"));
  EXPECT_THAT(error("t", {4, 0}, GgmlType::F32), HasSubstr("a dimension is zero"));
  EXPECT_THAT(error("t", {48}, GgmlType::Q4_K),
              HasSubstr("row length 48 is not a multiple of the q4_K block size 256"));
  EXPECT_THAT(error("t", {uint64_t{1} << 40, uint64_t{1} << 40}, GgmlType::F32), HasSubstr("element count overflows"));
  EXPECT_THAT(error("t", {uint64_t{1} << 62}, GgmlType::F32), HasSubstr("overflows 64 bits"));
  EXPECT_THAT(error("t", {8}, static_cast<GgmlType>(4)), HasSubstr("unknown ggml type id 4"));
  EXPECT_EQ(writer.tensors().size(), 1u);
}

TEST(GgufWriter, RefusesMetadataThatTheReaderWouldRefuse) {
  const auto error = [](const std::string& key, GgufValue value) {
    GgufWriter writer;
    writer.set(key, std::move(value));
    auto bytes = writer.write_memory(pattern_fill);
    return bytes.ok() ? std::string("<written>") : bytes.error().message;
  };
  EXPECT_THAT(error("tokenizer.ggml.scores", GgufValue{GgufArray{std::vector<int32_t>{1}}}),
              HasSubstr("key 'tokenizer.ggml.scores': must be an array of f32, not an array of i32"));
  EXPECT_THAT(error("llama.context_length", str("x")), HasSubstr("must be an unsigned integer"));
  EXPECT_THAT(error("general.alignment", u32(3)), HasSubstr("not a power of two"));
  EXPECT_THAT(error("general.alignment", GgufValue{GgufValue::Storage(std::in_place_type<float>, 32.0f)}),
              HasSubstr("must be a u32, not f32"));
  EXPECT_THAT(error("", u32(1)), HasSubstr("empty metadata key"));
  GgufArray deep{std::vector<uint8_t>{1}};
  for (int i = 1; i < 17; ++i) deep = GgufArray{std::vector<GgufArray>{deep}};
  EXPECT_THAT(error("custom.deep", GgufValue{deep}), HasSubstr("nested more than 16 levels"));
}

TEST(GgufWriter, FailedWriteLeavesNoFileAndKeepsTheOldOne) {
  GgufWriter writer;
  ASSERT_TRUE(writer.add_tensor("a", {4}, GgmlType::F32).ok());
  ASSERT_TRUE(writer.add_tensor("b", {4}, GgmlType::F32).ok());
  const auto failing = [](size_t index, const GgufTensorInfo&, std::span<std::byte>) -> Status {
    if (index == 1) return fail("source exhausted");
    return Status::success();
  };
  const auto dir = temp_dir();
  const auto path = dir / "out.gguf";
  Status s = writer.write_file(path.string(), failing);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("tensor 'b': source exhausted"));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));

  std::ofstream(path) << "old contents";
  ASSERT_FALSE(writer.write_file(path.string(), failing).ok());
  EXPECT_EQ(std::filesystem::file_size(path), 12u);  // untouched
  ASSERT_TRUE(writer.write_file(path.string(), pattern_fill).ok());
  EXPECT_TRUE(GgufFile::open(path.string()).ok());  // replaced
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

TEST(GgufWriter, WriteFileReportsAnUnwritableDirectory) {
  GgufWriter writer;
  writer.set("general.name", str("x"));
  Status s = writer.write_file("/nonexistent-dir/out.gguf", pattern_fill);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("/nonexistent-dir/out.gguf.tmp"));
}

TEST(GgufWriter, CopyTensorsFromNamesAMissingTensor) {
  GgufBuilder b;
  b.tensor("present", {8}, kGgmlF32);
  const GgufImage image = b.build();
  auto source = GgufFile::parse(image.bytes, "source.gguf");
  ASSERT_TRUE(source.ok());
  GgufWriter writer = GgufWriter::from_file(*source);
  ASSERT_TRUE(writer.add_tensor("absent", {8}, GgmlType::F32).ok());
  auto bytes = writer.write_memory(copy_tensors_from(*source));
  ASSERT_FALSE(bytes.ok());
  EXPECT_THAT(bytes.error().message, HasSubstr("tensor 'absent': not found in source.gguf"));
}

}  // namespace
}  // namespace infertune
