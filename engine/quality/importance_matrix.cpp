#include "engine/quality/importance_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "engine/gguf/gguf_writer.h"

namespace infertune {

namespace {

// "blk.0.ffn_up_exps.weight (expert 5)" -> ("blk.0.ffn_up_exps.weight", 5); other names -> (name, nullopt).
std::pair<std::string_view, std::optional<uint32_t>> split_expert(std::string_view name) {
  constexpr std::string_view kMark = " (expert ";
  const size_t at = name.find(kMark);
  if (at == std::string_view::npos || !name.ends_with(')')) return {name, std::nullopt};
  const std::string_view digits = name.substr(at + kMark.size(), name.size() - 1 - at - kMark.size());
  uint32_t expert = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), expert);
  if (ec != std::errc() || end != digits.data() + digits.size()) return {name, std::nullopt};
  return {name.substr(0, at), expert};
}

}  // namespace

void ImportanceMatrix::observe(std::string_view name, std::span<const float> x, size_t n_tokens, size_t n_cols) {
  if (!name.starts_with("blk.") && !(include_output_ && name == "output.weight")) return;
  const auto [base, expert] = split_expert(name);
  const size_t n_mat = expert ? n_expert_ : 1;
  const size_t slot = expert.value_or(0);
  if (slot >= n_mat) {
    if (error_.empty()) error_ = fmt::format("{}: expert {} of a model with {} experts", name, slot, n_expert_);
    return;
  }
  Entry& e = entries_[std::string(base)];
  if (e.sums.empty()) {
    e.sums.assign(n_mat * n_cols, 0.0f);
    e.counts.assign(n_mat, 0);
  }
  if (e.sums.size() != n_mat * n_cols) {
    if (error_.empty()) error_ = fmt::format("{}: inputs of {} and {} values", name, e.sums.size() / n_mat, n_cols);
    return;
  }
  float* sums = e.sums.data() + slot * n_cols;
  for (size_t t = 0; t < n_tokens; ++t) {
    const float* row = x.data() + t * n_cols;
    for (size_t j = 0; j < n_cols; ++j) sums[j] += row[j] * row[j];
  }
  e.counts[slot] += n_tokens;
}

Status ImportanceMatrix::write_gguf(const std::string& path, const Provenance& p) const {
  if (!error_.empty()) return fail("the importance matrix is inconsistent: {}", error_);
  GgufWriter w;
  w.set("general.type", GgufValue{std::string("imatrix")});
  w.set("imatrix.datasets", GgufValue{GgufArray{p.datasets}});
  w.set("imatrix.chunk_count", GgufValue{p.chunk_count});
  w.set("imatrix.chunk_size", GgufValue{p.chunk_size});
  std::vector<const std::pair<const std::string, Entry>*> order;
  for (const auto& entry : entries_) {
    const std::string& name = entry.first;
    const Entry& e = entry.second;
    const uint64_t n_mat = e.counts.size();
    if (Status s = w.add_tensor(name + ".in_sum2", {e.sums.size() / n_mat, n_mat}, GgmlType::F32); !s) return s;
    if (Status s = w.add_tensor(name + ".counts", {1, n_mat}, GgmlType::F32); !s) return s;
    order.push_back(&entry);
  }
  return w.write_file(path, [&](size_t index, const GgufTensorInfo&, std::span<std::byte> data) -> Status {
    const Entry& e = order[index / 2]->second;
    if (index % 2 == 0) {
      std::memcpy(data.data(), e.sums.data(), data.size());
    } else {
      std::vector<float> counts(e.counts.begin(), e.counts.end());
      std::memcpy(data.data(), counts.data(), data.size());
    }
    return {};
  });
}

Status ImportanceMatrix::write_dat(const std::string& path, const Provenance& p) const {
  if (!error_.empty()) return fail("the importance matrix is inconsistent: {}", error_);
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary);
    if (!out) return fail("{}: cannot create the file", temp);
    const auto put = [&out](const void* data, size_t bytes) { out.write(static_cast<const char*>(data), bytes); };
    const auto put_i32 = [&put](int32_t v) { put(&v, sizeof(v)); };
    put_i32(static_cast<int32_t>(entries_.size()));
    const uint64_t chunk = std::max<uint32_t>(p.chunk_size, 1);
    for (const auto& [name, e] : entries_) {
      put_i32(static_cast<int32_t>(name.size()));
      put(name.data(), name.size());
      const uint64_t busiest = *std::max_element(e.counts.begin(), e.counts.end());
      const int32_t ncall = static_cast<int32_t>((busiest + chunk - 1) / chunk);  // rounded up, never 0 with data
      put_i32(ncall);
      put_i32(static_cast<int32_t>(e.sums.size()));
      std::vector<float> scaled(e.sums.size());
      const size_t n_cols = e.sums.size() / e.counts.size();
      for (size_t j = 0; j < scaled.size(); ++j) {
        const uint64_t count = e.counts[j / n_cols];
        scaled[j] = count == 0 ? static_cast<float>(ncall) : e.sums[j] / static_cast<float>(count) * ncall;
      }
      put(scaled.data(), scaled.size() * sizeof(float));
    }
    put_i32(static_cast<int32_t>(p.chunk_count));
    const std::string dataset = p.datasets.empty() ? "" : p.datasets.back();
    put_i32(static_cast<int32_t>(dataset.size()));
    put(dataset.data(), dataset.size());
    if (!out.flush()) return fail("{}: write failed", temp);
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) return fail("{}: cannot rename {} to it: {}", path, temp, ec.message());
  return {};
}

}  // namespace infertune
