// The choice between our kernel and oneDNN for float-weight batches (kernels/onednn/gemm_selection.h), with
// fake backends on a fake clock: each fake "costs" a set time and marks the outputs with its own value, so
// the tests see which backend ran, how often, and what was measured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/matmul/matmul_registry.h"
#include "kernels/onednn/gemm_selection.h"
#include "kernels/onednn/onednn_matmul.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

struct FakeBackends {
  double now = 0;  // the fake clock, seconds
  double own_cost = 0, onednn_cost = 0;
  int own_calls = 0, onednn_calls = 0;
  std::vector<size_t> rows_seen;  // n_rows of every problem run
};
FakeBackends fake;

void fake_own(const MatmulProblem& p, size_t begin, size_t end) {
  ++fake.own_calls;
  fake.rows_seen.push_back(p.n_rows);
  fake.now += fake.own_cost;
  for (size_t t = 0; t < p.n_tokens; ++t) std::fill(p.y + t * p.n_rows + begin, p.y + t * p.n_rows + end, 1.0f);
}

void fake_onednn(const MatmulProblem& p, size_t begin, size_t end) {
  ++fake.onednn_calls;
  fake.rows_seen.push_back(p.n_rows);
  fake.now += fake.onednn_cost;
  for (size_t t = 0; t < p.n_tokens; ++t) std::fill(p.y + t * p.n_rows + begin, p.y + t * p.n_rows + end, 2.0f);
}

class GemmSelectionTest : public ::testing::Test {
 protected:
  void SetUp() override { fake = {}; }

  // Measures problems of any size (the tests' are tiny).
  GemmSelector selector(GemmMode mode) {
    return GemmSelector(
        mode, [] { return fake.now; }, 0);
  }

  // A problem of n_tokens x n_rows x 32 columns (the fakes read nothing but its shape).
  MatmulProblem problem(size_t n_tokens, GgmlType type = GgmlType::F32, size_t n_rows = 8) {
    weights_.assign(n_rows * *ggml_row_bytes(type, 32), std::byte{0});
    x_.assign(n_tokens * 32, 0.0f);
    y_.assign(n_tokens * n_rows, 0.0f);
    return {type, weights_, n_rows, 32, x_.data(), n_tokens, y_.data()};
  }

  static Status run_whole(MatmulFn fn, const MatmulProblem& p) {
    fn(p, 0, p.n_rows);
    return {};
  }

  Result<GemmBackend> run(GemmSelector& s, const MatmulProblem& p, MatmulFn onednn = fake_onednn) {
    return s.run(p, 2, fake_own, onednn, run_whole);
  }

  std::vector<std::byte> weights_;
  std::vector<float> x_, y_;
};

TEST_F(GemmSelectionTest, AutoMeasuresOnceAndKeepsTheFasterBackend) {
  GemmSelector s = selector(GemmMode::automatic);
  fake.own_cost = 3.0;
  fake.onednn_cost = 1.0;
  const MatmulProblem p = problem(32);
  auto first = run(s, p);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, GemmBackend::onednn);
  // A warm-up oneDNN run, each backend twice, then the whole problem on the faster one.
  EXPECT_EQ(fake.onednn_calls, 4);
  EXPECT_EQ(fake.own_calls, 2);
  for (float v : y_) EXPECT_EQ(v, 2.0f);
  EXPECT_EQ(s.choice(gemm_shape(p, 2)), GemmBackend::onednn);
  ASSERT_EQ(s.measurements().size(), 1u);
  EXPECT_DOUBLE_EQ(s.measurements()[0].own_seconds, 3.0);
  EXPECT_DOUBLE_EQ(s.measurements()[0].onednn_seconds, 1.0);

  fake.own_calls = fake.onednn_calls = 0;
  auto second = run(s, p);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, GemmBackend::onednn);
  EXPECT_EQ(fake.onednn_calls, 1);
  EXPECT_EQ(fake.own_calls, 0);
  EXPECT_EQ(s.runs(GemmBackend::onednn), 2u);  // both whole problems (the samples do not count)
}

TEST_F(GemmSelectionTest, MeasuresOnASampleOfTheRows) {
  GemmSelector s = selector(GemmMode::automatic);
  fake.own_cost = 2.0;
  fake.onednn_cost = 1.0;
  ASSERT_TRUE(run(s, problem(4, GgmlType::F32, 4096)).ok());
  // Five sample runs of an eighth of the rows, then the whole problem.
  EXPECT_EQ(fake.rows_seen, (std::vector<size_t>{512, 512, 512, 512, 512, 4096}));
  fake.rows_seen.clear();
  ASSERT_TRUE(run(s, problem(4, GgmlType::F32, 1000)).ok());  // an eighth is under 256 rows: 256
  EXPECT_EQ(fake.rows_seen, (std::vector<size_t>{256, 256, 256, 256, 256, 1000}));
  fake.rows_seen.clear();
  ASSERT_TRUE(run(s, problem(4, GgmlType::F32, 200)).ok());  // fewer than 256 rows: all of them
  EXPECT_EQ(fake.rows_seen, (std::vector<size_t>(6, 200)));
}

TEST_F(GemmSelectionTest, AutoKeepsOurKernelWhenItIsFaster) {
  GemmSelector s = selector(GemmMode::automatic);
  fake.own_cost = 1.0;
  fake.onednn_cost = 1.5;
  const MatmulProblem p = problem(8);
  ASSERT_TRUE(run(s, p).ok());
  EXPECT_EQ(s.choice(gemm_shape(p, 2)), GemmBackend::own);
  fake.own_calls = fake.onednn_calls = 0;
  auto again = run(s, p);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, GemmBackend::own);
  EXPECT_EQ(fake.own_calls, 1);
  EXPECT_EQ(fake.onednn_calls, 0);
  EXPECT_EQ(y_.front(), 1.0f);
}

TEST_F(GemmSelectionTest, BatchSizesShareAMeasurementWithinAPowerOfTwo) {
  GemmSelector s = selector(GemmMode::automatic);
  fake.own_cost = 2.0;
  fake.onednn_cost = 1.0;
  ASSERT_TRUE(run(s, problem(5)).ok());
  ASSERT_TRUE(run(s, problem(8)).ok());  // 5 and 8 both round up to 8
  EXPECT_EQ(s.measurements().size(), 1u);
  ASSERT_TRUE(run(s, problem(9)).ok());  // 16
  EXPECT_EQ(s.measurements().size(), 2u);
  // Threads are part of the shape too.
  const MatmulProblem p = problem(8);
  ASSERT_TRUE(s.run(p, 1, fake_own, fake_onednn, run_whole).ok());
  EXPECT_EQ(s.measurements().size(), 3u);
  EXPECT_EQ(gemm_shape(problem(5), 2).token_bucket, 8u);
  EXPECT_EQ(gemm_shape(problem(2), 2).token_bucket, 2u);
}

TEST_F(GemmSelectionTest, ForcedModesNeverMeasure) {
  fake.own_cost = 1.0;
  fake.onednn_cost = 5.0;
  GemmSelector own = selector(GemmMode::own);
  GemmSelector onednn = selector(GemmMode::onednn);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(run(own, problem(16)).ok());
    ASSERT_TRUE(run(onednn, problem(16)).ok());
  }
  EXPECT_EQ(fake.own_calls, 2);
  EXPECT_EQ(fake.onednn_calls, 2);
  EXPECT_TRUE(own.measurements().empty());
  EXPECT_TRUE(onednn.measurements().empty());
}

TEST_F(GemmSelectionTest, MatvecsOtherTypesAndMissingOnednnRunOurKernel) {
  GemmSelector s = selector(GemmMode::onednn);
  ASSERT_TRUE(run(s, problem(1)).ok());                      // one token
  ASSERT_TRUE(run(s, problem(4, GgmlType::Q8_0)).ok());      // not a float type
  ASSERT_TRUE(run(s, problem(4), /*onednn=*/nullptr).ok());  // oneDNN cannot run it
  EXPECT_EQ(fake.onednn_calls, 0);
  EXPECT_EQ(fake.own_calls, 3);
  EXPECT_TRUE(float_gemm_applies(problem(2, GgmlType::BF16)));
  EXPECT_TRUE(float_gemm_applies(problem(2, GgmlType::F16)));
  EXPECT_FALSE(float_gemm_applies(problem(1, GgmlType::F32)));
  EXPECT_FALSE(float_gemm_applies(problem(2, GgmlType::Q4_0)));
}

TEST_F(GemmSelectionTest, AForcedKernelVariantMeansOurKernel) {
  const ScopedMatmulVariant scalar("scalar");
  GemmSelector s = selector(GemmMode::onednn);
  ASSERT_TRUE(run(s, problem(16)).ok());
  EXPECT_EQ(fake.onednn_calls, 0);
  EXPECT_EQ(fake.own_calls, 1);
}

TEST_F(GemmSelectionTest, AFailedOnednnShapeFallsBackToOurKernel) {
  GemmSelector s = selector(GemmMode::automatic);
  fake.own_cost = 2.0;
  fake.onednn_cost = 1.0;
  const MatmulProblem p = problem(4);
  ASSERT_TRUE(run(s, p).ok());
  s.prefer_own(gemm_shape(p, 2));
  fake.own_calls = fake.onednn_calls = 0;
  ASSERT_TRUE(run(s, p).ok());
  EXPECT_EQ(fake.own_calls, 1);
  EXPECT_EQ(fake.onednn_calls, 0);
}

TEST_F(GemmSelectionTest, SmallProblemsRunOurKernelUnmeasured) {
  GemmSelector s(GemmMode::automatic, [] { return fake.now; });  // the default threshold, 2^24
  fake.own_cost = 5.0;
  fake.onednn_cost = 1.0;
  ASSERT_TRUE(run(s, problem(64)).ok());  // 8 x 32 x 64 multiply-adds
  EXPECT_EQ(fake.own_calls, 1);
  EXPECT_EQ(fake.onednn_calls, 0);
  EXPECT_TRUE(s.measurements().empty());
  // Forced oneDNN still takes them (the fixture models' products are this small).
  GemmSelector forced(GemmMode::onednn, [] { return fake.now; });
  ASSERT_TRUE(run(forced, problem(64)).ok());
  EXPECT_EQ(fake.onednn_calls, 1);
}

TEST_F(GemmSelectionTest, RowErrorsArePassedOn) {
  GemmSelector s = selector(GemmMode::automatic);
  const MatmulProblem p = problem(4);
  auto r =
      s.run(p, 2, fake_own, fake_onednn, [](MatmulFn, const MatmulProblem&) -> Status { return fail("pool is busy"); });
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("pool is busy"));
  EXPECT_TRUE(s.measurements().empty());
}

TEST(GemmModeTest, ParsesTheThreeModesAndNamesABadValue) {
  EXPECT_EQ(*parse_gemm_mode(""), GemmMode::automatic);
  EXPECT_EQ(*parse_gemm_mode("auto"), GemmMode::automatic);
  EXPECT_EQ(*parse_gemm_mode("own"), GemmMode::own);
  EXPECT_EQ(*parse_gemm_mode("onednn"), GemmMode::onednn);
  auto bad = parse_gemm_mode("mkl");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("INFERTUNE_GEMM=mkl"));
  EXPECT_EQ(gemm_mode_name(GemmMode::automatic), "auto");
}

// The process-wide entry point with the real backends: forced onednn either uses oneDNN or says why not.
TEST(RunFloatGemmTest, OnednnModeUsesOnednnOrExplainsWhyNot) {
  const ScopedGemmMode mode(GemmMode::onednn);
  constexpr size_t kRows = 4, kCols = 8, kTokens = 3;
  std::vector<float> w(kRows * kCols, 0.5f), x(kTokens * kCols, 1.0f), y(kTokens * kRows, 0.0f);
  const MatmulProblem p{GgmlType::F32, std::as_bytes(std::span(w)), kRows, kCols, x.data(), kTokens, y.data()};
  auto own = matmul_registry().find(GgmlType::F32);
  ASSERT_TRUE(own.ok());
  const Status s = run_float_gemm(p, own->fn, 1, [](MatmulFn fn, const MatmulProblem& q) {
    fn(q, 0, q.n_rows);
    return Status{};
  });
  if (!onednn_supports(GgmlType::F32)) {
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error().message, HasSubstr("INFERTUNE_GEMM=onednn"));
    GTEST_SKIP() << "oneDNN is not usable here: " << onednn_summary();
  }
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(gemm_selector().runs(GemmBackend::onednn), 1u);
  for (float v : y) EXPECT_FLOAT_EQ(v, 4.0f);  // 8 x 0.5 x 1
}

// What bench reports per row: the shapes computed between two snapshots, and how many ran on oneDNN.
TEST_F(GemmSelectionTest, UsageCountsTheShapesEachBackendRanBetweenSnapshots) {
  GemmSelector s = selector(GemmMode::automatic);
  fake.own_cost = 1.0;
  fake.onednn_cost = 3.0;
  ASSERT_TRUE(run(s, problem(32, GgmlType::F32, 8)).ok());  // own wins this shape
  const std::vector<GemmShapeRuns> before = s.shape_runs();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].own, 1u);  // the measurement samples are not counted
  EXPECT_EQ(before[0].onednn, 0u);
  EXPECT_EQ(gemm_usage_text(gemm_usage_between(s.mode(), before, s.shape_runs())), "") << "nothing ran since";

  fake.own_cost = 3.0;
  fake.onednn_cost = 1.0;
  ASSERT_TRUE(run(s, problem(32, GgmlType::F32, 8)).ok());   // kept: own
  ASSERT_TRUE(run(s, problem(32, GgmlType::F32, 16)).ok());  // new shape: oneDNN wins
  ASSERT_TRUE(run(s, problem(32, GgmlType::F32, 16)).ok());
  ASSERT_TRUE(run(s, problem(64, GgmlType::F32, 16)).ok());  // another token bucket: a shape of its own
  const GemmUsage usage = gemm_usage_between(s.mode(), before, s.shape_runs());
  EXPECT_EQ(usage.shapes, 3u);
  EXPECT_EQ(usage.onednn_shapes, 2u);
  EXPECT_EQ(gemm_usage_text(usage), "auto(onednn 2/3 shapes)");
  // From the start: the first shape's run before the snapshot counts too, still 3 shapes.
  EXPECT_EQ(gemm_usage_text(gemm_usage_between(s.mode(), {}, s.shape_runs())), "auto(onednn 2/3 shapes)");
}

TEST_F(GemmSelectionTest, UsageTextNamesAForcedModesBackend) {
  GemmSelector own = selector(GemmMode::own);
  ASSERT_TRUE(run(own, problem(32)).ok());
  EXPECT_EQ(gemm_usage_text(gemm_usage_between(own.mode(), {}, own.shape_runs())), "own");
  GemmSelector onednn = selector(GemmMode::onednn);
  ASSERT_TRUE(run(onednn, problem(32)).ok());
  ASSERT_TRUE(run(onednn, problem(8, GgmlType::F32, 32)).ok());
  EXPECT_EQ(gemm_usage_text(gemm_usage_between(onednn.mode(), {}, onednn.shape_runs())), "onednn");
  EXPECT_EQ(gemm_usage_text({GemmMode::onednn, 3, 1}), "onednn(onednn 1/3 shapes)");
  EXPECT_EQ(gemm_usage_text({GemmMode::automatic, 0, 0}), "");
}

}  // namespace
}  // namespace infertune
