// libFuzzer target for the GGUF reader (and, through round trips, the writer). Properties checked on
// every input; a violation traps, which libFuzzer reports as a crash:
//   - parsing never crashes, hangs or over-allocates (ASan/UBSan, -rss_limit_mb, -timeout);
//   - a refusal has a message prefixed with the source name;
//   - an accepted file is self-consistent: every key and tensor is found by name, every tensor's data
//     lies inside the input at data_offset + offset, every typed accessor returns a value or an error;
//   - whatever the reader accepts the writer can write, the result reads back with the same metadata
//     and tensors, writing it again gives the same bytes, and it is no larger than the input plus one
//     alignment unit (the writer only packs the data section tighter).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"

namespace {

using namespace infertune;

void check(bool condition) {
  if (!condition) __builtin_trap();
}

void exercise_accessors(const GgufFile& file) {
  for (const auto& kv : file.metadata()) {
    check(file.find(kv.key) == &kv.value);
    (void)file.get_uint(kv.key);
    (void)file.get_int(kv.key);
    (void)file.get_float(kv.key);
    (void)file.get_bool(kv.key);
    (void)file.get_string(kv.key);
    if (const auto* array = std::get_if<GgufArray>(&kv.value.storage)) {
      auto same = file.get_array(kv.key, array->element_type());
      check(same.ok() && *same == array);
    }
  }
}

void exercise_tensors(const GgufFile& file, std::span<const std::byte> input) {
  volatile uint8_t sink = 0;
  for (const auto& t : file.tensors()) {
    check(file.find_tensor(t.name) == &t);
    check(t.offset % file.alignment() == 0);
    const auto data = file.tensor_data(t);
    check(data.size() == t.n_bytes);
    check(data.data() == input.data() + file.data_offset() + t.offset);
    sink = sink + static_cast<uint8_t>(data.front()) + static_cast<uint8_t>(data.back());  // ASan checks both ends
  }
}

bool same_tensor_table(const GgufFile& a, const GgufFile& b) {
  if (a.tensors().size() != b.tensors().size()) return false;
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const auto& x = a.tensors()[i];
    const auto& y = b.tensors()[i];
    if (x.name != y.name || x.dims != y.dims || x.type != y.type || x.n_bytes != y.n_bytes) return false;
    const auto dx = a.tensor_data(x);
    const auto dy = b.tensor_data(y);
    if (dx.size() != dy.size() || std::memcmp(dx.data(), dy.data(), dx.size()) != 0) return false;
  }
  return true;
}

void round_trip(const GgufFile& file, size_t input_size) {
  auto written = GgufWriter::from_file(file).write_memory(copy_tensors_from(file));
  check(written.ok());
  check(written->size() <= input_size + file.alignment());
  auto reread = GgufFile::parse(*written, "rewritten");
  check(reread.ok());
  check(reread->metadata().size() == file.metadata().size());
  for (size_t i = 0; i < file.metadata().size(); ++i) check(reread->metadata()[i].key == file.metadata()[i].key);
  check(same_tensor_table(file, *reread));
  // Values are compared through their encoding, which also covers NaN payloads (== would not).
  auto again = GgufWriter::from_file(*reread).write_memory(copy_tensors_from(*reread));
  check(again.ok() && *again == *written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  auto file = GgufFile::parse(input, "fuzz");
  if (!file.ok()) {
    check(std::string_view(file.error().message).starts_with("fuzz: "));
    return 0;
  }
  exercise_accessors(*file);
  exercise_tensors(*file, input);
  round_trip(*file, size);
  return 0;
}
