// batched-bench end to end on the fixture model: the runner on a real Context (the tokens decoded in each
// phase, the KV cells in use at the end against N_KV, a shared prompt stored once, a combination that
// does not fit -c as an error row with the next one still running, -b smaller than a batch), and the
// `infertune batched-bench` command itself (-o jsonl rows, an error row, the exit status).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/batched_bench/batched_runner.h"
#include "engine/model/model.h"
#include "test_support.h"

namespace infertune {
namespace {

const std::string kModel = test::fixture_path("models/fixture-llama-Q4_0.gguf").string();

class BatchedBenchRun : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::load(kModel);
    ASSERT_TRUE(model) << model.error().message;
    model_.emplace(std::move(*model));
  }
  Context context(uint32_t n_ctx, uint32_t n_seq_max, uint32_t n_batch, uint32_t n_ubatch) {
    ContextParams p;
    p.n_ctx = n_ctx;
    p.n_seq_max = n_seq_max;
    p.n_batch = n_batch;
    p.n_ubatch = n_ubatch;
    p.n_threads = 2;
    p.type_k = p.type_v = GgmlType::F16;
    auto ctx = Context::create(*model_, p);
    EXPECT_TRUE(ctx) << ctx.error().message;
    return std::move(*ctx);
  }
  std::optional<Model> model_;
};

TEST_F(BatchedBenchRun, SeparatePromptsFillNplTimesPpPlusTg) {
  Context ctx = context(64, 4, 16, 8);  // -b 16: the 32-token prompt batch goes in two pieces
  const BatchedRow r = run_batched_case(ctx, {8, 3, 4, false});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.n_kv, 4 * (8 + 3));
  EXPECT_EQ(r.pp_decoded, 4 * 8);
  EXPECT_EQ(r.tg_decoded, 4 * 3);
  EXPECT_EQ(r.kv_used, r.n_kv);  // every token took one cell
  EXPECT_GT(r.t_pp_ns, 0u);
  EXPECT_GT(r.t_tg_ns, 0u);
  EXPECT_EQ(ctx.kv_cache().n_used(), 0u);  // the cache is cleared for the next combination
}

TEST_F(BatchedBenchRun, SharedPromptIsDecodedOnceAndStoredOnce) {
  Context ctx = context(64, 4, 2048, 512);
  const BatchedRow r = run_batched_case(ctx, {12, 5, 4, true});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.n_kv, 12 + 4 * 5);
  EXPECT_EQ(r.pp_decoded, 12);
  EXPECT_EQ(r.tg_decoded, 4 * 5);
  EXPECT_EQ(r.kv_used, r.n_kv);
}

TEST_F(BatchedBenchRun, GenerationBatchLargerThanNBatchGoesInPieces) {
  Context ctx = context(64, 8, 3, 3);  // 8 sequences, at most 3 tokens per decode
  const BatchedRow r = run_batched_case(ctx, {2, 2, 8, false});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.pp_decoded, 16);
  EXPECT_EQ(r.tg_decoded, 16);
  EXPECT_EQ(r.kv_used, 32);
}

TEST_F(BatchedBenchRun, CombinationThatDoesNotFitIsAnErrorAndTheNextRuns) {
  Context ctx = context(40, 4, 2048, 512);
  const BatchedRow too_big = run_batched_case(ctx, {16, 8, 4, false});  // 96 cells > 40
  EXPECT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error.find("N_KV 96"), std::string::npos) << too_big.error;
  EXPECT_EQ(too_big.pp_decoded, 0);
  const BatchedRow shared = run_batched_case(ctx, {16, 8, 4, true});  // 16 + 32 = 48 > 40: still too big
  EXPECT_FALSE(shared.ok());
  const BatchedRow small = run_batched_case(ctx, {4, 4, 4, false});  // 32 cells
  ASSERT_TRUE(small.ok()) << small.error;
  EXPECT_EQ(small.kv_used, 32);
}

TEST_F(BatchedBenchRun, WarmupLeavesTheCacheEmpty) {
  Context ctx = context(64, 1, 2048, 512);
  ASSERT_TRUE(warm_up_batched(ctx));
  EXPECT_EQ(ctx.kv_cache().n_used(), 0u);
}

TEST(BatchedBenchCommand, JsonlRowsWithAnErrorRow) {
  if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
  const auto out = test::temp_dir() / "stdout.txt";
  const auto result = test::run_command("(" + test::infertune_binary() + " batched-bench -m " + kModel +
                                        " -npp 8 -ntg 2,4 -npl 1,3 -c 30 -t 2 -o jsonl > " + out.string() + ")");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(out);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 4u);
  const int expected[4][3] = {{2, 1, 10}, {2, 3, 30}, {4, 1, 12}, {4, 3, 36}};  // tg, pl, n_kv
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["pp"], 8);
    EXPECT_EQ(rows[i]["tg"], expected[i][0]);
    EXPECT_EQ(rows[i]["pl"], expected[i][1]);
    EXPECT_EQ(rows[i]["n_kv"], expected[i][2]);
    EXPECT_EQ(rows[i]["n_kv_max"], 30);
    EXPECT_EQ(rows[i]["n_threads_used"], 2);
    EXPECT_FALSE(rows[i]["kernel"].get<std::string>().empty());
  }
  for (size_t i : {0u, 1u, 2u}) EXPECT_TRUE(rows[i]["error"].is_null()) << rows[i].dump();
  EXPECT_NE(rows[3]["error"].get<std::string>().find("does not fit"), std::string::npos);  // 36 > -c 30
  EXPECT_NE(result.output.find("error: pp 8, tg 4, pl 3"), std::string::npos) << result.output;
}

TEST(BatchedBenchCommand, SharedPromptNKvAndMarkdown) {
  if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
  const auto out = test::temp_dir() / "stdout.txt";
  const auto result = test::run_command("(" + test::infertune_binary() + " batched-bench -m " + kModel +
                                        " -npp 8 -ntg 2 -npl 4 --pps -t 1 > " + out.string() + ")");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  // Default -c is the largest N_KV: 8 + 4 * 2.
  EXPECT_NE(text.str().find("n_kv_max = 16"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("is_pp_shared = 1"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("|     8 |      2 |    4 |     16 |"), std::string::npos) << text.str();
}

TEST(BatchedBenchCommand, BadFlagsExitNonZero) {
  if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
  const auto result =
      test::run_command("(" + test::infertune_binary() + " batched-bench -m " + kModel + " -npl 0 > /dev/null)");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("-npl"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace infertune
