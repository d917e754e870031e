// `infertune export`: the trial table's CSV, Markdown and JSON text against golden output (quoting of
// commas, quotes, line breaks and pipes; NULLs; number formatting), and the command end to end.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "store_test_data.h"
#include "sweeps/export/table_format.h"
#include "sweeps/export/trial_table.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Sweep 1 with an ok trial whose summaries are exact in binary and a failed one whose reason needs quoting.
void write_golden_store(const std::filesystem::path& path) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(path, sweep);
  auto model = store.upsert_model({"m1", "/models/tiny q4.gguf", "llama", 1000, 4096, "{}"});
  ASSERT_TRUE(model);
  TrialRecord ok;
  ok.sweep_id = sweep;
  ok.config_hash = "aaaa";
  ok.config_json = R"({"model":"tiny, q4","threads":2})";
  ok.model_id = *model;
  ok.predicted_peak_rss_bytes = 1000;
  ok.peak_rss_bytes = 1200;
  ok.started_at = "2025-06-01T12:00:00.000Z";
  ok.finished_at = "2025-06-01T12:00:02.250Z";
  ok.duration_s = 2.25;
  ok.samples = {{metric::kPromptTokensPerSecond, 0, 10, true},   {metric::kPromptTokensPerSecond, 1, 250, false},
                {metric::kPromptTokensPerSecond, 2, 250, false}, {metric::kPromptTokensPerSecond, 3, 250, false},
                {metric::kGenTokensPerSecond, 1, 12.5, false},   {metric::kTimeToFirstTokenMs, 1, 40, false},
                {metric::kTimeToFirstTokenMs, 2, 60, false},     {metric::kModelLoadMs, 0, 125, false}};
  for (double v : {10, 10, 10, 20, 20}) ok.samples.push_back({metric::kInterTokenLatencyMs, 1, v, false});
  ASSERT_TRUE(store.record_trial(ok));
  TrialRecord failed;
  failed.sweep_id = sweep;
  failed.config_hash = "bbbb";
  failed.config_json = R"({"threads":4})";
  failed.status = TrialStatus::failed;
  failed.reason = "exit status 1: \"bad | input\", see log\nsecond line";
  ASSERT_TRUE(store.record_trial(failed));
}

constexpr std::string_view kGoldenCsv =
    R"(sweep_id,trial_id,status,reason,config_hash,model,config,pp_tps,pp_tps_ci95,tg_tps,tg_tps_ci95,ttft_ms,itl_p50_ms,itl_p95_ms,aggregate_tps,load_ms,predicted_peak_rss_bytes,peak_rss_bytes,started_at,finished_at,duration_s,quant,workload,n_prompt,n_gen,depth,threads,threads_batch,n_gpu_layers,n_ctx,n_batch,n_ubatch,n_parallel,type_k,type_v,flash_attn,mmap,numa,cpu_mask,ttft_p95_ms,itl_p99_ms,e2e_ms,e2e_p95_ms,aggregate_tps_ci95,cpu_busy_share,weight_read_gbs,bandwidth_pct,kv_bytes,instructions,cycles,llc_misses,ipc,model_bytes,gpu_busy_pct,gpu_vram_peak_bytes,gpu_mem_clock_mhz,quality_status,ppl,base_ppl,ppl_increase_pct,kld_mean,same_top
1,1,ok,,aaaa,/models/tiny q4.gguf,"{""model"":""tiny, q4"",""threads"":2}",250,0,12.5,,50,10,20,,125,1000,1200,2025-06-01T12:00:00.000Z,2025-06-01T12:00:02.250Z,2.25,,,,,,2,,,,,,,,,,,,,59,20,,,,,,,,,,,,4096,,,,,,,,,
1,2,failed,"exit status 1: ""bad | input"", see log
second line",bbbb,,"{""threads"":4}",,,,,,,,,,,,,,,,,,,,4,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,
)";

constexpr std::string_view kGoldenMarkdown =
    R"(| sweep_id | trial_id | status | reason | config_hash | model | config | pp_tps | pp_tps_ci95 | tg_tps | tg_tps_ci95 | ttft_ms | itl_p50_ms | itl_p95_ms | aggregate_tps | load_ms | predicted_peak_rss_bytes | peak_rss_bytes | started_at | finished_at | duration_s | quant | workload | n_prompt | n_gen | depth | threads | threads_batch | n_gpu_layers | n_ctx | n_batch | n_ubatch | n_parallel | type_k | type_v | flash_attn | mmap | numa | cpu_mask | ttft_p95_ms | itl_p99_ms | e2e_ms | e2e_p95_ms | aggregate_tps_ci95 | cpu_busy_share | weight_read_gbs | bandwidth_pct | kv_bytes | instructions | cycles | llc_misses | ipc | model_bytes | gpu_busy_pct | gpu_vram_peak_bytes | gpu_mem_clock_mhz | quality_status | ppl | base_ppl | ppl_increase_pct | kld_mean | same_top |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| 1 | 1 | ok | | aaaa | /models/tiny q4.gguf | {"model":"tiny, q4","threads":2} | 250.00 | 0.00 | 12.50 | | 50.00 | 10.00 | 20.00 | | 125.00 | 1000 | 1200 | 2025-06-01T12:00:00.000Z | 2025-06-01T12:00:02.250Z | 2.25 | | | | | | 2 | | | | | | | | | | | | | 59.00 | 20.00 | | | | | | | | | | | | 4096 | | | | | | | | | |
| 1 | 2 | failed | exit status 1: "bad \| input", see log second line | bbbb | | {"threads":4} | | | | | | | | | | | | | | | | | | | | 4 | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | |
)";

constexpr std::string_view kGoldenJson = R"([
  {
    "sweep_id": 1,
    "trial_id": 1,
    "status": "ok",
    "reason": null,
    "config_hash": "aaaa",
    "model": "/models/tiny q4.gguf",
    "config": {
      "model": "tiny, q4",
      "threads": 2
    },
    "pp_tps": 250.0,
    "pp_tps_ci95": 0.0,
    "tg_tps": 12.5,
    "tg_tps_ci95": null,
    "ttft_ms": 50.0,
    "itl_p50_ms": 10.0,
    "itl_p95_ms": 20.0,
    "aggregate_tps": null,
    "load_ms": 125.0,
    "predicted_peak_rss_bytes": 1000,
    "peak_rss_bytes": 1200,
    "started_at": "2025-06-01T12:00:00.000Z",
    "finished_at": "2025-06-01T12:00:02.250Z",
    "duration_s": 2.25,
    "quant": null,
    "workload": null,
    "n_prompt": null,
    "n_gen": null,
    "depth": null,
    "threads": 2,
    "threads_batch": null,
    "n_gpu_layers": null,
    "n_ctx": null,
    "n_batch": null,
    "n_ubatch": null,
    "n_parallel": null,
    "type_k": null,
    "type_v": null,
    "flash_attn": null,
    "mmap": null,
    "numa": null,
    "cpu_mask": null,
    "ttft_p95_ms": 59.0,
    "itl_p99_ms": 20.0,
    "e2e_ms": null,
    "e2e_p95_ms": null,
    "aggregate_tps_ci95": null,
    "cpu_busy_share": null,
    "weight_read_gbs": null,
    "bandwidth_pct": null,
    "kv_bytes": null,
    "instructions": null,
    "cycles": null,
    "llc_misses": null,
    "ipc": null,
    "model_bytes": 4096,
    "gpu_busy_pct": null,
    "gpu_vram_peak_bytes": null,
    "gpu_mem_clock_mhz": null,
    "quality_status": null,
    "ppl": null,
    "base_ppl": null,
    "ppl_increase_pct": null,
    "kld_mean": null,
    "same_top": null
  },
  {
    "sweep_id": 1,
    "trial_id": 2,
    "status": "failed",
    "reason": "exit status 1: \"bad | input\", see log\nsecond line",
    "config_hash": "bbbb",
    "model": null,
    "config": {
      "threads": 4
    },
    "pp_tps": null,
    "pp_tps_ci95": null,
    "tg_tps": null,
    "tg_tps_ci95": null,
    "ttft_ms": null,
    "itl_p50_ms": null,
    "itl_p95_ms": null,
    "aggregate_tps": null,
    "load_ms": null,
    "predicted_peak_rss_bytes": null,
    "peak_rss_bytes": null,
    "started_at": null,
    "finished_at": null,
    "duration_s": null,
    "quant": null,
    "workload": null,
    "n_prompt": null,
    "n_gen": null,
    "depth": null,
    "threads": 4,
    "threads_batch": null,
    "n_gpu_layers": null,
    "n_ctx": null,
    "n_batch": null,
    "n_ubatch": null,
    "n_parallel": null,
    "type_k": null,
    "type_v": null,
    "flash_attn": null,
    "mmap": null,
    "numa": null,
    "cpu_mask": null,
    "ttft_p95_ms": null,
    "itl_p99_ms": null,
    "e2e_ms": null,
    "e2e_p95_ms": null,
    "aggregate_tps_ci95": null,
    "cpu_busy_share": null,
    "weight_read_gbs": null,
    "bandwidth_pct": null,
    "kv_bytes": null,
    "instructions": null,
    "cycles": null,
    "llc_misses": null,
    "ipc": null,
    "model_bytes": null,
    "gpu_busy_pct": null,
    "gpu_vram_peak_bytes": null,
    "gpu_mem_clock_mhz": null,
    "quality_status": null,
    "ppl": null,
    "base_ppl": null,
    "ppl_increase_pct": null,
    "kld_mean": null,
    "same_top": null
  }
]
)";

class ExportGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = test::temp_dir() / "results.db";
    write_golden_store(path_);
    auto store = ResultsStore::open(path_, {.create = false});
    ASSERT_TRUE(store) << store.error().message;
    auto table = read_trial_table(store->database(), 1);
    ASSERT_TRUE(table) << table.error().message;
    table_ = std::move(*table);
  }
  std::filesystem::path path_;
  Table table_;
};

TEST_F(ExportGolden, Csv) { EXPECT_EQ(format_csv(table_), kGoldenCsv); }
TEST_F(ExportGolden, Markdown) { EXPECT_EQ(format_markdown(table_), kGoldenMarkdown); }
TEST_F(ExportGolden, Json) { EXPECT_EQ(format_json(table_), kGoldenJson); }

TEST_F(ExportGolden, CommandWritesEachFormat) {
  const std::string base = test::infertune_binary() + " export --db " + path_.string();
  auto csv = test::run_command(base);  // csv is the default
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output, kGoldenCsv);
  const auto md_file = path_.parent_path() / "trials.md";
  auto md = test::run_command(base + " --sweep 1 --format md -o " + md_file.string());
  ASSERT_EQ(md.exit_code, 0) << md.output;
  EXPECT_EQ(md.output, "");
  EXPECT_EQ(read_text(md_file), kGoldenMarkdown);
  auto json = test::run_command(base + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(json.output, kGoldenJson);
}

TEST_F(ExportGolden, SweepSelectsItsTrialsOnly) {
  {
    auto store = ResultsStore::open(path_);
    ASSERT_TRUE(store);
    auto sweep2 = store->create_sweep({"other", "h2", 1, 1, ""});
    ASSERT_TRUE(sweep2);
    ASSERT_TRUE(store->record_trial(test::test_trial(*sweep2, 7)));
  }
  auto store = ResultsStore::open(path_);
  auto one = read_trial_table(store->database(), 1);
  auto two = read_trial_table(store->database(), 2);
  auto all = read_trial_table(store->database(), std::nullopt);
  ASSERT_TRUE(one && two && all);
  EXPECT_EQ(one->rows.size(), 2u);
  ASSERT_EQ(two->rows.size(), 1u);
  EXPECT_EQ(all->rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(two->rows[0][4]), "config-7");
}

TEST_F(ExportGolden, UnknownSweepIsAnError) {
  auto r = test::run_command(test::infertune_binary() + " export --db " + path_.string() + " --sweep 9");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no sweep 9"), std::string::npos) << r.output;
}

TEST_F(ExportGolden, UnknownFormatIsAnError) {
  auto r = test::run_command(test::infertune_binary() + " export --db " + path_.string() + " --format xml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--format xml"), std::string::npos) << r.output;
}

TEST(Export, MissingDatabaseIsNamedAndNotCreated) {
  const auto path = test::temp_dir() / "typo.db";
  auto r = test::run_command(test::infertune_binary() + " export --db " + path.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(path.string()), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Export, HasHelp) {
  auto r = test::run_command(test::infertune_binary() + " export --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--format"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--sweep"), std::string::npos) << r.output;
}

TEST(Export, EmptyStoreGivesTheHeaderOnly) {
  const auto path = test::temp_dir() / "r.db";
  { ASSERT_TRUE(ResultsStore::open(path)); }
  auto r = test::run_command(test::infertune_binary() + " export --db " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, std::string(kGoldenCsv.substr(0, kGoldenCsv.find('\n') + 1)));
  auto json = test::run_command(test::infertune_binary() + " export --format json --db " + path.string());
  EXPECT_EQ(json.output, "[]\n");
}

TEST(Export, FormatNames) {
  EXPECT_EQ(parse_table_format("csv"), TableFormat::csv);
  EXPECT_EQ(parse_table_format("md"), TableFormat::markdown);
  EXPECT_EQ(parse_table_format("json"), TableFormat::json);
  EXPECT_FALSE(parse_table_format("CSV "));
}

TEST(Export, ReadmeDocumentsEveryColumn) {
  const auto readme = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "README.md";
  if (!std::filesystem::exists(readme)) GTEST_SKIP() << "README.md not found at " << readme;
  const std::string text = read_text(readme);
  for (const char* column : trial_table_columns()) {
    EXPECT_NE(text.find(std::string("| `") + column + "` |"), std::string::npos) << column << " is not in the README";
  }
}

TEST(Export, TheSqliteShellReadsTheView) {
  if (test::run_command("command -v sqlite3").exit_code != 0) GTEST_SKIP() << "the sqlite3 shell is not installed";
  const auto path = test::temp_dir() / "results.db";
  write_golden_store(path);
  auto r = test::run_command("sqlite3 -header -csv " + path.string() +
                             " 'SELECT trial_id, status, pp_tps, itl_p95_ms, peak_rss_bytes FROM trial_summary'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "trial_id,status,pp_tps,itl_p95_ms,peak_rss_bytes\n1,ok,250.0,20.0,1200\n2,failed,,,\n");
}

}  // namespace
}  // namespace infertune
