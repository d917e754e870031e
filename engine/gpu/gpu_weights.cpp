#include "engine/gpu/gpu_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>

#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune {
namespace {

constexpr size_t kStagingBytes = size_t{64} << 20;  // pinned buffer the weights go through
constexpr size_t kProgressBytes = size_t{1} << 30;  // uploads larger than this report their progress
constexpr double kMiB = 1024.0 * 1024.0;

// The bytes of a weight as the file stores them: a repacked matrix's WeightMatrix::data is interleaved for
// the CPU kernels, but the file's mapping still holds the original rows.
std::span<const std::byte> file_layout_bytes(const Model& model, const WeightMatrix& w) {
  if (w.layout == WeightLayout::rows) return w.data;
  const GgufTensorInfo* info = model.file().find_tensor(w.name);
  return info ? model.file().tensor_data(*info) : std::span<const std::byte>{};
}

// Page-locked memory for the duration of the upload (pageable copies when it cannot be had).
struct PinnedStaging {
  void* ptr = nullptr;
  PinnedStaging() {
    if (cuda::host_alloc_pinned(&ptr, kStagingBytes) != 0) ptr = nullptr;
  }
  ~PinnedStaging() { cuda::host_free_pinned(ptr); }
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
};

// A stream of its own for the upload, so that it does not wait on (or for) a context's work.
struct UploadStream {
  void* stream = nullptr;
  ~UploadStream() {
    if (stream) cuda::stream_synchronize(stream);
    cuda::stream_destroy(stream);
  }
};

// Prints "uploading ... n%" to stderr for uploads large enough to keep a user waiting.
class UploadProgress {
 public:
  UploadProgress(size_t total, int device) : total_(total), device_(device) {}
  void advance(size_t bytes) {
    done_ += bytes;
    if (total_ < kProgressBytes) return;
    const int percent = static_cast<int>(100.0 * done_ / total_);
    if (percent / 10 == shown_ / 10 && done_ < total_) return;
    shown_ = percent;
    std::fprintf(stderr, "\rinfertune: uploading %.0f MiB of weights to GPU %d: %3d%%", total_ / kMiB, device_,
                 percent);
    if (done_ >= total_) std::fprintf(stderr, "\n");
  }

 private:
  size_t total_;
  int device_;
  size_t done_ = 0;
  int shown_ = -10;
};

}  // namespace

// One upload: fills a GpuWeights tensor by tensor, within the memory budget.
class GpuWeightUpload {
 public:
  GpuWeightUpload(const Model& model, GpuWeights& weights, uint64_t budget, size_t total)
      : model_(model), weights_(weights), budget_(budget), progress_(total, weights.device()) {}

  Status start() { return cuda_status(cuda::stream_create(&stream_.stream), "creating a CUDA stream for the upload"); }

  Status layer(uint32_t il, GpuLayerWeights& dst) {
    const LayerWeights& src = model_.weights().layers[il];
    struct VectorSlot {
      DeviceBuffer* dst;
      const std::vector<float>* src;
      const char* name;
    };
    for (const VectorSlot& v :
         {VectorSlot{&dst.attn_norm, &src.attn_norm, "attn_norm"}, VectorSlot{&dst.ffn_norm, &src.ffn_norm, "ffn_norm"},
          VectorSlot{&dst.q_bias, &src.attn_q_bias, "attn_q.bias"},
          VectorSlot{&dst.k_bias, &src.attn_k_bias, "attn_k.bias"},
          VectorSlot{&dst.v_bias, &src.attn_v_bias, "attn_v.bias"},
          VectorSlot{&dst.q_norm, &src.attn_q_norm, "attn_q_norm"},
          VectorSlot{&dst.k_norm, &src.attn_k_norm, "attn_k_norm"},
          VectorSlot{&dst.attn_post_norm, &src.attn_post_norm, "post_attention_norm"},
          VectorSlot{&dst.ffn_post_norm, &src.ffn_post_norm, "post_ffw_norm"}}) {
      if (v.src->empty()) continue;
      auto buffer = vector(*v.src, fmt::format("blk.{}.{}", il, v.name));
      if (!buffer) return buffer.error();
      *v.dst = std::move(*buffer);
    }
    struct MatrixSlot {
      GpuMatrix* dst;
      const WeightMatrix* src;
    };
    for (const MatrixSlot& m :
         {MatrixSlot{&dst.q, &src.attn_q}, MatrixSlot{&dst.k, &src.attn_k}, MatrixSlot{&dst.v, &src.attn_v},
          MatrixSlot{&dst.o, &src.attn_output}, MatrixSlot{&dst.gate, &src.ffn_gate}, MatrixSlot{&dst.up, &src.ffn_up},
          MatrixSlot{&dst.down, &src.ffn_down}}) {
      auto uploaded = matrix(*m.src);
      if (!uploaded) return uploaded.error();
      *m.dst = std::move(*uploaded);
    }
    return {};
  }

  Status output() {
    auto norm = vector(model_.weights().output_norm, "output_norm");
    if (!norm) return norm.error();
    weights_.output_norm_ = std::move(*norm);
    auto uploaded = matrix(model_.weights().output);
    if (!uploaded) return uploaded.error();
    weights_.output_ = std::move(*uploaded);
    return {};
  }

  Status finish() { return cuda_status(cuda::stream_synchronize(stream_.stream), "uploading the weights"); }

 private:
  Result<DeviceBuffer> allocate(size_t bytes, std::string_view what) {
    if (budget_ != 0 && weights_.bytes_ + bytes > budget_) {
      return fail("out of GPU memory for {}: it needs {:.1f} MiB, {:.1f} MiB of the {:.1f} MiB budget are free", what,
                  bytes / kMiB, (budget_ - std::min<uint64_t>(budget_, weights_.bytes_)) / kMiB, budget_ / kMiB);
    }
    auto buffer = DeviceBuffer::allocate(bytes, what);
    if (buffer) weights_.bytes_ += bytes;
    return buffer;
  }

  // Host-to-device copy through the pinned staging buffer (a pageable copy when none could be had).
  Status copy_up(void* dst, const void* src, size_t bytes, std::string_view what) {
    const auto* from = static_cast<const std::byte*>(src);
    auto* to = static_cast<std::byte*>(dst);
    if (!staging_.ptr) return cuda_status(cuda::copy_to_device(to, from, bytes, stream_.stream), what);
    for (size_t done = 0; done < bytes; done += kStagingBytes) {
      const size_t n = std::min(kStagingBytes, bytes - done);
      // The staging buffer is reused: the previous piece must have left it.
      if (Status s = cuda_status(cuda::stream_synchronize(stream_.stream), what); !s) return s;
      std::memcpy(staging_.ptr, from + done, n);
      if (Status s = cuda_status(cuda::copy_to_device(to + done, staging_.ptr, n, stream_.stream), what); !s) return s;
    }
    return cuda_status(cuda::stream_synchronize(stream_.stream), what);
  }

  Result<GpuMatrix> matrix(const WeightMatrix& w) {
    if (!cuda::weight_type_supported(static_cast<uint32_t>(w.type))) {
      return fail("tensor '{}' ({}): no GPU kernel for this type", w.name, ggml_type_name(w.type));
    }
    if (w.n_cols % 32 != 0) {
      return fail(
          "tensor '{}': rows of {} values; the GPU kernels need multiples of 32 (run it on the CPU: lower -ngl)",
          w.name, w.n_cols);
    }
    const std::span<const std::byte> bytes = file_layout_bytes(model_, w);
    if (bytes.empty()) return fail("tensor '{}': its file bytes are missing", w.name);
    GpuMatrix m;
    m.type = w.type;
    m.n_rows = static_cast<int64_t>(w.n_rows);
    m.n_cols = static_cast<int64_t>(w.n_cols);
    auto buffer = allocate(bytes.size(), fmt::format("tensor '{}'", w.name));
    if (!buffer) return buffer.error();
    m.data = std::move(*buffer);
    if (Status s = copy_up(m.data.get(), bytes.data(), bytes.size(), fmt::format("uploading '{}'", w.name)); !s) {
      return s.error();
    }
    progress_.advance(bytes.size());
    return m;
  }

  Result<DeviceBuffer> vector(std::span<const float> values, std::string_view what) {
    auto buffer = allocate(values.size_bytes(), what);
    if (!buffer) return buffer.error();
    if (Status s = copy_up(buffer->get(), values.data(), values.size_bytes(), what); !s) return s.error();
    return buffer;
  }

  const Model& model_;
  GpuWeights& weights_;
  uint64_t budget_;
  UploadProgress progress_;
  UploadStream stream_;
  PinnedStaging staging_;
};

Result<std::shared_ptr<const GpuWeights>> GpuWeights::upload(const Model& model, OffloadSplit split, int device,
                                                             uint64_t memory_budget) {
  const ModelWeights& w = model.weights();
  const uint32_t end = std::min(split.end_layer, model.config().n_layers);
  const uint32_t first = std::min(split.first_layer, end);
  size_t total = split.output ? w.output.data.size() : 0;
  for (uint32_t il = first; il < end; ++il) {
    const LayerWeights& l = w.layers[il];
    for (const WeightMatrix* m :
         {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
      total += m->data.size();
    }
  }
  if (Status s = cuda_status(cuda::set_device(device), "selecting the GPU"); !s) return s.error();
  auto weights = std::make_shared<GpuWeights>(split, device);
  weights->layers_.resize(end - first);
  GpuWeightUpload upload(model, *weights, memory_budget, total);
  if (Status s = upload.start(); !s) return s.error();
  for (uint32_t il = first; il < end; ++il) {
    if (Status s = upload.layer(il, weights->layers_[il - first]); !s) return s.error();
  }
  if (split.output) {
    if (Status s = upload.output(); !s) return s.error();
  }
  if (Status s = upload.finish(); !s) return s.error();
  return std::shared_ptr<const GpuWeights>(std::move(weights));
}

}  // namespace infertune
