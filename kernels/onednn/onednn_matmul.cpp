// The oneDNN backend (see onednn_matmul.h). Built only when CMake finds dnnl.
//
// Each calling thread keeps its own stream, primitives (one per (types, M, N, K): oneDNN's fast matmul
// implementations are specialised to the shape), scratchpad and conversion buffers, so threads never share
// mutable oneDNN state. Primitives are created on the calling thread while oneDNN sees one thread, so they
// are built for — and run on — exactly that thread.
#include "kernels/onednn/onednn_matmul.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/matmul/matmul_registry.h"
#include "kernels/onednn/onednn_convert.h"

namespace infertune {
namespace {

using dnnl::memory;
using DataType = memory::data_type;

// oneDNN's OpenMP runtime sizes its parallel regions by the calling thread's OpenMP setting: one thread
// per caller keeps oneDNN inside our pool's threads. The setter is looked up in the process (the OpenMP
// library oneDNN itself was linked with), so no OpenMP flags or headers of this compiler are involved. The
// sequential and threadpool runtimes start no threads of their own (no threadpool is ever passed); any
// other runtime (TBB) would, so oneDNN is not used with it.
using SetThreadsFn = void (*)(int);

SetThreadsFn openmp_set_num_threads() {
  static const auto fn = reinterpret_cast<SetThreadsFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  return fn;
}

bool threads_controllable() {
  const unsigned runtime = dnnl_version()->cpu_runtime;
  if (runtime == DNNL_RUNTIME_OMP) return openmp_set_num_threads() != nullptr;
  return runtime == DNNL_RUNTIME_SEQ || runtime == DNNL_RUNTIME_THREADPOOL;
}

void keep_onednn_on_this_thread() {
  thread_local const bool limited = [] {
    if (dnnl_version()->cpu_runtime == DNNL_RUNTIME_OMP && openmp_set_num_threads()) openmp_set_num_threads()(1);
    return true;
  }();
  (void)limited;
}

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// At most this many bytes of F16 weights widened to f32 per oneDNN call (a block of rows that stays in L2).
constexpr size_t kWidenedBlockBytes = 256 * 1024;
// A thread keeps at most this many primitives (distinct batch sizes); past it the cache starts over.
constexpr size_t kMaxPrimitivesPerThread = 64;

struct PrimitiveKey {
  DataType src, weights;
  memory::dim m, n, k;
  auto operator<=>(const PrimitiveKey&) const = default;
};

struct Prepared {
  dnnl::matmul primitive;
  memory::desc src, weights, dst, scratchpad;
  std::string implementation;
};

// The oneDNN 2.x and 3.x spellings of a matmul primitive descriptor differ; this is the one place that knows.
dnnl::matmul::primitive_desc matmul_descriptor(const memory::desc& src, const memory::desc& weights,
                                               const memory::desc& dst, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(cpu_engine(), src, weights, dst, attr);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), attr, cpu_engine());
#endif
}

// dst[M][N] (dense, f32) = src[M][K] * W^T, W stored as N rows of K values (a K x N matrix with strides
// {1, K}: oneDNN reads the GGUF rows in place).
Prepared prepare(const PrimitiveKey& key) {
  Prepared p;
  p.src = memory::desc({key.m, key.k}, key.src, memory::dims{key.k, 1});
  p.weights = memory::desc({key.k, key.n}, key.weights, memory::dims{1, key.k});
  p.dst = memory::desc({key.m, key.n}, DataType::f32, memory::dims{key.n, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto pd = matmul_descriptor(p.src, p.weights, p.dst, attr);
  p.primitive = dnnl::matmul(pd);
  p.scratchpad = pd.scratchpad_desc();
  p.implementation = pd.impl_info_str();
  return p;
}

struct ThreadState {
  dnnl::stream stream{cpu_engine()};
  std::map<PrimitiveKey, Prepared> primitives;
  std::vector<std::byte> scratchpad;
  std::vector<uint16_t> bf16_x;  // [M][K] activations rounded to bf16
  std::vector<float> f32_x;      // [M][K] activations rounded to f16, as f32
  std::vector<float> f32_w;      // [block rows][K] F16 weights widened
  std::vector<float> dst;        // [M][N] dense results before they go to their output rows
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

Prepared& prepared(ThreadState& s, const PrimitiveKey& key) {
  auto it = s.primitives.find(key);
  if (it != s.primitives.end()) return it->second;
  if (s.primitives.size() >= kMaxPrimitivesPerThread) s.primitives.clear();
  return s.primitives.emplace(key, prepare(key)).first->second;
}

template <class T>
T* sized(std::vector<T>& buffer, size_t n) {
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// One oneDNN call: dst[M][N] = src * W^T for W = N rows at `weights`.
void run_gemm(ThreadState& s, const PrimitiveKey& key, const void* src, const void* weights, float* dst) {
  Prepared& p = prepared(s, key);
  dnnl::engine& engine = cpu_engine();
  // oneDNN takes non-const handles but does not write its inputs.
  memory src_mem(p.src, engine, const_cast<void*>(src));
  memory weights_mem(p.weights, engine, const_cast<void*>(weights));
  memory dst_mem(p.dst, engine, dst);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, weights_mem}, {DNNL_ARG_DST, dst_mem}};
  if (const size_t bytes = p.scratchpad.get_size(); bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratchpad, engine, sized(s.scratchpad, bytes)));
  }
  p.primitive.execute(s.stream, args);
  s.stream.wait();
}

// dense[M][n] -> y rows: y[t][first .. first + n).
void scatter(const float* dense, size_t n, const MatmulProblem& p, size_t first) {
  for (size_t t = 0; t < p.n_tokens; ++t) std::memcpy(p.y + t * p.n_rows + first, dense + t * n, n * sizeof(float));
}

void rows_f32_or_bf16(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  ThreadState& s = thread_state();
  const size_t n = row_end - row_begin;
  const auto m = static_cast<memory::dim>(p.n_tokens);
  const auto k = static_cast<memory::dim>(p.n_cols);
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const std::byte* weights = p.weights.data() + row_begin * row_bytes;
  const void* src = p.x;
  DataType type = DataType::f32;
  if (p.type == GgmlType::BF16) {
    type = DataType::bf16;
    uint16_t* rounded = sized(s.bf16_x, p.n_tokens * p.n_cols);
    round_to_bf16_bits(p.x, p.n_tokens * p.n_cols, rounded);
    src = rounded;
  }
  float* dense = sized(s.dst, p.n_tokens * n);
  run_gemm(s, {type, type, m, static_cast<memory::dim>(n), k}, src, weights, dense);
  scatter(dense, n, p, row_begin);
}

void rows_f16(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  ThreadState& s = thread_state();
  const size_t k = p.n_cols;
  float* src = sized(s.f32_x, p.n_tokens * k);
  round_to_f16_values(p.x, p.n_tokens * k, src);
  const size_t block = std::max<size_t>(16, kWidenedBlockBytes / (k * sizeof(float)) / 16 * 16);
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const auto* bytes = reinterpret_cast<const uint8_t*>(p.weights.data());
  for (size_t first = row_begin; first < row_end; first += block) {
    const size_t n = std::min(block, row_end - first);
    float* widened = sized(s.f32_w, n * k);
    for (size_t r = 0; r < n; ++r) widen_f16(bytes + (first + r) * row_bytes, k, widened + r * k);
    float* dense = sized(s.dst, p.n_tokens * n);
    run_gemm(s,
             {DataType::f32, DataType::f32, static_cast<memory::dim>(p.n_tokens), static_cast<memory::dim>(n),
              static_cast<memory::dim>(k)},
             src, widened, dense);
    scatter(dense, n, p, first);
  }
}

std::mutex failure_mutex;
std::optional<std::string> failure;  // guarded by failure_mutex

void record_failure(std::string message) {
  std::lock_guard lock(failure_mutex);
  if (!failure) failure = std::move(message);
}

// A small primitive of the given types, created on this thread: whether oneDNN has a real implementation.
bool primitive_works(DataType type) {
  try {
    keep_onednn_on_this_thread();
    const Prepared p = prepare({type, type, 4, 16, 64});
    return p.implementation.find("ref") == std::string::npos;
  } catch (const dnnl::error&) {
    return false;
  }
}

struct Support {
  bool f32 = false, f16 = false, bf16 = false;
};

const Support& support() {
  static const Support s = [] {
    Support r;
    if (!threads_controllable()) return r;
    const bool conversions = onednn_conversions_available();
    r.f32 = primitive_works(DataType::f32);
    r.f16 = r.f32 && conversions;
    r.bf16 = conversions && primitive_works(DataType::bf16);
    return r;
  }();
  return s;
}

std::string runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_SEQ:
      return "sequential";
    case DNNL_RUNTIME_OMP:
      return "omp";
    case DNNL_RUNTIME_TBB:
      return "tbb";
    case DNNL_RUNTIME_THREADPOOL:
      return "threadpool";
    default:
      return fmt::format("{:#x}", runtime);
  }
}

std::string isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41:
      return "sse41";
    case dnnl_cpu_isa_avx:
      return "avx";
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
      return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return fmt::format("{:#x}", static_cast<unsigned>(isa));
  }
}

}  // namespace

bool onednn_built() { return true; }

std::string onednn_summary() {
  const dnnl_version_t* v = dnnl_version();
  std::string types;
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    if (onednn_supports(t)) types += fmt::format("{}{}", types.empty() ? "" : " ", ggml_type_name(t));
  }
  return fmt::format("{}.{}.{} (cpu runtime {}, isa {}; used for {})", v->major, v->minor, v->patch,
                     runtime_name(v->cpu_runtime), isa_name(dnnl_get_effective_cpu_isa()),
                     types.empty() ? "nothing on this CPU" : types);
}

bool onednn_supports(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
      return support().f32;
    case GgmlType::F16:
      return support().f16;
    case GgmlType::BF16:
      return support().bf16;
    default:
      return false;
  }
}

void onednn_matmul(const MatmulProblem& problem, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || problem.n_tokens == 0) return;
  try {
    keep_onednn_on_this_thread();
    if (problem.type == GgmlType::F16) {
      rows_f16(problem, row_begin, row_end);
    } else {
      rows_f32_or_bf16(problem, row_begin, row_end);
    }
    return;
  } catch (const dnnl::error& e) {
    record_failure(fmt::format("onednn: {} matmul of {} x {} x {} failed: {}", ggml_type_name(problem.type),
                               problem.n_tokens, problem.n_rows, problem.n_cols, e.what()));
  } catch (const std::exception& e) {
    record_failure(fmt::format("onednn: {} matmul failed: {}", ggml_type_name(problem.type), e.what()));
  }
  if (auto own = matmul_registry().find(problem.type)) own->fn(problem, row_begin, row_end);
}

std::optional<std::string> take_onednn_failure() {
  std::lock_guard lock(failure_mutex);
  return std::exchange(failure, std::nullopt);
}

}  // namespace infertune
