#include "engine/quantize/importance_file.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "engine/gguf/gguf_file.h"

namespace infertune {
namespace {

bool starts_with_gguf_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, sizeof magic);
  return in && std::memcmp(magic, "GGUF", 4) == 0;
}

bool remove_suffix(std::string& name, std::string_view suffix) {
  if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  name.resize(name.size() - suffix.size());
  return true;
}

std::vector<float> f32_values(const GgufFile& file, const GgufTensorInfo& t) {
  const std::span<const std::byte> bytes = file.tensor_data(t);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// sums [n_counts][n_cols] / counts [n_counts], each block by its own count (an expert's tokens); a block whose
// count is 0 gets importance 1 everywhere (no information: every column alike). Counts are stored as floats and
// rounded to whole tokens first, as llama.cpp does.
Result<std::vector<float>> mean_squares(const std::string& name, const std::vector<float>& sums,
                                        const std::vector<float>& counts) {
  if (counts.empty() || sums.empty() || sums.size() % counts.size() != 0) {
    return fail("'{}': {} sums do not split into {} counts", name, sums.size(), counts.size());
  }
  const size_t n_cols = sums.size() / counts.size();
  std::vector<float> out(sums.size());
  for (size_t j = 0; j < counts.size(); ++j) {
    if (!std::isfinite(counts[j])) return fail("'{}': count {} is not a number of tokens", name, counts[j]);
    const auto count = static_cast<float>(std::lround(counts[j]));
    for (size_t i = 0; i < n_cols; ++i) out[j * n_cols + i] = count > 0.0f ? sums[j * n_cols + i] / count : 1.0f;
  }
  return out;
}

Status read_gguf_metadata(const GgufFile& file, ImportanceFile& out) {
  const bool has_metadata =
      file.find("imatrix.datasets") && file.find("imatrix.chunk_count") && file.find("imatrix.chunk_size");
  if (!has_metadata) return fail("no imatrix.datasets / chunk_count / chunk_size metadata (not an importance matrix?)");
  if (auto datasets = file.get_array("imatrix.datasets", GgufValueType::STRING)) {
    out.datasets = std::get<std::vector<std::string>>((*datasets)->elements);
  }
  auto chunks = file.get_uint("imatrix.chunk_count");
  if (!chunks) return chunks.error();
  out.chunk_count = static_cast<int64_t>(*chunks);
  return {};
}

Status read_gguf(const std::string& path, ImportanceFile& out) {
  auto file = GgufFile::open(path);
  if (!file) return file.error();
  if (Status s = read_gguf_metadata(*file, out); !s) return s;
  std::map<std::string, std::pair<const GgufTensorInfo*, const GgufTensorInfo*>> pairs;  // name -> sums, counts
  for (const GgufTensorInfo& t : file->tensors()) {
    std::string name = t.name;
    if (remove_suffix(name, ".in_sum2")) {
      pairs[name].first = &t;
    } else if (remove_suffix(name, ".counts")) {
      pairs[name].second = &t;
    }
  }
  if (pairs.empty()) return fail("no <weight>.in_sum2 / <weight>.counts tensors");
  for (const auto& [name, pair] : pairs) {
    const auto [sums, counts] = pair;
    if (!sums || !counts)
      return fail("'{}' has {} but no {}", name, sums ? "sums" : "counts", sums ? "counts" : "sums");
    if (sums->type != GgmlType::F32 || counts->type != GgmlType::F32) {
      return fail("'{}': sums and counts must be F32, not {} and {}", name, ggml_type_name(sums->type),
                  ggml_type_name(counts->type));
    }
    auto values = mean_squares(name, f32_values(*file, *sums), f32_values(*file, *counts));
    if (!values) return values.error();
    out.entries[name] = std::move(*values);
  }
  return {};
}

// The legacy .dat layout, bounds-checked: int32 entry count; per entry int32 name length, the name, int32 ncall,
// int32 n_values, float[n_values]; then optionally int32 chunk count, int32 dataset length, the dataset name.
class DatReader {
 public:
  explicit DatReader(std::vector<char> bytes) : bytes_(std::move(bytes)) {}
  size_t offset() const { return at_; }
  bool at_end() const { return at_ == bytes_.size(); }
  bool read(void* dst, size_t n) {
    if (n > bytes_.size() - at_) return false;
    std::memcpy(dst, bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool read_i32(int32_t& v) { return read(&v, sizeof v); }
  size_t remaining() const { return bytes_.size() - at_; }

 private:
  std::vector<char> bytes_;
  size_t at_ = 0;
};

Status read_dat_entry(DatReader& in, int index, ImportanceFile& out) {
  int32_t len = 0;
  if (!in.read_i32(len) || len < 0 || static_cast<size_t>(len) > in.remaining()) {
    return fail("entry {}: bad name length at byte {}", index, in.offset());
  }
  std::string name(static_cast<size_t>(len), '\0');
  in.read(name.data(), name.size());
  name.resize(std::strlen(name.c_str()));  // as llama.cpp: the name ends at its first NUL
  int32_t ncall = 0;
  int32_t n_values = 0;
  if (!in.read_i32(ncall) || !in.read_i32(n_values) || n_values < 1 ||
      static_cast<size_t>(n_values) > in.remaining() / sizeof(float)) {
    return fail("entry {} '{}': bad value count at byte {}", index, name, in.offset());
  }
  std::vector<float> values(static_cast<size_t>(n_values));
  in.read(values.data(), values.size() * sizeof(float));
  // The stored values are sum / count * ncall; dividing by ncall leaves the mean square.
  if (ncall > 0) {
    for (float& v : values) v /= static_cast<float>(ncall);
  }
  out.entries[name] = std::move(values);
  return {};
}

Status read_dat(const std::string& path, ImportanceFile& out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return fail("cannot open it");
  DatReader in(std::vector<char>(std::istreambuf_iterator<char>(file), {}));
  int32_t n_entries = 0;
  if (!in.read_i32(n_entries) || n_entries < 1) {
    return fail("neither GGUF nor a legacy .dat importance matrix (no entry count)");
  }
  for (int i = 0; i < n_entries; ++i) {
    if (Status s = read_dat_entry(in, i, out); !s) return s;
  }
  // The trailer (chunk count, dataset) is optional.
  int32_t chunks = 0;
  int32_t len = 0;
  if (!in.at_end() && in.read_i32(chunks)) {
    out.chunk_count = chunks;
    if (in.read_i32(len) && len > 0 && static_cast<size_t>(len) <= in.remaining()) {
      std::string dataset(static_cast<size_t>(len), '\0');
      in.read(dataset.data(), dataset.size());
      out.datasets.push_back(dataset.c_str());
    }
  }
  return {};
}

}  // namespace

Result<ImportanceFile> load_importance_file(const std::string& path) {
  ImportanceFile out;
  out.path = path;
  const Status s = starts_with_gguf_magic(path) ? read_gguf(path, out) : read_dat(path, out);
  if (!s) return fail("importance matrix {}: {}", path, s.error().message);
  return out;
}

Status select_importance(ImportanceFile& file, const std::vector<std::string>& include,
                         const std::vector<std::string>& exclude) {
  const auto contains_any = [](const std::string& name, const std::vector<std::string>& parts) {
    for (const std::string& part : parts) {
      if (name.find(part) != std::string::npos) return true;
    }
    return false;
  };
  std::erase_if(file.entries, [&](const auto& e) {
    return contains_any(e.first, exclude) || (!include.empty() && !contains_any(e.first, include));
  });
  for (const auto& [name, values] : file.entries) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(values[i])) {
        return fail("importance matrix {}: '{}' value {} is {}", file.path, name, i, values[i]);
      }
    }
  }
  return {};
}

}  // namespace infertune
