// Every output format of batched-bench on hand-made rows: one measured row without a shared prompt, one
// with, and an error row. The speeds are recomputed here from their definitions (tokens / seconds) rather
// than trusted.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench/batched_bench/batched_printer.h"

namespace infertune {
namespace {

BatchedRunInfo run_info() {
  BatchedRunInfo run;
  run.model = "m.gguf";
  run.kernel = "avx2";
  run.n_kv_max = 4096;
  run.n_batch = 2048;
  run.n_ubatch = 512;
  run.n_threads = run.n_threads_batch = run.n_threads_used = 2;
  run.type_k = run.type_v = "f16";
  return run;
}

BatchedRow row(int pp, int tg, int pl, bool shared, uint64_t t_pp_ns, uint64_t t_tg_ns) {
  BatchedRow r;
  r.test = {pp, tg, pl, shared};
  r.n_kv = r.test.n_kv();
  r.t_pp_ns = t_pp_ns;
  r.t_tg_ns = t_tg_ns;
  return r;
}

std::vector<BatchedRow> rows() {
  BatchedRow error = row(512, 256, 32, false, 0, 0);
  error.error = "N_KV 24576 does not fit the context's 4096 KV cells (-c 4096)";
  return {row(128, 32, 4, false, 2'000'000'000, 4'000'000'000), row(128, 32, 8, true, 500'000'000, 1'000'000'000),
          error};
}

std::string print(BatchedOutput format) {
  const BatchedRunInfo run = run_info();
  std::FILE* out = std::tmpfile();
  auto printer = make_batched_printer(out, format, run);
  printer->header();
  for (const BatchedRow& r : rows()) printer->row(r);
  printer->footer();
  std::fflush(out);
  std::rewind(out);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
  std::fclose(out);
  return text;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void expect_measured(const nlohmann::json& j, const BatchedRow& r) {
  const double pp_tokens = r.test.shared_prompt ? r.test.n_pp : double(r.test.n_pl) * r.test.n_pp;
  const double tg_tokens = double(r.test.n_pl) * r.test.n_tg;
  const double t_pp = double(r.t_pp_ns) / 1e9, t_tg = double(r.t_tg_ns) / 1e9;
  EXPECT_EQ(j["pp"], r.test.n_pp);
  EXPECT_EQ(j["tg"], r.test.n_tg);
  EXPECT_EQ(j["pl"], r.test.n_pl);
  EXPECT_EQ(j["n_kv"], r.n_kv);
  EXPECT_DOUBLE_EQ(j["t_pp"].get<double>(), t_pp);
  EXPECT_DOUBLE_EQ(j["speed_pp"].get<double>(), pp_tokens / t_pp);
  EXPECT_DOUBLE_EQ(j["t_tg"].get<double>(), t_tg);
  EXPECT_DOUBLE_EQ(j["speed_tg"].get<double>(), tg_tokens / t_tg);
  EXPECT_DOUBLE_EQ(j["t"].get<double>(), t_pp + t_tg);
  EXPECT_DOUBLE_EQ(j["speed"].get<double>(), double(r.n_kv) / (t_pp + t_tg));
  EXPECT_EQ(j["kernel"], "avx2");
  EXPECT_EQ(j["n_threads_used"], 2);
  EXPECT_TRUE(j["error"].is_null());
}

TEST(BatchedBenchOutput, Json) {
  const auto j = nlohmann::json::parse(print(BatchedOutput::json));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  const auto expected = rows();
  expect_measured(j[0], expected[0]);
  expect_measured(j[1], expected[1]);
  EXPECT_EQ(j[0]["is_pp_shared"], 0);
  EXPECT_EQ(j[1]["is_pp_shared"], 1);
  EXPECT_EQ(j[2]["n_kv"], 32 * (512 + 256));
  EXPECT_TRUE(j[2]["t_pp"].is_null());
  EXPECT_TRUE(j[2]["speed"].is_null());
  EXPECT_NE(j[2]["error"].get<std::string>().find("does not fit"), std::string::npos);
}

TEST(BatchedBenchOutput, JsonlIsOneObjectPerLine) {
  const auto text = lines(print(BatchedOutput::jsonl));
  ASSERT_EQ(text.size(), 3u);
  const auto expected = rows();
  expect_measured(nlohmann::json::parse(text[0]), expected[0]);
  expect_measured(nlohmann::json::parse(text[1]), expected[1]);
  EXPECT_FALSE(nlohmann::json::parse(text[2])["error"].is_null());
}

TEST(BatchedBenchOutput, Csv) {
  const auto text = lines(print(BatchedOutput::csv));
  ASSERT_EQ(text.size(), 4u);
  EXPECT_EQ(text[0].rfind("n_kv_max,n_batch,n_ubatch,flash_attn,is_pp_shared,n_gpu_layers,n_threads,"
                          "n_threads_batch,pp,tg,pl,n_kv,t_pp,speed_pp,t_tg,speed_tg,t,speed,kernel",
                          0),
            0u)
      << text[0];
  // pp 128 x 4 sequences in 2 s: 256 t/s; tg 32 x 4 in 4 s: 32 t/s; 640 cells in 6 s.
  EXPECT_NE(text[1].find("\"128\",\"32\",\"4\",\"640\",\"2.000000\",\"256.000000\",\"4.000000\",\"32.000000\","
                         "\"6.000000\",\"106.666667\",\"avx2\""),
            std::string::npos)
      << text[1];
  EXPECT_NE(text[3].find("\"\",\"\",\"\""), std::string::npos) << text[3];  // an error row has no timings
  EXPECT_NE(text[3].find("does not fit"), std::string::npos) << text[3];
}

TEST(BatchedBenchOutput, MarkdownHasLlamaBatchedBenchsColumns) {
  const auto text = lines(print(BatchedOutput::markdown));
  ASSERT_EQ(text.size(), 2u + 2u + 3u);  // settings, blank, header, rule, rows
  EXPECT_NE(text[0].find("n_kv_max = 4096"), std::string::npos);
  EXPECT_NE(text[0].find("is_pp_shared = 0"), std::string::npos);
  for (const char* column :
       {"PP", "TG", "B", "N_KV", "T_PP s", "S_PP t/s", "T_TG s", "S_TG t/s", "T s", "S t/s", "kernel", "threads"}) {
    EXPECT_NE(text[2].find(column), std::string::npos) << column;
  }
  // 128 x 8 shared: one prompt of 128 in 0.5 s (256 t/s), 256 generated in 1 s; 384 cells in 1.5 s.
  EXPECT_NE(text[5].find("|   128 |     32 |    8 |    384 |    0.500 |   256.00 |    1.000 |   256.00 |    1.500 | "
                         "  256.00 | avx2   |"),
            std::string::npos)
      << text[5];
  EXPECT_NE(text[6].find("error: N_KV 24576"), std::string::npos) << text[6];
}

}  // namespace
}  // namespace infertune
