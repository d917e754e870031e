#pragma once
// Writing GGUF v3 files that llama.cpp-compatible readers load: metadata in insertion order, tensor
// table, tensor data aligned to `general.alignment` (32 unless set) with zero padding.
//
// Memory: the output file is sized up front and memory-mapped for writing, and each tensor's bytes are
// produced directly into the map by a caller-supplied filler, so writing a model needs no buffer the size
// of a tensor. The file is written under a temporary name and renamed into place only when complete.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_value.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

class GgufWriter {
 public:
  // Fills `data` (exactly tensor.n_bytes) with the tensor's bytes. Called once per tensor, in table order.
  using TensorFiller = std::function<Status(size_t index, const GgufTensorInfo& tensor, std::span<std::byte> data)>;

  GgufWriter() = default;
  // Starts from another file's metadata and tensor table (round trips, re-quantization).
  static GgufWriter from_file(const GgufFile& file);

  // Sets a key (replacing an earlier value of the same key in place, keeping its position).
  void set(std::string key, GgufValue value);
  // Declares the next tensor. Errors on a duplicate name, 0 or > 4 dims, a zero dim, a row length that
  // is not a multiple of the type's block size, or a size that overflows.
  Status add_tensor(std::string name, std::vector<uint64_t> dims, GgmlType type);

  uint64_t alignment() const;  // general.alignment when set, else 32
  const std::vector<GgufKeyValue>& metadata() const { return metadata_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }  // offsets assigned by layout

  // Writes the whole file to `path` (via `path`.tmp and a rename).
  Status write_file(const std::string& path, const TensorFiller& fill) const;
  // Writes the whole file into memory (tests, fuzz seeds).
  Result<std::vector<std::byte>> write_memory(const TensorFiller& fill) const;

 private:
  struct Plan;  // the encoded header and the file's layout, made by plan()
  Result<Plan> plan() const;
  void assign_offsets();  // lays the tensors out in table order at the current alignment

  std::vector<GgufKeyValue> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  uint64_t data_bytes_ = 0;  // size of the data section: every tensor padded to the alignment
};

// Filler that copies each tensor's bytes from `source` (which must hold tensors of the same names).
GgufWriter::TensorFiller copy_tensors_from(const GgufFile& source);

}  // namespace infertune
