#include "engine/gguf_builder.h"

#include <cstring>

namespace infertune::test {
namespace {

template <class T>
std::vector<std::byte> le(T v) {  // the test hosts are little-endian, as is GGUF
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

void append(std::vector<std::byte>& out, const std::vector<std::byte>& part) {
  out.insert(out.end(), part.begin(), part.end());
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Data bytes of a shape for the few types the tests use; 0 when unknown, not whole blocks, or huge.
uint64_t data_bytes(const std::vector<uint64_t>& dims, uint32_t type) {
  unsigned __int128 n = 1;
  for (uint64_t d : dims) n *= d;
  if (dims.empty() || n > (uint64_t{1} << 32)) return 0;
  struct Geometry {
    uint32_t type, block, bytes;
  };
  static constexpr Geometry kGeometry[] = {{kGgmlF32, 1, 4},    {kGgmlF16, 1, 2},     {kGgmlBF16, 1, 2},
                                           {kGgmlI8, 1, 1},     {kGgmlF64, 1, 8},     {kGgmlQ4_0, 32, 18},
                                           {kGgmlQ8_0, 32, 34}, {kGgmlQ4_K, 256, 144}};
  for (const auto& g : kGeometry) {
    if (g.type == type) return dims[0] % g.block == 0 ? static_cast<uint64_t>(n) / g.block * g.bytes : 0;
  }
  return 0;
}

}  // namespace

std::vector<std::byte> le_u8(uint8_t v) { return le(v); }
std::vector<std::byte> le_u32(uint32_t v) { return le(v); }
std::vector<std::byte> le_u64(uint64_t v) { return le(v); }
std::vector<std::byte> le_i32(int32_t v) { return le(v); }
std::vector<std::byte> le_f32(float v) { return le(v); }
std::vector<std::byte> le_f64(double v) { return le(v); }

std::vector<std::byte> gguf_string(const std::string& s) {
  auto out = le_u64(s.size());
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

std::vector<std::byte> gguf_array(uint32_t element_type, uint64_t count, const std::vector<std::byte>& elements) {
  return concat({le_u32(element_type), le_u64(count), elements});
}

std::vector<std::byte> concat(const std::vector<std::vector<std::byte>>& parts) {
  std::vector<std::byte> out;
  for (const auto& p : parts) append(out, p);
  return out;
}

std::byte builder_data_byte(size_t tensor_index, uint64_t i) {
  return static_cast<std::byte>((tensor_index * 37 + i * 13 + 5) & 0xff);
}

GgufBuilder& GgufBuilder::magic(std::string m) {
  magic_ = std::move(m);
  return *this;
}
GgufBuilder& GgufBuilder::version(uint32_t v) {
  version_ = v;
  return *this;
}
GgufBuilder& GgufBuilder::tensor_count(uint64_t n) {
  tensor_count_ = n;
  return *this;
}
GgufBuilder& GgufBuilder::kv_count(uint64_t n) {
  kv_count_ = n;
  return *this;
}
GgufBuilder& GgufBuilder::layout_alignment(uint64_t a) {
  alignment_ = a;
  return *this;
}
GgufBuilder& GgufBuilder::pad_last(bool pad) {
  pad_last_ = pad;
  return *this;
}

GgufBuilder& GgufBuilder::kv(const std::string& key, uint32_t type, std::vector<std::byte> payload) {
  kvs_.push_back({key, type, std::move(payload)});
  return *this;
}

GgufBuilder& GgufBuilder::kv_string_array(const std::string& key, const std::vector<std::string>& values) {
  std::vector<std::byte> elements;
  for (const auto& v : values) append(elements, gguf_string(v));
  return kv(key, kArray, gguf_array(kString, values.size(), elements));
}

GgufBuilder& GgufBuilder::kv_f32_array(const std::string& key, const std::vector<float>& values) {
  std::vector<std::byte> elements;
  for (float v : values) append(elements, le_f32(v));
  return kv(key, kArray, gguf_array(kF32, values.size(), elements));
}

GgufBuilder& GgufBuilder::kv_i32_array(const std::string& key, const std::vector<int32_t>& values) {
  std::vector<std::byte> elements;
  for (int32_t v : values) append(elements, le_i32(v));
  return kv(key, kArray, gguf_array(kI32, values.size(), elements));
}

GgufBuilder& GgufBuilder::tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t ggml_type,
                                 std::optional<uint64_t> offset, std::optional<uint64_t> n_bytes) {
  tensors_.push_back({name, std::move(dims), ggml_type, offset, n_bytes});
  return *this;
}

GgufImage GgufBuilder::build() const {
  GgufImage image;
  auto& out = image.bytes;
  for (char c : magic_) out.push_back(static_cast<std::byte>(c));
  append(out, le_u32(version_));
  append(out, le_u64(tensor_count_.value_or(tensors_.size())));
  append(out, le_u64(kv_count_.value_or(kvs_.size())));
  for (const auto& kv : kvs_) {
    image.kv_offsets.push_back(out.size());
    append(out, gguf_string(kv.key));
    image.value_type_offsets.push_back(out.size());
    append(out, le_u32(kv.type));
    append(out, kv.payload);
  }
  uint64_t next = 0;
  for (const auto& t : tensors_) {
    const uint64_t bytes = t.n_bytes.value_or(data_bytes(t.dims, t.type));
    const uint64_t offset = t.offset.value_or(next);
    next = align_up(offset + bytes, alignment_);
    image.tensor_offsets.push_back(offset);
    image.tensor_bytes.push_back(bytes);
    image.tensor_info_offsets.push_back(out.size());
    append(out, gguf_string(t.name));
    append(out, le_u32(static_cast<uint32_t>(t.dims.size())));
    for (uint64_t d : t.dims) append(out, le_u64(d));
    append(out, le_u32(t.type));
    append(out, le_u64(offset));
  }
  image.header_end = out.size();
  image.data_offset = align_up(out.size(), alignment_);
  if (tensors_.empty()) return image;
  uint64_t data_end = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    data_end = std::max(data_end, image.tensor_offsets[i] + image.tensor_bytes[i]);
  }
  if (pad_last_) data_end = align_up(data_end, alignment_);
  out.resize(image.data_offset + data_end, std::byte{0});
  for (size_t i = 0; i < tensors_.size(); ++i) {
    for (uint64_t j = 0; j < image.tensor_bytes[i]; ++j) {
      out[image.data_offset + image.tensor_offsets[i] + j] = builder_data_byte(i, j);
    }
  }
  return image;
}

}  // namespace infertune::test
