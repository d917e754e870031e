// Split-K attention over the thread pool (engine/arch/attention_split.h): one layer's problems — several
// KV heads with grouped query heads, a single decoding token or causal blocks of rows, odd context
// lengths — run with the keys split into forced numbers of pieces and as plan_key_splits chooses, on 1..4
// threads, with the standard and the flash kernel of the best variant and of the reference, every KV type.
// Split and unsplit must agree within 1e-5 of max|v| (the same softmax; only the order of float sums and
// the merge's few roundings differ; measured ~1e-7), and both must agree with an independent double
// attention within 2e-5 of max|v| (the kernels' own tolerance). The plan is tested for when it splits.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "engine/arch/attention_split.h"
#include "engine/context/context.h"
#include "engine/model/model.h"
#include "engine/threading/parallel_for.h"
#include "engine/threading/thread_pool.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_reference.h"
#include "kernels/quant.h"
#include "test_support.h"

namespace infertune {
namespace {

constexpr GgmlType kKvTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0};

// One layer of a cache for n_kv heads, each head's rows in `type`, plus the queries of n_rows tokens.
struct Layer {
  uint32_t n_kv, n_gqa, dim, n_keys, n_rows;
  GgmlType type;
  std::vector<std::vector<std::byte>> k, v;  // [n_kv][n_keys rows]
  std::vector<std::vector<float>> k_f, v_f;  // decoded
  std::vector<float> q;                      // [n_rows][n_kv * n_gqa * dim]
  std::vector<uint32_t> rows, n_keys_of, cells;
  float max_abs_v = 0;

  size_t q_dim() const { return size_t(n_kv) * n_gqa * dim; }
  size_t stride() const { return *ggml_row_bytes(type, dim); }
};

Layer make_layer(uint32_t n_kv, uint32_t n_gqa, uint32_t dim, uint32_t n_keys, uint32_t n_rows, GgmlType type) {
  Layer l{n_kv, n_gqa, dim, n_keys, n_rows, type, {}, {}, {}, {}, {}, {}, {}, {}};
  std::mt19937 rng(n_keys * 31 + n_kv);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> row(dim);
  auto fill = [&](std::vector<std::byte>& bytes, std::vector<float>& decoded, float magnitude) {
    bytes.resize(n_keys * l.stride());
    decoded.resize(size_t(n_keys) * dim);
    for (uint32_t c = 0; c < n_keys; ++c) {
      for (float& x : row) x = magnitude * dist(rng);
      std::span<std::byte> dst(bytes.data() + c * l.stride(), l.stride());
      EXPECT_TRUE(quantize_row(type, row, dst).ok());
      EXPECT_TRUE(dequantize_row(type, dst, std::span<float>(decoded).subspan(size_t(c) * dim, dim)).ok());
    }
  };
  l.k.resize(n_kv);
  l.v.resize(n_kv);
  l.k_f.resize(n_kv);
  l.v_f.resize(n_kv);
  for (uint32_t h = 0; h < n_kv; ++h) {
    fill(l.k[h], l.k_f[h], 1.0f);
    fill(l.v[h], l.v_f[h], 2.0f);
    for (float x : l.v_f[h]) l.max_abs_v = std::max(l.max_abs_v, std::fabs(x));
  }
  l.q.resize(n_rows * l.q_dim());
  for (float& x : l.q) x = 2.0f * dist(rng);
  l.rows.resize(n_rows);
  std::iota(l.rows.begin(), l.rows.end(), 0u);
  for (uint32_t r = 0; r < n_rows; ++r) l.n_keys_of.push_back(n_keys - (n_rows - 1 - r));  // causal
  l.cells.resize(n_keys);
  std::iota(l.cells.begin(), l.cells.end(), 0u);
  std::shuffle(l.cells.begin(), l.cells.end(), std::mt19937(7));
  return l;
}

// One problem per KV head, as the forward pass builds them (rows in blocks of up to 16).
std::vector<AttentionProblem> problems_of(const Layer& l, std::vector<float>& out) {
  out.assign(l.n_rows * l.q_dim(), -7.0f);
  std::vector<AttentionProblem> problems;
  for (uint32_t first = 0; first < l.n_rows; first += 16) {
    const uint32_t n = std::min(16u, l.n_rows - first);
    for (uint32_t h = 0; h < l.n_kv; ++h) {
      AttentionProblem p;
      p.q = l.q.data() + size_t(h) * l.n_gqa * l.dim;
      p.q_stride = l.q_dim();
      p.rows = std::span<const uint32_t>(l.rows).subspan(first, n);
      p.n_heads = l.n_gqa;
      p.n_keys = std::span<const uint32_t>(l.n_keys_of).subspan(first, n);
      p.cells = l.cells;
      p.k = {l.type, l.k[h].data(), l.stride(), l.dim};
      p.v = {l.type, l.v[h].data(), l.stride(), l.dim};
      p.scale = 1.0f / std::sqrt(float(l.dim));
      p.out = out.data() + size_t(h) * l.n_gqa * l.dim;
      p.out_stride = l.q_dim();
      EXPECT_TRUE(check_attention_problem(p).ok());
      problems.push_back(p);
    }
  }
  return problems;
}

// out[row][head][dim] in double, straight from the definition.
std::vector<double> exact_attention(const Layer& l) {
  std::vector<double> out(l.n_rows * l.q_dim());
  std::vector<double> s(l.n_keys);
  for (uint32_t r = 0; r < l.n_rows; ++r) {
    for (uint32_t hq = 0; hq < l.n_kv * l.n_gqa; ++hq) {
      const uint32_t h = hq / l.n_gqa, n = l.n_keys_of[r];
      const float* q = l.q.data() + r * l.q_dim() + size_t(hq) * l.dim;
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      for (uint32_t j = 0; j < n; ++j) {
        const float* key = l.k_f[h].data() + size_t(l.cells[j]) * l.dim;
        double dot = 0;
        for (uint32_t d = 0; d < l.dim; ++d) dot += double(q[d]) * key[d];
        max = std::max(max, s[j] = dot / std::sqrt(double(l.dim)));
      }
      double* o = out.data() + r * l.q_dim() + size_t(hq) * l.dim;
      for (uint32_t j = 0; j < n; ++j) {
        const double w = std::exp(s[j] - max);
        sum += w;
        const float* value = l.v_f[h].data() + size_t(l.cells[j]) * l.dim;
        for (uint32_t d = 0; d < l.dim; ++d) o[d] += w * value[d];
      }
      for (uint32_t d = 0; d < l.dim; ++d) o[d] /= sum;
    }
  }
  return out;
}

class SplitAttentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ThreadPoolConfig config;
    config.n_threads = 4;
    auto pool = ThreadPool::create(config);
    ASSERT_TRUE(pool.ok()) << pool.error().message;
    pool_ = std::move(*pool);
    scratch_.resize(4);
  }

  std::vector<float> run(const Layer& l, AttentionFn fn, unsigned threads, std::optional<uint32_t> splits) {
    std::vector<float> out;
    const std::vector<AttentionProblem> problems = problems_of(l, out);
    SplitAttentionBuffers buffers;
    Status s = run_split_attention(ParallelFor(*pool_, threads), fn, problems, scratch_, buffers, splits);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return out;
  }

  std::unique_ptr<ThreadPool> pool_;
  std::vector<AttentionScratch> scratch_;
};

TEST_F(SplitAttentionTest, SplitEqualsUnsplitAndTheDoubleReference) {
  auto best = attention_kernels();
  ASSERT_TRUE(best.ok()) << best.error().message;
  struct Shape {
    uint32_t n_kv, n_gqa, dim, n_keys, n_rows;
  };
  // One decoding token over 1 or 2 KV heads (GQA 4:1 and 1:1), odd lengths; causal blocks of 19 rows, and
  // of 40 rows whose pieces are too many to merge on the calling thread (the merge runs in parallel).
  const Shape shapes[] = {
      {1, 4, 64, 1001, 1}, {2, 1, 128, 777, 1}, {2, 4, 32, 3, 1}, {1, 2, 64, 613, 19}, {2, 4, 128, 151, 40}};
  double worst_split = 0, worst_exact = 0;
  for (const Shape& sh : shapes) {
    for (GgmlType type : kKvTypes) {
      const Layer l = make_layer(sh.n_kv, sh.n_gqa, sh.dim, sh.n_keys, sh.n_rows, type);
      const std::vector<double> want = exact_attention(l);
      for (auto [kind, fn] : {std::pair{"standard", best->standard}, std::pair{"flash", best->flash},
                              std::pair{"reference", &reference_attention}}) {
        const std::vector<float> unsplit = run(l, fn, 1, 1);
        for (unsigned threads = 1; threads <= 4; ++threads) {
          for (std::optional<uint32_t> splits :
               {std::optional<uint32_t>(1), std::optional<uint32_t>(2), std::optional<uint32_t>(3),
                std::optional<uint32_t>(5), std::optional<uint32_t>()}) {
            SCOPED_TRACE(fmt::format("{} {} kv{} gqa{} d{} keys{} rows{} threads {} splits {}", kind,
                                     ggml_type_name(type), sh.n_kv, sh.n_gqa, sh.dim, sh.n_keys, sh.n_rows, threads,
                                     splits ? std::to_string(*splits) : "auto"));
            const std::vector<float> got = run(l, fn, threads, splits);
            for (size_t i = 0; i < got.size(); ++i) {
              worst_split = std::max(worst_split, double(std::fabs(got[i] - unsplit[i]) / l.max_abs_v));
              worst_exact = std::max(worst_exact, std::fabs(got[i] - want[i]) / l.max_abs_v);
              ASSERT_NEAR(got[i], unsplit[i], 1e-5 * l.max_abs_v) << "value " << i;
              ASSERT_NEAR(got[i], want[i], 2e-5 * l.max_abs_v) << "value " << i;
            }
          }
        }
      }
    }
  }
  std::printf("[split attention] worst |d| / max|v|: split vs unsplit %.2e, vs double %.2e\n", worst_split,
              worst_exact);
}

TEST_F(SplitAttentionTest, UnsplitRunIsTheKernelsOwnResultBitForBit) {
  auto best = attention_kernels();
  ASSERT_TRUE(best.ok());
  const Layer l = make_layer(2, 4, 64, 300, 20, GgmlType::F16);  // too short to split
  std::vector<float> direct;
  const std::vector<AttentionProblem> problems = problems_of(l, direct);
  AttentionScratch scratch;
  for (const AttentionProblem& p : problems) best->flash(p, scratch);
  for (unsigned threads = 1; threads <= 4; ++threads) EXPECT_EQ(run(l, best->flash, threads, std::nullopt), direct);
}

// Problems with the given key counts (one decoding row, 4 query heads each).
std::vector<uint32_t> plan_for(const std::vector<uint32_t>& keys, unsigned threads) {
  static std::vector<uint32_t> cells(1 << 16);
  static std::vector<uint32_t> n_keys;
  n_keys = keys;
  static const uint32_t row = 0;
  std::vector<AttentionProblem> problems(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    problems[i].rows = std::span<const uint32_t>(&row, 1);
    problems[i].n_heads = 4;
    problems[i].n_keys = std::span<const uint32_t>(n_keys).subspan(i, 1);
    problems[i].cells = std::span<const uint32_t>(cells).first(keys[i]);
  }
  return plan_key_splits(problems, threads);
}

TEST(SplitAttentionPlan, SplitsOnlyWhenThreadsWouldWait) {
  using V = std::vector<uint32_t>;
  EXPECT_EQ(plan_for({16384}, 1), V{1}) << "one thread";
  EXPECT_EQ(plan_for({100}, 2), V{1}) << "too few keys";
  EXPECT_EQ(plan_for({4096, 4096}, 2), V({1, 1})) << "one problem per thread";
  EXPECT_EQ(plan_for(V(64, 4096), 4), V(64, 1)) << "many problems";
  // A single long problem: at least one piece per thread, none under kMinKeysPerPiece keys.
  for (unsigned threads : {2u, 3u, 4u}) {
    for (uint32_t keys : {4096u, 16384u}) {
      const V plan = plan_for({keys}, threads);
      ASSERT_EQ(plan.size(), 1u);
      EXPECT_GE(plan[0], threads) << keys << " keys, " << threads << " threads";
      EXPECT_GE(keys / plan[0], kMinKeysPerPiece);
    }
  }
  // One long context among short ones: the long one is split, the short ones are not.
  const V mixed = plan_for({16384, 300, 300, 300}, 2);
  EXPECT_GT(mixed[0], 1u);
  EXPECT_EQ(V(mixed.begin() + 1, mixed.end()), V(3, 1));
}

// In the forward pass: the fixture model (2 KV heads) decoding after 900 cached tokens on 4 threads, where
// plan_key_splits splits each head's keys (checked first), against one thread (never split): the logits
// of every step agree within 1e-5 of their spread, with either kernel and with an f16 cache.
TEST(SplitAttentionForward, LongContextStepsOnFourThreadsMatchOneThread) {
  const auto split = plan_for({900, 900}, 4);
  ASSERT_GT(split[0], 1u) << "the case no longer splits: lengthen the context";
  auto model = Model::load(test::fixture_path("models/fixture-llama-f32.gguf").string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  std::vector<int32_t> prompt(900);
  for (size_t i = 0; i < prompt.size(); ++i)
    prompt[i] = static_cast<int32_t>((i * 7919 + 13) % model->config().n_vocab);
  for (FlashAttention fa : {FlashAttention::On, FlashAttention::Off}) {
    for (GgmlType kv : {GgmlType::F32, GgmlType::F16}) {
      std::vector<std::vector<float>> steps[2];
      for (int which = 0; which < 2; ++which) {
        auto ctx = Context::create(
            *model, {.n_ctx = 1024, .n_threads = which == 0 ? 1u : 4u, .type_k = kv, .type_v = kv, .flash_attn = fa});
        ASSERT_TRUE(ctx.ok()) << ctx.error().message;
        ASSERT_TRUE(ctx->decode(prompt).ok());
        for (int32_t token : {5, 77, 301}) {
          auto logits = ctx->decode({token});
          ASSERT_TRUE(logits.ok()) << logits.error().message;
          steps[which].emplace_back(logits->begin(), logits->end());
        }
      }
      for (size_t t = 0; t < steps[0].size(); ++t) {
        const std::vector<float>& want = steps[0][t];
        double mean = 0, var = 0, worst = 0;
        for (float x : want) mean += x / want.size();
        for (float x : want) var += (x - mean) * (x - mean) / want.size();
        for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::fabs(steps[1][t][i] - want[i])));
        EXPECT_LE(worst, 1e-5 * std::sqrt(var))
            << "step " << t << " -fa " << flash_attention_name(fa) << " kv " << ggml_type_name(kv);
      }
    }
  }
}

}  // namespace
}  // namespace infertune
