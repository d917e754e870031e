// What is refused, each with the offset, key or tensor name in the message:
//   header:   bad magic; versions other than 2 and 3 (v1 used 32-bit counts; big-endian files are named
//             as such); kv / tensor counts that the remaining bytes could not hold even at the smallest
//             encoding of an entry (checked before anything is reserved).
//   metadata: empty keys, duplicate keys, value types > 12, strings and arrays running past the end of
//             the file, bool bytes other than 0 / 1, arrays nested deeper than kGgufMaxArrayNesting,
//             known keys of the wrong type (gguf_known_keys.cpp), a bad general.alignment.
//   tensors:  empty names, names over 63 bytes, duplicate names, 0 or > 4 dims, zero dims, unknown ggml
//             type ids, rows that are not whole blocks, element counts or byte sizes (also rounded up
//             to the alignment) that overflow, offsets that are not multiples of the alignment, data
//             past the end of the file, and tensors whose data overlap.
#include "engine/gguf/gguf_parser.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "engine/gguf/byte_reader.h"
#include "engine/gguf/gguf_known_keys.h"
#include "engine/gguf/gguf_limits.h"
#include "engine/gguf/gguf_tensor_shape.h"

namespace infertune {
namespace {

// Smallest possible encodings, used to bound counts before anything is reserved.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;                  // key length, one key byte, value type, a u8 value
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name length + byte, n_dims, one dim, type, offset

uint64_t min_encoded_bytes(GgufValueType type) {
  static constexpr std::array<uint64_t, kGgufValueTypeCount> kBytes = {1, 1, 2, 2, 4, 4, 4, 1, 8, 4 + 8, 8, 8, 8};
  return kBytes[static_cast<uint32_t>(type)];
}

// Up-front reservations are capped: a count is only a claim until its elements are parsed, and a
// multi-gigabyte model file would "justify" counts whose vectors do not fit in memory. Past the cap,
// vectors grow as elements are actually read, so memory stays proportional to what was parsed.
constexpr uint64_t kMaxReserveBytes = uint64_t{16} << 20;

template <class T>
void reserve_claimed(std::vector<T>& values, uint64_t count) {
  values.reserve(std::min<uint64_t>(count, kMaxReserveBytes / sizeof(T)));
}

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return b != 0 && a > std::numeric_limits<uint64_t>::max() / b ? std::numeric_limits<uint64_t>::max() : a * b;
}

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

Result<GgufValueType> read_value_type(ByteReader& r, std::string_view what) {
  const uint64_t at = r.offset();
  auto id = r.read<uint32_t>(what);
  if (!id) return id.error();
  if (*id >= kGgufValueTypeCount) return fail("invalid {} {} at offset {} (valid types are 0 to 12)", what, *id, at);
  return static_cast<GgufValueType>(*id);
}

// Only 0 and 1: any other byte could not be written back identically.
Result<bool> read_bool(ByteReader& r) {
  const uint64_t at = r.offset();
  auto byte = r.read<uint8_t>("bool value");
  if (!byte) return byte.error();
  if (*byte > 1) return fail("invalid bool value {} at offset {} (must be 0 or 1)", *byte, at);
  return *byte == 1;
}

// ---- values -------------------------------------------------------------------------------------

Status read_array(ByteReader& r, GgufArray& out, int depth);

template <size_t I>
Result<GgufValue> read_scalar(ByteReader& r) {
  using T = std::variant_alternative_t<I, GgufValue::Storage>;
  auto value = r.read<T>("value");
  if (!value) return value.error();
  return GgufValue{GgufValue::Storage(std::in_place_index<I>, *value)};
}

Result<GgufValue> read_value(ByteReader& r, GgufValueType type, int depth) {
  switch (type) {
    case GgufValueType::U8:
      return read_scalar<0>(r);
    case GgufValueType::I8:
      return read_scalar<1>(r);
    case GgufValueType::U16:
      return read_scalar<2>(r);
    case GgufValueType::I16:
      return read_scalar<3>(r);
    case GgufValueType::U32:
      return read_scalar<4>(r);
    case GgufValueType::I32:
      return read_scalar<5>(r);
    case GgufValueType::F32:
      return read_scalar<6>(r);
    case GgufValueType::BOOL: {
      auto value = read_bool(r);
      if (!value) return value.error();
      return GgufValue{GgufValue::Storage(std::in_place_index<7>, *value)};
    }
    case GgufValueType::STRING: {
      auto text = r.read_string("string value");
      if (!text) return text.error();
      return GgufValue{GgufValue::Storage(std::in_place_index<8>, std::string(*text))};
    }
    case GgufValueType::ARRAY: {
      GgufValue value{GgufValue::Storage(std::in_place_index<9>)};
      if (Status s = read_array(r, std::get<9>(value.storage), depth + 1); !s) return s.error();
      return value;
    }
    case GgufValueType::U64:
      return read_scalar<10>(r);
    case GgufValueType::I64:
      return read_scalar<11>(r);
    case GgufValueType::F64:
      return read_scalar<12>(r);
  }
  return fail("invalid value type {}", static_cast<uint32_t>(type));  // unreachable: ids are checked on read
}

// Fixed-size elements are copied in one block: a 128k-entry score array is one memcpy.
template <size_t I>
Status read_plain_elements(ByteReader& r, uint64_t count, GgufArray& out) {
  using Vector = std::variant_alternative_t<I, GgufArray::Elements>;
  using T = typename Vector::value_type;
  auto bytes = r.read_bytes(count * sizeof(T), "array elements");
  if (!bytes) return bytes.error();
  Vector values(count);
  if (count > 0) std::memcpy(values.data(), bytes->data(), bytes->size());
  out.elements.emplace<I>(std::move(values));
  return Status::success();
}

Status read_bool_elements(ByteReader& r, uint64_t count, GgufArray& out) {
  const uint64_t at = r.offset();
  auto bytes = r.read_bytes(count, "array elements");
  if (!bytes) return bytes.error();
  std::vector<GgufBool> values(count);
  for (uint64_t i = 0; i < count; ++i) {
    const auto byte = static_cast<uint8_t>((*bytes)[i]);
    if (byte > 1) return fail("invalid bool value {} at offset {} (must be 0 or 1)", byte, at + i);
    values[i].value = byte == 1;
  }
  out.elements.emplace<7>(std::move(values));
  return Status::success();
}

Status read_string_elements(ByteReader& r, uint64_t count, GgufArray& out) {
  std::vector<std::string> values;
  reserve_claimed(values, count);
  for (uint64_t i = 0; i < count; ++i) {
    auto text = r.read_string("array string");
    if (!text) return text.error();
    values.emplace_back(*text);
  }
  out.elements.emplace<8>(std::move(values));
  return Status::success();
}

Status read_array_elements(ByteReader& r, uint64_t count, GgufArray& out, int depth) {
  std::vector<GgufArray> values;
  reserve_claimed(values, count);
  for (uint64_t i = 0; i < count; ++i) {
    if (Status s = read_array(r, values.emplace_back(), depth + 1); !s) return s;
  }
  out.elements.emplace<9>(std::move(values));
  return Status::success();
}

Status read_array(ByteReader& r, GgufArray& out, int depth) {
  const uint64_t at = r.offset();
  if (depth > kGgufMaxArrayNesting) {
    return fail("array at offset {} is nested more than {} levels deep", at, kGgufMaxArrayNesting);
  }
  auto element = read_value_type(r, "array element type");
  if (!element) return element.error();
  auto count = r.read<uint64_t>("array length");
  if (!count) return count.error();
  const uint64_t min_bytes = min_encoded_bytes(*element);
  if (*count > r.remaining() / min_bytes) {
    return fail(
        "array at offset {} of {} {} elements runs past the end of the file (needs at least {} bytes, {} remain)", at,
        *count, gguf_value_type_name(*element), saturating_mul(*count, min_bytes), r.remaining());
  }
  switch (*element) {
    case GgufValueType::U8:
      return read_plain_elements<0>(r, *count, out);
    case GgufValueType::I8:
      return read_plain_elements<1>(r, *count, out);
    case GgufValueType::U16:
      return read_plain_elements<2>(r, *count, out);
    case GgufValueType::I16:
      return read_plain_elements<3>(r, *count, out);
    case GgufValueType::U32:
      return read_plain_elements<4>(r, *count, out);
    case GgufValueType::I32:
      return read_plain_elements<5>(r, *count, out);
    case GgufValueType::F32:
      return read_plain_elements<6>(r, *count, out);
    case GgufValueType::BOOL:
      return read_bool_elements(r, *count, out);
    case GgufValueType::STRING:
      return read_string_elements(r, *count, out);
    case GgufValueType::ARRAY:
      return read_array_elements(r, *count, out, depth);
    case GgufValueType::U64:
      return read_plain_elements<10>(r, *count, out);
    case GgufValueType::I64:
      return read_plain_elements<11>(r, *count, out);
    case GgufValueType::F64:
      return read_plain_elements<12>(r, *count, out);
  }
  return fail("invalid array element type at offset {}", at);  // unreachable
}

// ---- header and metadata ------------------------------------------------------------------------

struct Counts {
  uint64_t tensors = 0;
  uint64_t kvs = 0;
};

Result<uint32_t> read_version(ByteReader& r) {
  auto magic = r.read_bytes(4, "magic");
  if (!magic) return magic.error();
  if (std::memcmp(magic->data(), "GGUF", 4) != 0) {
    const auto b = [&](int i) { return static_cast<unsigned>((*magic)[i]); };
    return fail("bad magic {:02x} {:02x} {:02x} {:02x} at offset 0 (expected \"GGUF\")", b(0), b(1), b(2), b(3));
  }
  auto version = r.read<uint32_t>("version");
  if (!version) return version.error();
  if (*version == 2 || *version == 3) return *version;
  if (*version == 1)
    return fail("GGUF version 1 at offset 4 is not supported (it used 32-bit counts); only 2 and 3 are");
  const uint32_t swapped = __builtin_bswap32(*version);
  if (swapped == 2 || swapped == 3) {
    return fail("GGUF version {} at offset 4 reads as {} byte-swapped: big-endian files are not supported", *version,
                swapped);
  }
  return fail("unsupported GGUF version {} at offset 4 (only 2 and 3 are supported)", *version);
}

Result<Counts> read_counts(ByteReader& r) {
  Counts counts;
  auto tensors = r.read<uint64_t>("tensor count");
  if (!tensors) return tensors.error();
  auto kvs = r.read<uint64_t>("kv count");
  if (!kvs) return kvs.error();
  counts = {*tensors, *kvs};
  const uint64_t left = r.remaining();
  if (counts.kvs > left / kMinKvBytes) {
    return fail("kv count {} at offset 16 is more than the {} remaining bytes can hold ({} bytes per entry at least)",
                counts.kvs, left, kMinKvBytes);
  }
  if (counts.tensors > (left - counts.kvs * kMinKvBytes) / kMinTensorInfoBytes) {
    return fail(
        "tensor count {} at offset 8 is more than the {} remaining bytes can hold after {} metadata entries "
        "({} bytes per tensor info at least)",
        counts.tensors, left, counts.kvs, kMinTensorInfoBytes);
  }
  return counts;
}

struct MetadataResult {
  std::vector<uint64_t> key_offsets;  // [n_kv] where each entry starts
  uint64_t alignment = kGgufDefaultAlignment;
};

Status read_entry(ByteReader& r, std::vector<GgufKeyValue>& metadata, MetadataResult& out) {
  const uint64_t at = r.offset();
  auto key = r.read_string("metadata key");
  if (!key) return key.error();
  if (key->empty()) return fail("empty metadata key at offset {}", at);
  // Errors name the entry: "key 'x' at offset N: <what is wrong>".
  const auto in_entry = [&](const std::string& problem) {
    return fail("key '{}' at offset {}: {}", *key, at, problem);
  };
  auto type = read_value_type(r, "value type");
  if (!type) return in_entry(type.error().message);
  auto value = read_value(r, *type, 0);
  if (!value) return in_entry(value.error().message);
  if (auto problem = check_known_key(*key, *value)) return in_entry(*problem);
  if (*key == kGgufAlignmentKey) {
    auto alignment = gguf_alignment_from_value(*value);
    if (!alignment) return in_entry(alignment.error().message);
    out.alignment = *alignment;
  }
  metadata.push_back(GgufKeyValue{std::string(*key), std::move(*value)});
  out.key_offsets.push_back(at);
  return Status::success();
}

// Indices of `n` named items sorted by name; fails on the first name that occurs twice.
template <class NameOf>
Result<std::vector<size_t>> sorted_unique(size_t n, NameOf name_of, const std::vector<uint64_t>& offsets,
                                          std::string_view what) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto na = name_of(a), nb = name_of(b);
    return na != nb ? na < nb : a < b;
  });
  for (size_t i = 1; i < n; ++i) {
    if (name_of(order[i - 1]) == name_of(order[i])) {
      return fail("duplicate {} '{}' at offset {} (first at offset {})", what, name_of(order[i]), offsets[order[i]],
                  offsets[order[i - 1]]);
    }
  }
  return order;
}

// ---- tensors ------------------------------------------------------------------------------------

Status read_shape_and_type(ByteReader& r, GgufTensorInfo& t, uint64_t alignment) {
  const uint64_t dims_at = r.offset();
  auto n_dims = r.read<uint32_t>("dimension count");
  if (!n_dims) return n_dims.error();
  if (*n_dims == 0 || *n_dims > kGgufMaxDims) {
    return fail("{} dimensions at offset {} (1 to {} are allowed)", *n_dims, dims_at, kGgufMaxDims);
  }
  t.dims.resize(*n_dims);
  for (uint32_t i = 0; i < *n_dims; ++i) {
    const uint64_t at = r.offset();
    auto dim = r.read<uint64_t>("dimension");
    if (!dim) return dim.error();
    if (*dim == 0) return fail("dimension {} at offset {} is zero", i, at);
    t.dims[i] = *dim;
  }
  const uint64_t type_at = r.offset();
  auto type_id = r.read<uint32_t>("ggml type");
  if (!type_id) return type_id.error();
  const auto traits = ggml_type_traits(*type_id);
  if (!traits) return fail("unknown ggml type id {} at offset {}", *type_id, type_at);
  t.type = traits->type;
  auto offset = r.read<uint64_t>("data offset");
  if (!offset) return offset.error();
  t.offset = *offset;
  auto size = tensor_size(t.dims, *traits, alignment);
  if (!size) return size.error();
  t.n_elements = size->n_elements;
  t.n_bytes = size->n_bytes;
  return Status::success();
}

Status read_tensor_info(ByteReader& r, GgufTensorInfo& t, uint64_t alignment) {
  const uint64_t at = r.offset();
  auto name = r.read_string("tensor name");
  if (!name) return name.error();
  if (Status s = check_tensor_name(*name); !s) return fail("{} (tensor info at offset {})", s.error().message, at);
  t.name = std::string(*name);
  if (Status s = read_shape_and_type(r, t, alignment); !s) {
    return fail("tensor '{}' (info at offset {}): {}", t.name, at, s.error().message);
  }
  return Status::success();
}

Status check_placement(const std::vector<GgufTensorInfo>& tensors, const std::vector<uint64_t>& info_offsets,
                       uint64_t alignment, uint64_t data_offset, uint64_t data_bytes) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (t.offset % alignment != 0) {
      return fail("tensor '{}' (info at offset {}): data offset {} is not a multiple of the alignment {}", t.name,
                  info_offsets[i], t.offset, alignment);
    }
    if (t.n_bytes > data_bytes || t.offset > data_bytes - t.n_bytes) {
      return fail(
          "tensor '{}' (info at offset {}): data [{}, +{} bytes) runs past the end of the file (the data section at "
          "offset {} holds {} bytes)",
          t.name, info_offsets[i], t.offset, t.n_bytes, data_offset, data_bytes);
    }
  }
  std::vector<size_t> by_offset(tensors.size());
  std::iota(by_offset.begin(), by_offset.end(), size_t{0});
  std::sort(by_offset.begin(), by_offset.end(),
            [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const auto& a = tensors[by_offset[i - 1]];
    const auto& b = tensors[by_offset[i]];
    if (b.offset < a.offset + a.n_bytes) {
      return fail("tensors '{}' (data [{}, {})) and '{}' (data from {}) overlap", a.name, a.offset,
                  a.offset + a.n_bytes, b.name, b.offset);
    }
  }
  return Status::success();
}

}  // namespace

Status GgufParser::parse(std::span<const std::byte> bytes, GgufFile& file) {
  ByteReader r(bytes);
  auto version = read_version(r);
  if (!version) return version.error();
  auto counts = read_counts(r);
  if (!counts) return counts.error();

  MetadataResult meta;
  reserve_claimed(file.metadata_, counts->kvs);
  reserve_claimed(meta.key_offsets, counts->kvs);
  for (uint64_t i = 0; i < counts->kvs; ++i) {
    if (Status s = read_entry(r, file.metadata_, meta); !s) return s;
  }
  auto key_order = sorted_unique(
      file.metadata_.size(), [&](size_t i) -> std::string_view { return file.metadata_[i].key; }, meta.key_offsets,
      "key");
  if (!key_order) return key_order.error();

  if (counts->tensors > r.remaining() / kMinTensorInfoBytes) {
    return fail("tensor count {} at offset 8 is more than the {} bytes after the metadata can hold", counts->tensors,
                r.remaining());
  }
  std::vector<uint64_t> info_offsets;  // [n_tensors] where each tensor info starts
  reserve_claimed(file.tensors_, counts->tensors);
  reserve_claimed(info_offsets, counts->tensors);
  for (uint64_t i = 0; i < counts->tensors; ++i) {
    info_offsets.push_back(r.offset());
    if (Status s = read_tensor_info(r, file.tensors_.emplace_back(), meta.alignment); !s) return s;
  }
  auto tensor_order = sorted_unique(
      file.tensors_.size(), [&](size_t i) -> std::string_view { return file.tensors_[i].name; }, info_offsets,
      "tensor name");
  if (!tensor_order) return tensor_order.error();

  const uint64_t data_offset = align_up(r.offset(), meta.alignment);
  const uint64_t data_bytes = bytes.size() > data_offset ? bytes.size() - data_offset : 0;
  if (Status s = check_placement(file.tensors_, info_offsets, meta.alignment, data_offset, data_bytes); !s) return s;

  file.bytes_ = bytes;
  file.version_ = *version;
  file.alignment_ = meta.alignment;
  file.data_offset_ = data_offset;
  file.key_order_ = std::move(*key_order);
  file.tensor_order_ = std::move(*tensor_order);
  return Status::success();
}

}  // namespace infertune
