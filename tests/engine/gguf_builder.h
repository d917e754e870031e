#pragma once
// Builds GGUF byte images field by field, independently of engine/gguf (no shared code with the reader
// or the writer under test), so that a test can make a valid file and then break it in exactly one
// place, and knows the byte offset of every part it may want an error message to name.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infertune::test {

// GGUF value type ids and ggml type ids, spelled out here rather than taken from the code under test.
enum GgufTypeId : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};
enum GgmlTypeId : uint32_t {
  kGgmlF32 = 0,
  kGgmlF16 = 1,
  kGgmlQ4_0 = 2,
  kGgmlQ8_0 = 8,
  kGgmlQ4_K = 12,
  kGgmlI8 = 24,
  kGgmlF64 = 28,
  kGgmlBF16 = 30,
};

// Little-endian encodings of single fields.
std::vector<std::byte> le_u8(uint8_t v);
std::vector<std::byte> le_u32(uint32_t v);
std::vector<std::byte> le_u64(uint64_t v);
std::vector<std::byte> le_i32(int32_t v);
std::vector<std::byte> le_f32(float v);
std::vector<std::byte> le_f64(double v);
std::vector<std::byte> gguf_string(const std::string& s);  // u64 length + bytes
// An array payload: element type, count, then the already-encoded elements.
std::vector<std::byte> gguf_array(uint32_t element_type, uint64_t count, const std::vector<std::byte>& elements);
std::vector<std::byte> concat(const std::vector<std::vector<std::byte>>& parts);

struct GgufImage {
  std::vector<std::byte> bytes;
  std::vector<uint64_t> kv_offsets;           // [n_kv] where each entry (its key length) starts
  std::vector<uint64_t> value_type_offsets;   // [n_kv] where each entry's value type id is
  std::vector<uint64_t> tensor_info_offsets;  // [n_tensors] where each tensor info (its name length) starts
  std::vector<uint64_t> tensor_offsets;       // [n_tensors] relative to data_offset, as written in the table
  std::vector<uint64_t> tensor_bytes;         // [n_tensors] data bytes the builder reserved for each
  uint64_t header_end = 0;                    // end of the tensor table
  uint64_t data_offset = 0;                   // header_end rounded up to the alignment
};

class GgufBuilder {
 public:
  GgufBuilder& magic(std::string m);
  GgufBuilder& version(uint32_t v);
  GgufBuilder& tensor_count(uint64_t n);  // overrides the count written in the header
  GgufBuilder& kv_count(uint64_t n);
  // The alignment used to lay the data out; writing general.alignment is a separate kv call.
  GgufBuilder& layout_alignment(uint64_t a);
  // Pad the last tensor's data to the alignment (as gguf-py does); off, the file ends right after it.
  GgufBuilder& pad_last(bool pad);

  GgufBuilder& kv(const std::string& key, uint32_t type, std::vector<std::byte> payload);
  GgufBuilder& kv_u32(const std::string& key, uint32_t v) { return kv(key, kU32, le_u32(v)); }
  GgufBuilder& kv_u64(const std::string& key, uint64_t v) { return kv(key, kU64, le_u64(v)); }
  GgufBuilder& kv_i32(const std::string& key, int32_t v) { return kv(key, kI32, le_i32(v)); }
  GgufBuilder& kv_f32(const std::string& key, float v) { return kv(key, kF32, le_f32(v)); }
  GgufBuilder& kv_f64(const std::string& key, double v) { return kv(key, kF64, le_f64(v)); }
  GgufBuilder& kv_bool(const std::string& key, bool v) { return kv(key, kBool, le_u8(v ? 1 : 0)); }
  GgufBuilder& kv_string(const std::string& key, const std::string& v) { return kv(key, kString, gguf_string(v)); }
  GgufBuilder& kv_string_array(const std::string& key, const std::vector<std::string>& values);
  GgufBuilder& kv_f32_array(const std::string& key, const std::vector<float>& values);
  GgufBuilder& kv_i32_array(const std::string& key, const std::vector<int32_t>& values);

  // A tensor info. `offset`: the value written in the table (default: the next aligned offset after the
  // previous tensor). `n_bytes`: data bytes reserved for it (default: computed from a small table of
  // types; 0 for types or shapes that table does not size).
  GgufBuilder& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t ggml_type,
                      std::optional<uint64_t> offset = std::nullopt, std::optional<uint64_t> n_bytes = std::nullopt);

  GgufImage build() const;

 private:
  struct Kv {
    std::string key;
    uint32_t type;
    std::vector<std::byte> payload;
  };
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    std::optional<uint64_t> offset;
    std::optional<uint64_t> n_bytes;
  };

  std::string magic_ = "GGUF";
  uint32_t version_ = 3;
  std::optional<uint64_t> tensor_count_;
  std::optional<uint64_t> kv_count_;
  uint64_t alignment_ = 32;
  bool pad_last_ = false;
  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
};

// The byte value the builder stores at position `i` of tensor `tensor_index`'s data.
std::byte builder_data_byte(size_t tensor_index, uint64_t i);

}  // namespace infertune::test
