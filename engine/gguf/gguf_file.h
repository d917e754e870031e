#pragma once
// Reading GGUF v2/v3 files. The header, metadata and tensor table are parsed and validated up front;
// tensor data stays in the read-only memory map (no copy). Every malformed input is refused with an
// Error naming the problem and the byte offset, key or tensor name.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_value.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

inline constexpr uint64_t kGgufDefaultAlignment = 32;

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) dimension
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;  // relative to the start of the tensor data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  bool operator==(const GgufTensorInfo&) const = default;
};

class MappedFile;  // engine/gguf/mapped_file.h

class GgufFile {
 public:
  // Maps the file read-only and parses it.
  static Result<GgufFile> open(const std::string& path);
  // Parses bytes owned by the caller, which must outlive the GgufFile (tests, fuzzing).
  static Result<GgufFile> parse(std::span<const std::byte> bytes, std::string source_name = "<memory>");

  const std::string& source_name() const { return source_name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute offset of the tensor data section
  uint64_t file_size() const { return bytes_.size(); }

  const std::vector<GgufKeyValue>& metadata() const { return metadata_; }  // in file order
  const GgufValue* find(std::string_view key) const;

  // Typed accessors; the error names the key and, for a type mismatch, the stored type.
  // get_uint accepts any integer type holding a non-negative value; get_int any integer type;
  // get_float f32 or f64. get_array also checks the element type.
  Result<uint64_t> get_uint(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;
  Result<double> get_float(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string_view> get_string(std::string_view key) const;
  Result<const GgufArray*> get_array(std::string_view key, GgufValueType element_type) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }  // in file order
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  std::span<const std::byte> tensor_data(const GgufTensorInfo& tensor) const;

 private:
  std::shared_ptr<const MappedFile> mapping_;  // null when parsing caller-owned bytes
  std::span<const std::byte> bytes_;
  std::string source_name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<GgufKeyValue> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::vector<size_t> key_order_;     // [n_kv] metadata_ indices sorted by key, for find()
  std::vector<size_t> tensor_order_;  // [n_tensors] tensors_ indices sorted by name, for find_tensor()

  friend class GgufParser;  // engine/gguf/gguf_parser.cpp fills the fields
};

}  // namespace infertune
