#include "engine/quantize/row_encoder.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "kernels/quant.h"

namespace infertune {
namespace {

class ParallelRows {
 public:
  ParallelRows(const RowEncoding& encoding, const RowSource& source, std::span<std::byte> data, uint64_t row_bytes)
      : encoding_(encoding), source_(source), data_(data), row_bytes_(row_bytes) {}

  Status run() {
    // A tensor under 256 KiB is not worth starting threads for. Otherwise at least 8 chunks per worker, so that
    // the last, uneven chunk costs little, and at most 1 MiB of output per chunk.
    constexpr uint64_t kSmallTensorBytes = uint64_t{256} << 10;
    constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 20;
    const uint64_t n_rows = encoding_.n_rows;
    const uint64_t wanted = data_.size() < kSmallTensorBytes ? 1 : std::max(1u, encoding_.threads);
    const uint64_t balanced_rows = (n_rows + 8 * wanted - 1) / (8 * wanted);
    chunk_rows_ = std::clamp<uint64_t>(balanced_rows, 1, std::max<uint64_t>(1, kMaxChunkBytes / row_bytes_));
    const uint64_t n_chunks = (n_rows + chunk_rows_ - 1) / chunk_rows_;
    const unsigned n_workers = static_cast<unsigned>(std::min(wanted, n_chunks));
    std::vector<std::thread> workers;
    try {
      for (unsigned i = 1; i < n_workers; ++i) workers.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      // No more threads to be had: the ones started (and this one) share the rows all the same.
    }
    work();
    for (std::thread& t : workers) t.join();
    return status_;
  }

 private:
  void work() {
    std::vector<float> row(encoding_.row_length);  // the one per-thread buffer
    for (;;) {
      const uint64_t first = next_row_.fetch_add(chunk_rows_);
      if (first >= encoding_.n_rows || failed_.load()) return;
      const uint64_t last = std::min(encoding_.n_rows, first + chunk_rows_);
      for (uint64_t r = first; r < last; ++r) {
        if (Status s = source_(r, row); !s) return record(r, s.error().message);
        const std::span<std::byte> out = data_.subspan(r * row_bytes_, row_bytes_);
        Status s = encoding_.importance.empty() ? quantize_row(encoding_.type, row, out)
                                                : quantize_row_weighted(encoding_.type, row, importance_of(r), out);
        if (!s) return record(r, s.error().message);
      }
    }
  }

  std::span<const float> importance_of(uint64_t r) const {
    const uint64_t n = encoding_.row_length;
    const uint64_t experts = encoding_.importance.size() / n;
    const uint64_t rows_per_expert = std::max<uint64_t>(1, encoding_.n_rows / experts);
    return encoding_.importance.subspan(std::min(r / rows_per_expert, experts - 1) * n, n);
  }

  void record(uint64_t row, const std::string& message) {
    std::lock_guard lock(mutex_);
    if (!failed_.exchange(true)) status_ = fail("tensor '{}' row {}: {}", encoding_.tensor_name, row, message);
  }

  const RowEncoding& encoding_;
  const RowSource& source_;
  std::span<std::byte> data_;
  uint64_t row_bytes_;
  uint64_t chunk_rows_ = 1;
  std::atomic<uint64_t> next_row_{0};
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  Status status_;
};

}  // namespace

Status encode_rows(const RowEncoding& encoding, const RowSource& source, std::span<std::byte> data) {
  const uint64_t row_bytes = ggml_row_bytes(encoding.type, encoding.row_length).value_or(0);
  if (row_bytes == 0 || data.size() != encoding.n_rows * row_bytes) {
    return fail("tensor '{}': {} bytes for {} rows of {} {} values", encoding.tensor_name, data.size(), encoding.n_rows,
                encoding.row_length, ggml_type_name(encoding.type));
  }
  const uint64_t n = encoding.row_length;
  if (!encoding.importance.empty() &&
      (encoding.importance.size() % n != 0 || encoding.n_rows % (encoding.importance.size() / n) != 0)) {
    return fail("tensor '{}': an importance matrix of {} values does not fit {} rows of {}", encoding.tensor_name,
                encoding.importance.size(), encoding.n_rows, n);
  }
  if (encoding.n_rows == 0) return {};
  return ParallelRows(encoding, source, data, row_bytes).run();
}

unsigned encoder_threads(unsigned requested) {
  constexpr unsigned kMaxThreads = 256;
  if (requested > 0) return std::min(requested, kMaxThreads);
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace infertune
