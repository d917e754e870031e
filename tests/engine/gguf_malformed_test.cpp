// Every malformed-file case the GGUF reader refuses, each made from a valid image by changing one
// thing, with the error text checked for what is wrong and where (offset, key or tensor name).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "gguf_builder.h"

namespace infertune {
namespace {

using test::GgufBuilder;
using test::GgufImage;
using namespace test;  // type ids
using ::testing::HasSubstr;

// A small valid model: three metadata kinds (string, scalar, arrays) and three tensors of three types.
GgufBuilder valid_builder() {
  GgufBuilder b;
  b.kv_string("general.architecture", "llama")
      .kv_u32("llama.context_length", 2048)
      .kv_f32("llama.rope.freq_base", 10000.0f)
      .kv_string_array("tokenizer.ggml.tokens", {"<s>", "a", "b"})
      .kv_f32_array("tokenizer.ggml.scores", {0.0f, -1.0f, -2.0f})
      .kv_i32_array("tokenizer.ggml.token_type", {3, 1, 1});
  b.tensor("token_embd.weight", {8, 3}, kGgmlF32)
      .tensor("blk.0.attn_q.weight", {64, 2}, kGgmlQ8_0)
      .tensor("output_norm.weight", {8}, kGgmlF16);
  return b;
}

std::string parse_error(const std::vector<std::byte>& bytes) {
  auto file = GgufFile::parse(bytes, "bad.gguf");
  if (file.ok()) return "<parsed without error>";
  return file.error().message;
}

void expect_error(const std::vector<std::byte>& bytes, const std::vector<std::string>& phrases) {
  const std::string message = parse_error(bytes);
  EXPECT_THAT(message, HasSubstr("bad.gguf: "));
  for (const auto& phrase : phrases) EXPECT_THAT(message, HasSubstr(phrase));
}

void patch(std::vector<std::byte>& bytes, uint64_t at, const std::vector<std::byte>& value) {
  ASSERT_LE(at + value.size(), bytes.size());
  std::memcpy(bytes.data() + at, value.data(), value.size());
}

std::string at(uint64_t offset) { return fmt::format("offset {}", offset); }

TEST(GgufMalformed, TheBaseImageIsValid) {
  const GgufImage image = valid_builder().build();
  auto file = GgufFile::parse(image.bytes, "bad.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->tensors().size(), 3u);
}

TEST(GgufMalformed, BadMagic) {
  expect_error(valid_builder().magic("GGUX").build().bytes, {"bad magic 47 47 55 58", at(0)});
}

TEST(GgufMalformed, VersionOneIsRefused) {
  expect_error(valid_builder().version(1).build().bytes, {"version 1", at(4), "32-bit counts"});
}

TEST(GgufMalformed, UnknownVersion) {
  expect_error(valid_builder().version(4).build().bytes, {"unsupported GGUF version 4", at(4)});
}

TEST(GgufMalformed, BigEndianVersionIsNamed) {
  expect_error(valid_builder().version(0x03000000).build().bytes, {"big-endian", at(4)});
}

TEST(GgufMalformed, KvCountLargerThanTheFileCouldHold) {
  expect_error(valid_builder().kv_count(1'000'000).build().bytes, {"kv count 1000000", at(16)});
  expect_error(valid_builder().kv_count(UINT64_MAX).build().bytes, {"kv count 18446744073709551615", at(16)});
}

TEST(GgufMalformed, TensorCountLargerThanTheFileCouldHold) {
  expect_error(valid_builder().tensor_count(1'000'000).build().bytes, {"tensor count 1000000", at(8)});
  expect_error(valid_builder().tensor_count(UINT64_MAX).build().bytes, {"tensor count 18446744073709551615", at(8)});
}

TEST(GgufMalformed, KeyLengthPastTheEnd) {
  GgufImage image = valid_builder().build();
  patch(image.bytes, image.kv_offsets[1], le_u64(1'000'000'000));
  expect_error(image.bytes, {"metadata key", at(image.kv_offsets[1]), "length 1000000000 runs past the end"});
}

TEST(GgufMalformed, StringValueLengthPastTheEnd) {
  GgufBuilder b = valid_builder();
  b.kv("general.name", kString, concat({le_u64(1'000'000'000), gguf_string("abc")}));
  const GgufImage image = b.build();
  expect_error(image.bytes,
               {"key 'general.name'", at(image.value_type_offsets[6] + 4), "length 1000000000 runs past the end"});
}

TEST(GgufMalformed, ArrayLengthPastTheEnd) {
  GgufBuilder strings = valid_builder();
  strings.kv("custom.strings", kArray, gguf_array(kString, 1'000'000'000, {}));
  GgufImage image = strings.build();
  expect_error(image.bytes, {"key 'custom.strings'", at(image.value_type_offsets[6] + 4),
                             "1000000000 string elements runs past the end"});
  // A count whose byte size would overflow 64 bits is refused the same way, without allocating.
  GgufBuilder floats = valid_builder();
  floats.kv("custom.floats", kArray, gguf_array(kF32, uint64_t{1} << 62, {}));
  image = floats.build();
  expect_error(image.bytes, {"key 'custom.floats'", "4611686018427387904 f32 elements runs past the end"});
}

TEST(GgufMalformed, InvalidValueType) {
  GgufBuilder b = valid_builder();
  b.kv("custom.thing", 13, le_u32(0));
  const GgufImage image = b.build();
  expect_error(image.bytes, {"key 'custom.thing'", "invalid value type 13", at(image.value_type_offsets[6])});
}

TEST(GgufMalformed, InvalidArrayElementType) {
  GgufBuilder b = valid_builder();
  b.kv("custom.thing", kArray, gguf_array(0xffffffffu, 0, {}));
  const GgufImage image = b.build();
  expect_error(image.bytes,
               {"key 'custom.thing'", "invalid array element type 4294967295", at(image.value_type_offsets[6] + 4)});
}

TEST(GgufMalformed, InvalidBoolValues) {
  GgufBuilder scalar = valid_builder();
  scalar.kv("custom.flag", kBool, le_u8(2));
  GgufImage image = scalar.build();
  expect_error(image.bytes, {"key 'custom.flag'", "invalid bool value 2", at(image.value_type_offsets[6] + 4)});

  GgufBuilder array = valid_builder();
  array.kv("custom.flags", kArray, gguf_array(kBool, 3, concat({le_u8(1), le_u8(0), le_u8(7)})));
  image = array.build();
  // element 2 sits after the type id (4), element type (4) and count (8)
  expect_error(image.bytes, {"key 'custom.flags'", "invalid bool value 7", at(image.value_type_offsets[6] + 18)});
}

TEST(GgufMalformed, EmptyKey) {
  GgufBuilder b = valid_builder();
  b.kv_u32("", 1);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"empty metadata key", at(image.kv_offsets[6])});
}

TEST(GgufMalformed, DuplicateKey) {
  GgufBuilder b = valid_builder();
  b.kv_u32("llama.context_length", 4096);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"duplicate key 'llama.context_length'", at(image.kv_offsets[6]),
                             "first at " + at(image.kv_offsets[1])});
}

// ---- known keys with the wrong type ---------------------------------------------------------------

struct WrongType {
  std::string key;
  uint32_t type;
  std::vector<std::byte> payload;
  std::string expected;
};

void PrintTo(const WrongType& c, std::ostream* os) { *os << c.key << " stored as type " << c.type; }

class GgufKnownKeyType : public ::testing::TestWithParam<WrongType> {};

TEST_P(GgufKnownKeyType, IsRefusedWithKeyOffsetAndTypes) {
  const WrongType& c = GetParam();
  GgufBuilder b;
  b.kv_string("general.architecture", "llama").kv(c.key, c.type, c.payload).tensor("t", {8}, kGgmlF32);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"key '" + c.key + "'", at(image.kv_offsets[1]), c.expected});
}

std::vector<std::byte> i32_array(std::vector<int32_t> values) {
  std::vector<std::byte> elements;
  for (int32_t v : values) elements = concat({elements, le_i32(v)});
  return gguf_array(kI32, values.size(), elements);
}

INSTANTIATE_TEST_SUITE_P(
    All, GgufKnownKeyType,
    ::testing::Values(
        WrongType{"tokenizer.ggml.scores", kArray, i32_array({1, 2}), "must be an array of f32, not an array of i32"},
        WrongType{"tokenizer.ggml.tokens", kArray, i32_array({1}), "must be an array of string, not an array of i32"},
        WrongType{"tokenizer.ggml.token_type", kArray, gguf_array(kF32, 1, le_f32(1)),
                  "must be an array of i32, not an array of f32"},
        WrongType{"tokenizer.ggml.merges", kU32, le_u32(1), "must be an array of string, not u32"},
        WrongType{"llama.context_length", kF32, le_f32(4096), "must be an unsigned integer, not f32"},
        WrongType{"llama.context_length", kI32, le_i32(4096), "must be an unsigned integer, not i32"},
        WrongType{"qwen2.block_count", kString, gguf_string("4"), "must be an unsigned integer, not string"},
        WrongType{"llama.embedding_length", kI64, le_u64(256), "must be an unsigned integer, not i64"},
        WrongType{"llama.feed_forward_length", kF32, le_f32(1), "must be an unsigned integer or a per-layer array"},
        WrongType{"llama.attention.head_count", kArray, gguf_array(kF32, 1, le_f32(8)),
                  "must be an unsigned integer or a per-layer array of i32/u32, not an array of f32"},
        WrongType{"llama.attention.head_count_kv", kBool, le_u8(1), "must be an unsigned integer or a per-layer"},
        WrongType{"llama.attention.layer_norm_rms_epsilon", kF64, le_f64(1e-5), "must be an f32, not f64"},
        WrongType{"llama.rope.freq_base", kU32, le_u32(10000), "must be an f32, not u32"},
        WrongType{"general.architecture", kU32, le_u32(1), "must be a string, not u32"},
        WrongType{"general.name", kI32, le_i32(1), "must be a string, not i32"},
        WrongType{"tokenizer.ggml.bos_token_id", kI32, le_i32(1), "must be a u32, not i32"},
        WrongType{"tokenizer.ggml.eos_token_id", kU64, le_u64(2), "must be a u32, not u64"},
        WrongType{"general.alignment", kU64, le_u64(64), "must be a u32, not u64"},
        WrongType{"general.alignment", kI32, le_i32(64), "must be a u32, not i32"},
        // Known array keys must not be arrays of arrays.
        WrongType{"tokenizer.ggml.tokens", kArray, gguf_array(kArray, 1, gguf_array(kString, 1, gguf_string("a"))),
                  "must be an array of string, not a nested array"},
        WrongType{"tokenizer.ggml.scores", kArray, gguf_array(kArray, 1, gguf_array(kF32, 1, le_f32(0))),
                  "must be an array of f32, not a nested array"}));

TEST(GgufKnownKeys, AcceptedVariants) {
  // Unsigned integers of any width, per-layer i32 arrays, and keys that merely resemble known ones.
  GgufBuilder b;
  b.kv_string("general.architecture", "llama")
      .kv_u64("llama.context_length", 4096)
      .kv("llama.block_count", kU16, concat({le_u8(4), le_u8(0)}))
      .kv("llama.attention.head_count", kArray, i32_array({8, 8, 4, 4}))
      .kv_f32("phi3.rope.scaling.original_context_length", 1.0f)  // not "<arch>.context_length"
      .kv_i32("tokenizer.ggml.token_type_count", 2)               // not a *_token_id
      .tensor("t", {8}, kGgmlF32);
  auto file = GgufFile::parse(b.build().bytes, "ok.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message;
}

// ---- alignment ----------------------------------------------------------------------------------

TEST(GgufMalformed, AlignmentZero) {
  GgufBuilder b = valid_builder();
  b.kv_u32("general.alignment", 0);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"general.alignment is zero", "key 'general.alignment' at " + at(image.kv_offsets[6])});
}

TEST(GgufMalformed, AlignmentNotAPowerOfTwo) {
  GgufBuilder b = valid_builder();
  b.kv_u32("general.alignment", 48);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"general.alignment 48 is not a power of two", at(image.kv_offsets[6])});
}

TEST(GgufMalformed, AlignmentAbsurd) {
  GgufBuilder b = valid_builder();
  b.kv_u32("general.alignment", 1u << 21);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"general.alignment 2097152 is larger than the limit of 1048576", at(image.kv_offsets[6])});
}

// ---- tensor table -------------------------------------------------------------------------------

TEST(GgufMalformed, EmptyTensorName) {
  GgufBuilder b = valid_builder();
  b.tensor("", {8}, kGgmlF32);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"empty tensor name", at(image.tensor_info_offsets[3])});
}

TEST(GgufMalformed, TensorNameLongerThanGgmlAllows) {
  GgufBuilder ok = valid_builder();
  ok.tensor(std::string(63, 'n'), {8}, kGgmlF32);
  ASSERT_TRUE(GgufFile::parse(ok.build().bytes).ok());

  GgufBuilder b = valid_builder();
  b.tensor(std::string(64, 'n'), {8}, kGgmlF32);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"is 64 bytes long; the limit is 63", at(image.tensor_info_offsets[3])});
}

TEST(GgufMalformed, DuplicateTensorName) {
  GgufBuilder b = valid_builder();
  b.tensor("token_embd.weight", {8}, kGgmlF32);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"duplicate tensor name 'token_embd.weight'", at(image.tensor_info_offsets[3]),
                             "first at " + at(image.tensor_info_offsets[0])});
}

// Offset of tensor `i`'s n_dims field in the image.
uint64_t n_dims_offset(const GgufImage& image, size_t i, const std::string& name) {
  return image.tensor_info_offsets[i] + 8 + name.size();
}

TEST(GgufMalformed, TensorWithZeroDims) {
  GgufBuilder b = valid_builder();
  b.tensor("scalar", {}, kGgmlF32);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"tensor 'scalar'", "0 dimensions at " + at(n_dims_offset(image, 3, "scalar"))});
}

TEST(GgufMalformed, TensorWithFiveDims) {
  GgufBuilder b = valid_builder();
  b.tensor("t5", {1, 1, 1, 1, 1}, kGgmlF32);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"tensor 't5'", "5 dimensions at " + at(n_dims_offset(image, 3, "t5"))});
}

TEST(GgufMalformed, ZeroDimension) {
  GgufBuilder b = valid_builder();
  b.tensor("empty", {8, 0}, kGgmlF32);
  const GgufImage image = b.build();
  const uint64_t dim1 = n_dims_offset(image, 3, "empty") + 4 + 8;
  expect_error(image.bytes, {"tensor 'empty'", "dimension 1 at " + at(dim1) + " is zero"});
}

TEST(GgufMalformed, ElementCountOverflow) {
  GgufBuilder b = valid_builder();
  b.tensor("huge", {uint64_t{1} << 32, uint64_t{1} << 32}, kGgmlF32);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"tensor 'huge'", "element count overflows", at(image.tensor_info_offsets[3])});
}

TEST(GgufMalformed, ByteSizeOverflow) {
  GgufBuilder b = valid_builder();
  b.tensor("huge", {uint64_t{1} << 62}, kGgmlF32);  // 2^62 elements fit int64, 2^64 bytes do not fit u64
  const GgufImage image = b.build();
  expect_error(image.bytes, {"tensor 'huge'", "byte size of 4611686018427387904 f32 elements overflows 64 bits",
                             at(image.tensor_info_offsets[3])});
}

TEST(GgufMalformed, ByteSizeOverflowAfterRoundingToTheAlignment) {
  GgufBuilder b = valid_builder();
  b.tensor("huge", {(uint64_t{1} << 61) - 1}, kGgmlF64);  // 2^64 - 8 bytes: fits, but not rounded up to 32
  const GgufImage image = b.build();
  expect_error(image.bytes, {"tensor 'huge'",
                             "byte size 18446744073709551608 overflows 64 bits when rounded up to "
                             "the alignment 32"});
}

TEST(GgufMalformed, UnknownGgmlType) {
  for (uint32_t id : {4u, 5u, 31u, 100u, 0xffffffffu}) {  // 4, 5: removed Q4_2 / Q4_3; ~0: a negative id
    GgufBuilder b = valid_builder();
    b.tensor("odd", {8}, id);
    const GgufImage image = b.build();
    const uint64_t type_at = n_dims_offset(image, 3, "odd") + 4 + 8;
    expect_error(image.bytes, {"tensor 'odd'", fmt::format("unknown ggml type id {} at {}", id, at(type_at))});
  }
}

TEST(GgufMalformed, RowNotAWholeNumberOfBlocks) {
  GgufBuilder b = valid_builder();
  b.tensor("ragged", {33, 2}, kGgmlQ8_0, std::nullopt, 0);
  const GgufImage image = b.build();
  expect_error(image.bytes, {"tensor 'ragged'", "row length 33 is not a multiple of the q8_0 block size 32"});
}

TEST(GgufMalformed, OffsetNotAMultipleOfTheAlignment) {
  GgufBuilder b = valid_builder();
  b.tensor("unaligned", {8}, kGgmlF32, 272 + 4);  // the valid image's data ends at 272
  const GgufImage image = b.build();
  expect_error(image.bytes, {"tensor 'unaligned'", at(image.tensor_info_offsets[3]),
                             "data offset 276 is not a multiple of the alignment 32"});
}

TEST(GgufMalformed, DataPastTheEndOfTheFile) {
  GgufImage image = valid_builder().build();
  image.bytes.pop_back();
  expect_error(image.bytes, {"tensor 'output_norm.weight'", at(image.tensor_info_offsets[2]), "data [256, +16 bytes)",
                             "runs past the end of the file"});
}

TEST(GgufMalformed, OffsetPlusSizeOverflows) {
  GgufImage image = valid_builder().build();
  const uint64_t offset_field = n_dims_offset(image, 2, "output_norm.weight") + 4 + 8 + 4;
  patch(image.bytes, offset_field, le_u64(UINT64_MAX - 31));  // aligned, and offset + size wraps around
  expect_error(image.bytes, {"tensor 'output_norm.weight'", "runs past the end of the file"});
}

TEST(GgufMalformed, OverlappingTensors) {
  GgufBuilder b;
  b.tensor("a", {8, 3}, kGgmlF32).tensor("b", {8}, kGgmlF32, 64);  // a covers [0, 96)
  expect_error(b.build().bytes, {"tensors 'a' (data [0, 96)) and 'b' (data from 64) overlap"});
}

TEST(GgufMalformed, OverlapIsFoundWhateverTheTableOrder) {
  GgufBuilder b;
  b.tensor("late", {8}, kGgmlF32, 128).tensor("early", {64}, kGgmlF32, 0);  // early covers [0, 256)
  expect_error(b.build().bytes, {"tensors 'early' (data [0, 256)) and 'late' (data from 128) overlap"});
}

// ---- nesting ------------------------------------------------------------------------------------

std::vector<std::byte> nested_array(int levels) {  // `levels` arrays around one u8
  std::vector<std::byte> payload = gguf_array(kU8, 1, le_u8(1));
  for (int i = 1; i < levels; ++i) payload = gguf_array(kArray, 1, payload);
  return payload;
}

TEST(GgufMalformed, ArraysNestedTooDeep) {
  GgufBuilder ok = valid_builder();
  ok.kv("custom.deep", kArray, nested_array(16));
  ASSERT_TRUE(GgufFile::parse(ok.build().bytes).ok());

  GgufBuilder b = valid_builder();
  b.kv("custom.deep", kArray, nested_array(17));
  const GgufImage image = b.build();
  expect_error(image.bytes, {"key 'custom.deep'", "nested more than 16 levels deep"});
}

// ---- truncation ---------------------------------------------------------------------------------

TEST(GgufMalformed, EveryPrefixOfAValidFileFailsCleanly) {
  const GgufImage image = valid_builder().build();
  ASSERT_TRUE(GgufFile::parse(image.bytes).ok());
  for (size_t n = 0; n < image.bytes.size(); ++n) {
    const std::vector<std::byte> prefix(image.bytes.begin(), image.bytes.begin() + n);
    const std::string message = parse_error(prefix);
    SCOPED_TRACE(fmt::format("prefix of {} bytes: {}", n, message));
    EXPECT_THAT(message, HasSubstr("offset"));
    if (n >= image.header_end) {  // the whole table is there: only tensor data is cut
      EXPECT_THAT(message, HasSubstr("runs past the end of the file"));
      EXPECT_THAT(message, HasSubstr("data ["));
    } else {
      EXPECT_THAT(message, ::testing::Not(HasSubstr("data [")));
    }
  }
}

TEST(GgufMalformed, EveryPrefixOfAMetadataOnlyFileFails) {
  GgufBuilder b;
  b.kv_string("general.architecture", "llama").kv_string_array("tokenizer.ggml.tokens", {"x", "yz"});
  const GgufImage image = b.build();
  ASSERT_TRUE(GgufFile::parse(image.bytes).ok());
  for (size_t n = 0; n < image.bytes.size(); ++n) {
    const std::vector<std::byte> prefix(image.bytes.begin(), image.bytes.begin() + n);
    EXPECT_THAT(parse_error(prefix), HasSubstr("offset")) << n;
  }
}

}  // namespace
}  // namespace infertune
