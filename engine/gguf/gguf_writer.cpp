// Layout written (GGUF v3, matching gguf-py, which produced the fixtures, byte for byte):
//   header, metadata in insertion order, tensor table in declaration order,
//   zero padding to the alignment, then each tensor at the next aligned offset, each one (the last
//   included, as gguf-py and llama.cpp do) followed by zero padding to the alignment.
// A file without tensors ends right after the tensor table: gguf-py's vocab-only files have no
// trailing padding, and readers do not need it when there is no data section.
#include "engine/gguf/gguf_writer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "engine/gguf/byte_writer.h"
#include "engine/gguf/gguf_known_keys.h"
#include "engine/gguf/gguf_limits.h"
#include "engine/gguf/gguf_tensor_shape.h"
#include "engine/gguf/mapped_file.h"

namespace infertune {
namespace {

constexpr uint32_t kWrittenVersion = 3;

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

void encode_array(ByteWriter& out, const GgufArray& array);

void encode_payload(ByteWriter& out, const GgufValue& value) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          out.put<uint8_t>(v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out.put_string(v);
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          encode_array(out, v);
        } else {
          out.put<T>(v);
        }
      },
      value.storage);
}

void encode_array(ByteWriter& out, const GgufArray& array) {
  out.put<uint32_t>(static_cast<uint32_t>(array.element_type()));
  out.put<uint64_t>(array.size());
  std::visit(
      [&](const auto& values) {
        using T = typename std::decay_t<decltype(values)>::value_type;
        if constexpr (std::is_same_v<T, GgufBool>) {
          for (const GgufBool b : values) out.put<uint8_t>(b.value ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::string>) {
          for (const auto& s : values) out.put_string(s);
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          for (const auto& inner : values) encode_array(out, inner);
        } else {
          out.put_bytes(values.data(), values.size() * sizeof(T));  // plain numbers, already little-endian
        }
      },
      array.elements);
}

// Nesting depth as the reader counts it: a scalar is 0, an array of scalars 1.
int nesting_depth(const GgufArray& array) {
  int inner = 0;
  if (const auto* arrays = std::get_if<std::vector<GgufArray>>(&array.elements)) {
    for (const auto& a : *arrays) inner = std::max(inner, nesting_depth(a));
  }
  return 1 + inner;
}

Status check_entry(const GgufKeyValue& kv) {
  if (kv.key.empty()) return fail("empty metadata key");
  if (auto problem = check_known_key(kv.key, kv.value)) return fail("key '{}': {}", kv.key, *problem);
  if (kv.key == kGgufAlignmentKey) {
    if (auto alignment = gguf_alignment_from_value(kv.value); !alignment) return alignment.error();
  }
  if (const auto* array = std::get_if<GgufArray>(&kv.value.storage)) {
    if (nesting_depth(*array) > kGgufMaxArrayNesting) {
      return fail("key '{}': arrays nested more than {} levels deep", kv.key, kGgufMaxArrayNesting);
    }
  }
  return Status::success();
}

// general.alignment is stored as a u32 whatever integer type the caller gave it in.
GgufValue normalized_alignment(GgufValue value) {
  return std::visit(
      [&](const auto& v) -> GgufValue {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if (v >= 0 && static_cast<uint64_t>(v) <= std::numeric_limits<uint32_t>::max()) {
            return GgufValue{GgufValue::Storage(std::in_place_type<uint32_t>, static_cast<uint32_t>(v))};
          }
        }
        return value;
      },
      value.storage);
}

Status fill_image(std::span<std::byte> image, std::span<const std::byte> header, uint64_t data_offset,
                  const std::vector<GgufTensorInfo>& tensors, const GgufWriter::TensorFiller& fill) {
  std::memcpy(image.data(), header.data(), header.size());
  // Padding stays as created: zero (a value-initialized vector, or a freshly allocated file).
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (Status s = fill(i, t, image.subspan(data_offset + t.offset, t.n_bytes)); !s) {
      return fail("tensor '{}': {}", t.name, s.error().message);
    }
  }
  return Status::success();
}

}  // namespace

struct GgufWriter::Plan {
  std::vector<std::byte> header;  // everything before the padding that precedes the tensor data
  uint64_t data_offset = 0;
  uint64_t total_bytes = 0;
};

GgufWriter GgufWriter::from_file(const GgufFile& file) {
  GgufWriter writer;
  writer.metadata_ = file.metadata();
  writer.tensors_.reserve(file.tensors().size());
  for (const auto& t : file.tensors()) {
    // Cannot fail: the reader accepted these tensors under the same rules.
    (void)writer.add_tensor(t.name, t.dims, t.type);
  }
  return writer;
}

void GgufWriter::set(std::string key, GgufValue value) {
  const bool is_alignment = key == kGgufAlignmentKey;
  if (is_alignment) value = normalized_alignment(std::move(value));
  auto it = std::find_if(metadata_.begin(), metadata_.end(), [&](const GgufKeyValue& kv) { return kv.key == key; });
  if (it != metadata_.end()) {
    it->value = std::move(value);
  } else {
    metadata_.push_back(GgufKeyValue{std::move(key), std::move(value)});
  }
  if (is_alignment) assign_offsets();
}

Status GgufWriter::add_tensor(std::string name, std::vector<uint64_t> dims, GgmlType type) {
  if (Status s = check_tensor_name(name); !s) return s;
  for (const auto& t : tensors_) {
    if (t.name == name) return fail("duplicate tensor name '{}'", name);
  }
  if (dims.empty() || dims.size() > kGgufMaxDims) {
    return fail("tensor '{}': {} dimensions (1 to {} are allowed)", name, dims.size(), kGgufMaxDims);
  }
  const auto traits = ggml_type_traits(static_cast<uint32_t>(type));
  if (!traits) return fail("tensor '{}': unknown ggml type id {}", name, static_cast<uint32_t>(type));
  // Checked against the largest alignment, so that no later general.alignment can make it overflow.
  auto size = tensor_size(dims, *traits, kGgufMaxAlignment);
  if (!size) return fail("tensor '{}': {}", name, size.error().message);
  GgufTensorInfo info;
  info.name = std::move(name);
  info.dims = std::move(dims);
  info.type = type;
  info.n_elements = size->n_elements;
  info.n_bytes = size->n_bytes;
  tensors_.push_back(std::move(info));
  assign_offsets();
  return Status::success();
}

uint64_t GgufWriter::alignment() const {
  for (const auto& kv : metadata_) {
    if (kv.key != kGgufAlignmentKey) continue;
    auto alignment = gguf_alignment_from_value(kv.value);
    return alignment ? *alignment : kGgufDefaultAlignment;  // write_* refuses an invalid one
  }
  return kGgufDefaultAlignment;
}

void GgufWriter::assign_offsets() {
  const uint64_t align = alignment();
  uint64_t next = 0;
  for (auto& t : tensors_) {
    t.offset = next;
    // Saturates instead of wrapping; plan() refuses a layout whose end does not fit in 64 bits.
    const uint64_t padded = align_up(t.n_bytes, align);
    next = padded > std::numeric_limits<uint64_t>::max() - next ? std::numeric_limits<uint64_t>::max() : next + padded;
  }
  data_bytes_ = next;
}

Result<GgufWriter::Plan> GgufWriter::plan() const {
  for (const auto& kv : metadata_) {
    if (Status s = check_entry(kv); !s) return s.error();
  }
  Plan plan;
  ByteWriter out(plan.header);
  out.put_bytes("GGUF", 4);
  out.put<uint32_t>(kWrittenVersion);
  out.put<uint64_t>(tensors_.size());
  out.put<uint64_t>(metadata_.size());
  for (const auto& kv : metadata_) {
    out.put_string(kv.key);
    out.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    encode_payload(out, kv.value);
  }
  for (const auto& t : tensors_) {
    out.put_string(t.name);
    out.put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t dim : t.dims) out.put<uint64_t>(dim);
    out.put<uint32_t>(static_cast<uint32_t>(t.type));
    out.put<uint64_t>(t.offset);
  }
  if (tensors_.empty()) {
    plan.data_offset = plan.total_bytes = plan.header.size();
    return plan;
  }
  plan.data_offset = align_up(plan.header.size(), alignment());
  if (data_bytes_ > std::numeric_limits<uint64_t>::max() - plan.data_offset) {
    return fail("the tensor data ({} tensors) does not fit in a 64-bit file size", tensors_.size());
  }
  plan.total_bytes = plan.data_offset + data_bytes_;
  return plan;
}

Status GgufWriter::write_file(const std::string& path, const TensorFiller& fill) const {
  auto layout = plan();
  if (!layout) return fail("{}: {}", path, layout.error().message);
  auto file = WritableMappedFile::create(path, layout->total_bytes);
  if (!file) return file.error();
  if (Status s = fill_image(file->bytes(), layout->header, layout->data_offset, tensors_, fill); !s)
    return fail("{}: {}", path, s.error().message);
  return file->commit();
}

Result<std::vector<std::byte>> GgufWriter::write_memory(const TensorFiller& fill) const {
  auto layout = plan();
  if (!layout) return layout.error();
  if (layout->total_bytes > std::numeric_limits<size_t>::max())
    return fail("{} bytes do not fit in memory", layout->total_bytes);
  std::vector<std::byte> image(layout->total_bytes);
  if (Status s = fill_image(image, layout->header, layout->data_offset, tensors_, fill); !s) return s.error();
  return image;
}

GgufWriter::TensorFiller copy_tensors_from(const GgufFile& source) {
  return [&source](size_t, const GgufTensorInfo& tensor, std::span<std::byte> data) -> Status {
    const GgufTensorInfo* from = source.find_tensor(tensor.name);
    if (from == nullptr) return fail("not found in {}", source.source_name());
    if (from->type != tensor.type || from->dims != tensor.dims) {
      return fail("{} holds it with another type or shape", source.source_name());
    }
    const auto bytes = source.tensor_data(*from);
    if (bytes.size() != data.size())
      return fail("{} holds {} bytes, {} expected", source.source_name(), bytes.size(), data.size());
    std::memcpy(data.data(), bytes.data(), bytes.size());
    return Status::success();
  };
}

}  // namespace infertune
