#include "engine/model/model.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>
#include <thread>

#include "engine/model/arch_tensors.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

// Reads a whole file into memory (--no-mmap).
Result<std::vector<std::byte>> read_whole_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("{}: not a regular file", path);
  }
  std::vector<std::byte> bytes;
  try {
    bytes.resize(static_cast<size_t>(st.st_size));
  } catch (const std::bad_alloc&) {
    ::close(fd);
    return fail("{}: cannot allocate {} bytes to read the file (try without --no-mmap)", path, st.st_size);
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "unexpected end of file";
      ::close(fd);
      return fail("{}: read failed at byte {}: {}", path, done, why);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

Result<WeightMatrix> bind_matrix(const GgufFile& file, const TensorSpec& spec) {
  const GgufTensorInfo* info = file.find_tensor(spec.name);
  if (!info) return fail("missing tensor '{}'", spec.name);  // read_model_config has checked; defensive
  WeightMatrix m{info->name, info->type, info->dims[0], info->dims.size() > 1 ? info->dims[1] : 1,
                 file.tensor_data(*info)};
  if (m.data.size() != info->n_bytes) return fail("tensor '{}': data lies outside the file", spec.name);
  return m;
}

// A 1-D tensor (norm gain, bias, rope factors) decoded to floats, whatever its stored type.
Result<std::vector<float>> bind_vector(const GgufFile& file, const TensorSpec& spec) {
  auto matrix = bind_matrix(file, spec);
  if (!matrix) return matrix.error();
  std::vector<float> values(matrix->n_cols * matrix->n_rows);
  if (Status s = dequantize_row(matrix->type, matrix->data, values); !s) {
    return fail("tensor '{}': {}", spec.name, s.error().message);
  }
  return values;
}

// The weight a matmul reads must have a kernel; say which tensor lacks one at load, not mid-decode.
Status check_matmul_type(const WeightMatrix& m) {
  auto kernel = matmul_registry().find(m.type);
  if (!kernel) return fail("tensor '{}' ({}): {}", m.name, ggml_type_name(m.type), kernel.error().message);
  return {};
}

WeightMatrix* matrix_slot(ModelWeights& w, const TensorSpec& spec) {
  if (spec.layer < 0) {
    switch (spec.role) {
      case TensorRole::TokenEmbedding:
        return &w.token_embd;
      case TensorRole::Output:
        return &w.output;
      default:
        return nullptr;
    }
  }
  LayerWeights& l = w.layers[static_cast<size_t>(spec.layer)];
  switch (spec.role) {
    case TensorRole::AttnQ:
      return &l.attn_q;
    case TensorRole::AttnK:
      return &l.attn_k;
    case TensorRole::AttnV:
      return &l.attn_v;
    case TensorRole::AttnOutput:
      return &l.attn_output;
    case TensorRole::FfnGate:
      return &l.ffn_gate;
    case TensorRole::FfnUp:
      return &l.ffn_up;
    case TensorRole::FfnDown:
      return &l.ffn_down;
    case TensorRole::FfnGateInp:
      return &l.ffn_gate_inp;
    case TensorRole::FfnGateShexp:
      return &l.ffn_gate_shexp;
    case TensorRole::FfnUpShexp:
      return &l.ffn_up_shexp;
    case TensorRole::FfnDownShexp:
      return &l.ffn_down_shexp;
    default:
      return nullptr;
  }
}

std::vector<WeightMatrix>* expert_slot(ModelWeights& w, const TensorSpec& spec) {
  if (spec.layer < 0) return nullptr;
  LayerWeights& l = w.layers[static_cast<size_t>(spec.layer)];
  switch (spec.role) {
    case TensorRole::FfnGateExps:
      return &l.ffn_gate_exps;
    case TensorRole::FfnUpExps:
      return &l.ffn_up_exps;
    case TensorRole::FfnDownExps:
      return &l.ffn_down_exps;
    default:
      return nullptr;
  }
}

// A stack [n_cols, n_rows, n_expert] cut into its experts' matrices: each is n_rows whole rows, one after another.
Result<std::vector<WeightMatrix>> bind_experts(const GgufFile& file, const TensorSpec& spec) {
  auto stack = bind_matrix(file, spec);
  if (!stack) return stack.error();
  if (Status s = check_matmul_type(*stack); !s) return s.error();  // one type for the whole stack
  const uint64_t n_expert = spec.dims.size() > 2 ? spec.dims[2] : 1;
  const size_t expert_bytes = stack->data.size() / n_expert;
  std::vector<WeightMatrix> experts;
  experts.reserve(n_expert);
  for (uint64_t e = 0; e < n_expert; ++e) {
    WeightMatrix m = *stack;
    m.name = fmt::format("{} (expert {})", stack->name, e);
    m.data = stack->data.subspan(e * expert_bytes, expert_bytes);
    experts.push_back(std::move(m));
  }
  return experts;
}

// A fused matrix's parts, in its row order, each with its row count: attn_qkv is q, k, v; phi3's ffn_up is gate, up.
struct FusedPart {
  WeightMatrix* slot;
  uint64_t n_rows;
};

std::vector<FusedPart> fused_parts(ModelWeights& w, const ModelConfig& c, const TensorSpec& spec) {
  if (spec.layer < 0) return {};
  LayerWeights& l = w.layers[static_cast<size_t>(spec.layer)];
  switch (spec.role) {
    case TensorRole::AttnQkv:
      return {{&l.attn_q, c.q_dim()}, {&l.attn_k, c.k_dim()}, {&l.attn_v, c.v_dim()}};
    case TensorRole::FfnGateUp:
      return {{&l.ffn_gate, c.n_ff}, {&l.ffn_up, c.n_ff}};
    default:
      return {};
  }
}

// A fused matrix cut into its parts: each is a run of whole rows, under the stored tensor's name (an importance
// matrix and error messages refer to what the file has).
Status bind_fused(const GgufFile& file, const TensorSpec& spec, std::span<const FusedPart> parts) {
  auto whole = bind_matrix(file, spec);
  if (!whole) return whole.error();
  if (Status s = check_matmul_type(*whole); !s) return s;
  const size_t row_bytes = whole->data.size() / whole->n_rows;
  uint64_t first_row = 0;
  for (const FusedPart& part : parts) {
    WeightMatrix m = *whole;
    m.n_rows = part.n_rows;
    m.data = whole->data.subspan(first_row * row_bytes, part.n_rows * row_bytes);
    *part.slot = std::move(m);
    first_row += part.n_rows;
  }
  return {};
}

std::vector<float>* vector_slot(ModelWeights& w, const TensorSpec& spec) {
  if (spec.layer < 0) {
    switch (spec.role) {
      case TensorRole::OutputNorm:
        return &w.output_norm;
      case TensorRole::RopeFreqs:
        return &w.rope_freqs;
      case TensorRole::RopeFactorsLong:
        return &w.rope_factors_long;
      case TensorRole::RopeFactorsShort:
        return &w.rope_factors_short;
      default:
        return nullptr;
    }
  }
  LayerWeights& l = w.layers[static_cast<size_t>(spec.layer)];
  switch (spec.role) {
    case TensorRole::AttnNorm:
      return &l.attn_norm;
    case TensorRole::FfnNorm:
      return &l.ffn_norm;
    case TensorRole::AttnQNorm:
      return &l.attn_q_norm;
    case TensorRole::AttnKNorm:
      return &l.attn_k_norm;
    case TensorRole::AttnPostNorm:
      return &l.attn_post_norm;
    case TensorRole::FfnPostNorm:
      return &l.ffn_post_norm;
    case TensorRole::AttnQBias:
      return &l.attn_q_bias;
    case TensorRole::AttnKBias:
      return &l.attn_k_bias;
    case TensorRole::AttnVBias:
      return &l.attn_v_bias;
    case TensorRole::FfnGateInpShexp:
      return &l.ffn_gate_inp_shexp;
    case TensorRole::AttnOutputBias:
      return &l.attn_output_bias;
    case TensorRole::AttnSinks:
      return &l.attn_sinks;
    case TensorRole::FfnGateInpBias:
      return &l.ffn_gate_inp_bias;
    case TensorRole::FfnGateExpsBias:
      return &l.ffn_gate_exps_bias;
    case TensorRole::FfnUpExpsBias:
      return &l.ffn_up_exps_bias;
    case TensorRole::FfnDownExpsBias:
      return &l.ffn_down_exps_bias;
    default:
      return nullptr;
  }
}

}  // namespace

Result<Model> Model::load(const std::string& path, const ModelLoadOptions& options) {
  Model model;
  if (options.use_mmap) {
    auto file = GgufFile::open(path);
    if (!file) return file.error();
    model.file_ = std::move(*file);
    model.mapped_ = true;
  } else {
    auto bytes = read_whole_file(path);
    if (!bytes) return bytes.error();
    model.owned_bytes_ = std::move(*bytes);
    auto file = GgufFile::parse(model.owned_bytes_, path);
    if (!file) return file.error();
    model.file_ = std::move(*file);
  }
  return finish(std::move(model), options);
}

Result<Model> Model::from_bytes(std::vector<std::byte> bytes, std::string source_name,
                                const ModelLoadOptions& options) {
  Model model;
  model.owned_bytes_ = std::move(bytes);
  auto file = GgufFile::parse(model.owned_bytes_, std::move(source_name));
  if (!file) return file.error();
  model.file_ = std::move(*file);
  return finish(std::move(model), {.use_mmap = false, .mlock = false, .repack = options.repack});
}

Result<Model> Model::finish(Model model, const ModelLoadOptions& options) {
  static std::atomic<uint64_t> loads{0};
  model.load_id_ = ++loads;
  auto config = read_model_config(model.file_);
  if (!config) return config.error();
  model.config_ = std::move(*config);
  if (Status s = model.bind_weights(); !s) return fail("{}: {}", model.file_.source_name(), s.error().message);
  for (const GgufTensorInfo& t : model.file_.tensors()) model.tensor_bytes_ += t.n_bytes;
  if (options.repack) {
    if (Status s = model.interleave_weights(); !s) return fail("{}: {}", model.file_.source_name(), s.error().message);
  }
  if (options.mlock) model.lock_memory();
  return model;
}

Status Model::bind_weights() {
  weights_ = ModelWeights{};
  weights_.layers.resize(config_.n_layers);
  for (const TensorSpec& spec : expected_tensors(config_)) {
    if (WeightMatrix* slot = matrix_slot(weights_, spec)) {
      auto m = bind_matrix(file_, spec);
      if (!m) return m.error();
      *slot = std::move(*m);
      // token_embd is read row by row through the codecs unless it is also the output projection.
      if (spec.role != TensorRole::TokenEmbedding) {
        if (Status s = check_matmul_type(*slot); !s) return s;
      } else if (!has_reference_codec(slot->type)) {
        return fail("tensor '{}': type {} cannot be decoded", spec.name, ggml_type_name(slot->type));
      }
    } else if (const auto parts = fused_parts(weights_, config_, spec); !parts.empty()) {
      if (Status s = bind_fused(file_, spec, parts); !s) return s;
    } else if (std::vector<WeightMatrix>* experts = expert_slot(weights_, spec)) {
      auto bound = bind_experts(file_, spec);
      if (!bound) return bound.error();
      *experts = std::move(*bound);
    } else if (std::vector<float>* values = vector_slot(weights_, spec)) {
      auto v = bind_vector(file_, spec);
      if (!v) return v.error();
      *values = std::move(*v);
    }
  }
  if (config_.tied_output) {
    weights_.output = weights_.token_embd;
    if (Status s = check_matmul_type(weights_.output); !s) return s;
  }
  return {};
}

namespace {

// The matrices products read: every layer's and the output projection. A tied output projection is also
// token_embd, which the embedding lookup reads row by row; that lookup reads the interleaved layout too
// (embedding_row), so a tied output is repacked like the others and token_embd follows it.
std::vector<WeightMatrix*> product_matrices(ModelWeights& w) {
  std::vector<WeightMatrix*> all;
  for (LayerWeights& l : w.layers) {
    for (WeightMatrix* m : l.single_matrices()) all.push_back(m);
    for (auto* experts : l.expert_stacks()) {
      for (WeightMatrix& m : *experts) all.push_back(&m);
    }
  }
  all.push_back(&w.output);
  return all;
}

// Of those, the ones whose kernel reads the interleaved layout, with the shape it needs.
std::vector<WeightMatrix*> matrices_to_interleave(ModelWeights& w) {
  std::vector<WeightMatrix*> chosen;
  for (WeightMatrix* m : product_matrices(w)) {
    if (!has_interleaved_layout(m->type) || m->n_rows % kInterleavedRows != 0 || m->data.empty()) continue;
    const auto kernel = matmul_registry().find(m->type);
    if (kernel && kernel->reads_interleaved) chosen.push_back(m);
  }
  return chosen;
}

// Lets the kernel drop the pages of a mapped range the process no longer reads (they stay in the page cache;
// the resident size then counts the repacked copy once, not twice).
void release_mapped_pages(std::span<const std::byte> data) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data.data()) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data.data()) + data.size()) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

constexpr std::align_val_t kInterleavedAlignment{64};
constexpr size_t kGroupsPerJob = 256;

}  // namespace

void Model::AlignedFree::operator()(std::byte* p) const { ::operator delete[](p, kInterleavedAlignment); }

Status Model::interleave_weights() {
  const std::vector<WeightMatrix*> chosen = matrices_to_interleave(weights_);
  if (chosen.empty()) return {};
  // Jobs of kGroupsPerJob row groups, over every chosen matrix, taken by the threads as they finish.
  struct Job {
    size_t matrix, g_begin, g_end;
  };
  std::vector<Job> jobs;
  std::vector<std::span<std::byte>> out;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const WeightMatrix& m = *chosen[i];
    std::byte* bytes = nullptr;
    try {
      bytes = static_cast<std::byte*>(::operator new[](m.data.size(), kInterleavedAlignment));
    } catch (const std::bad_alloc&) {
      return fail("cannot allocate {:.1f} MiB to repack tensor '{}' (try --no-repack)", m.data.size() / 1048576.0,
                  m.name);
    }
    interleaved_.emplace_back(bytes);
    out.emplace_back(bytes, m.data.size());
    const size_t groups = m.n_rows / kInterleavedRows;
    for (size_t g = 0; g < groups; g += kGroupsPerJob) jobs.push_back({i, g, std::min(groups, g + kGroupsPerJob)});
  }
  std::atomic<size_t> next{0};
  std::vector<Status> results(std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
  const auto work = [&](Status& result) {
    for (size_t j = next++; j < jobs.size() && result; j = next++) {
      const WeightMatrix& m = *chosen[jobs[j].matrix];
      const Status s =
          interleave_rows(m.type, m.data, m.n_rows, m.n_cols, out[jobs[j].matrix], jobs[j].g_begin, jobs[j].g_end);
      if (!s) result = fail("tensor '{}': {}", m.name, s.error().message);
    }
  };
  std::vector<std::thread> threads;
  try {
    for (size_t t = 1; t < results.size(); ++t) threads.emplace_back(work, std::ref(results[t]));
  } catch (const std::system_error&) {  // no more threads: the ones started (and this one) do all the jobs
  }
  work(results[0]);
  for (std::thread& t : threads) t.join();
  for (const Status& r : results) {
    if (!r) return r;
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (mapped_) release_mapped_pages(chosen[i]->data);
    chosen[i]->data = out[i];
    chosen[i]->layout = WeightLayout::interleaved8;
    interleaved_bytes_ += out[i].size();
  }
  if (config_.tied_output) {
    weights_.token_embd.data = weights_.output.data;
    weights_.token_embd.layout = weights_.output.layout;
  }
  return {};
}

void Model::lock_memory() {
  const std::byte* begin = nullptr;
  const std::byte* end = nullptr;
  for (const GgufTensorInfo& t : file_.tensors()) {
    const auto data = file_.tensor_data(t);
    if (data.empty()) continue;
    begin = begin ? std::min(begin, data.data()) : data.data();
    end = end ? std::max(end, data.data() + data.size()) : data.data() + data.size();
  }
  if (!begin) return;
  // mlock works on whole pages; round the start down to one.
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(begin) & ~(page - 1);
  const size_t length = static_cast<size_t>(reinterpret_cast<uintptr_t>(end) - start);
  size_t total = length;
  bool locked = ::mlock(reinterpret_cast<const void*>(start), length) == 0;
  for (const WeightMatrix* m : product_matrices(weights_)) {  // and those repacked at load
    if (m->layout != WeightLayout::interleaved8) continue;
    total += m->data.size();
    locked = locked && ::mlock(m->data.data(), m->data.size()) == 0;
  }
  if (locked) {
    locked_ = true;
    return;
  }
  warnings_.push_back(fmt::format("mlock of {:.1f} MiB failed: {} (raise `ulimit -l`; continuing unlocked)",
                                  total / 1048576.0, std::strerror(errno)));
}

}  // namespace infertune
