// Files written by earlier schema versions open with today's ResultsStore: every row survives, the
// trial_summary view has today's columns, and the file passes PRAGMA integrity_check. Version 1 rows are
// written with plain SQL, as version 1 of infertune wrote them (no utilization metrics).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "store_test_data.h"
#include "sweeps/export/trial_table.h"
#include "sweeps/store/migrations.h"
#include "sweeps/store/schema.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string text(Database& db, const std::string& sql) {
  auto q = db.prepare(sql);
  EXPECT_TRUE(q) << sql << ": " << q.error().message;
  if (!q) return "";
  auto row = q->step();
  EXPECT_TRUE(row && *row) << sql;
  if (!row || !*row) return "";
  return q->column_type(0) == SQLITE_NULL ? "NULL" : q->column_text(0);
}

std::set<std::string> view_columns(Database& db) {
  auto q = db.prepare("SELECT name FROM pragma_table_info('trial_summary')");
  EXPECT_TRUE(q);
  std::set<std::string> names;
  while (*q->step()) names.insert(q->column_text(0));
  return names;
}

// A sweep with two trials as version 1 wrote them: an ok tg trial of a quantized variant with summaries,
// and a failed one of a model file used as given.
constexpr const char* kVersion1Rows = R"sql(
INSERT INTO hosts VALUES (1, 'feedfacefeedface', 'Old CPU', 'avx2', 2, 4, 8589934592, '[]', '[]', 20.5, '{}',
                          '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z');
INSERT INTO builds VALUES (1, '0.1.0', 'abc', 'GNU 12', 'Release', '-O3', 'cpu', 'avx2 scalar', '2025-01-01T00:00:00.000Z');
INSERT INTO models VALUES (1, 'hash1', '/models/base.gguf', 'llama', 1000, 123456, '{"q4_0":100000}',
                           '2025-01-01T00:00:00.000Z');
INSERT INTO sweeps VALUES (1, 'threads: [2]', 'spechash', 'done', 1, 1, '2025-01-01T00:00:00.000Z', NULL);
INSERT INTO trials VALUES (1, 1, 'h1',
  '{"model":"/models/base.gguf","quant":"q4_0","threads":2,"threads_batch":2,"n_ctx":512,"n_batch":256,"n_ubatch":128,"n_parallel":4,"n_gpu_layers":0,"type_k":"f16","type_v":"q8_0","flash_attn":"auto","mmap":true,"numa":"","cpu_mask":"","workload":{"kind":"tg","n_prompt":0,"n_gen":32,"depth":0,"n_parallel":1}}',
  1, 'ok', NULL, 900, 1000, '2025-01-01T00:00:01.000Z', '2025-01-01T00:00:02.000Z', 1.0);
INSERT INTO trials VALUES (2, 1, 'h2', '{"model":"/models/other.gguf","quant":"","threads":1,"mmap":false}',
  NULL, 'failed', 'exit status 1', NULL, NULL, NULL, NULL, NULL);
INSERT INTO samples (trial_id, metric, repetition, value, is_warmup) VALUES
  (1, 'tg_tps', 0, 5, 1), (1, 'tg_tps', 1, 10, 0), (1, 'tg_tps', 2, 12, 0),
  (1, 'itl_ms', 1, 100, 0), (1, 'itl_ms', 1, 80, 0), (1, 'itl_ms', 2, 90, 0);
INSERT INTO metrics VALUES
  (1, 'tg_tps', 2, 11, 1.414, 11, 11, 11.9, 11.98, 12.7),
  (1, 'itl_ms', 3, 90, 10, 90, 90, 99, 99.8, 24.8),
  (1, 'e2e_ms', 1, 3000, NULL, 3000, 3000, 3000, 3000, NULL);
)sql";

Database open_at_version_1(const std::filesystem::path& path) {
  auto db = Database::open(path);
  EXPECT_TRUE(db) << db.error().message;
  EXPECT_TRUE(migrate(*db, store_migrations().first(1)));
  EXPECT_EQ(*schema_version(*db), 1);
  return std::move(*db);
}

TEST(StoreUpgrade, Version1FileOpensAtTheLatestVersionWithItsRowsAndTheNewView) {
  const auto path = test::temp_dir() / "v1.db";
  {
    Database v1 = open_at_version_1(path);
    ASSERT_TRUE(v1.exec(kVersion1Rows));
    EXPECT_FALSE(view_columns(v1).count("cpu_busy_share"));
  }
  auto store = ResultsStore::open(path, {.create = false});
  ASSERT_TRUE(store) << store.error().message;
  Database& db = store->database();
  EXPECT_EQ(*schema_version(db), store_schema_version());
  EXPECT_EQ(store_schema_version(), 5);
  EXPECT_EQ(text(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(text(db, "SELECT count(*) FROM trials"), "2");
  EXPECT_EQ(text(db, "SELECT count(*) FROM samples"), "6");
  EXPECT_EQ(text(db, "SELECT count(*) FROM metrics"), "3");
  EXPECT_EQ(text(db, "SELECT count(*) FROM trial_summary"), "2");

  const std::set<std::string> columns = view_columns(db);
  for (const char* column : trial_table_columns()) EXPECT_TRUE(columns.count(column)) << column;

  // Configuration columns come from the config JSON; the model file used as given has no quant.
  EXPECT_EQ(text(db,
                 "SELECT quant || ' ' || workload || ' ' || threads || ' ' || n_parallel || ' ' || n_ctx || ' ' ||"
                 " n_ubatch || ' ' || type_v || ' ' || mmap || ' ' || n_gen FROM trial_summary WHERE trial_id = 1"),
            "q4_0 tg 2 4 512 128 q8_0 1 32");
  EXPECT_EQ(text(db, "SELECT quant FROM trial_summary WHERE trial_id = 2"), "NULL");
  EXPECT_EQ(text(db, "SELECT mmap FROM trial_summary WHERE trial_id = 2"), "0");
  // Summaries recorded by version 1 feed the new columns; metrics it never measured are NULL.
  EXPECT_EQ(text(db, "SELECT itl_p99_ms FROM trial_summary WHERE trial_id = 1"), "99.8");
  EXPECT_EQ(text(db, "SELECT e2e_ms FROM trial_summary WHERE trial_id = 1"), "3000.0");
  EXPECT_EQ(text(db, "SELECT tg_tps FROM trial_summary WHERE trial_id = 1"), "11.0");
  EXPECT_EQ(text(db, "SELECT model_bytes FROM trial_summary WHERE trial_id = 1"), "123456");
  EXPECT_EQ(text(db, "SELECT cpu_busy_share FROM trial_summary WHERE trial_id = 1"), "NULL");
  EXPECT_EQ(text(db, "SELECT ipc FROM trial_summary WHERE trial_id = 1"), "NULL");
  EXPECT_EQ(text(db, "SELECT gpu_busy_pct FROM trial_summary WHERE trial_id = 1"), "NULL");

  // The upgraded file takes new trials with the new metrics, and export reads it.
  TrialRecord next = test::test_trial(1, 3);
  next.samples.push_back({metric::kCpuBusyShare, 1, 0.5, false});
  next.samples.push_back({metric::kCpuBusyShare, 2, 0.75, false});
  next.samples.push_back({metric::kInstructionsPerCycle, 1, 2.5, false});
  next.samples.push_back({metric::kGpuBusyPercent, 1, 80, false});
  next.samples.push_back({metric::kGpuBusyPercent, 2, 90, false});
  next.samples.push_back({metric::kGpuVramPeakBytes, 1, 4e9, false});
  next.samples.push_back({metric::kGpuMemoryClockMhz, 1, 2619, false});
  ASSERT_TRUE(store->record_trial(next));
  EXPECT_EQ(text(db, "SELECT cpu_busy_share || ' ' || ipc || ' ' || threads FROM trial_summary WHERE trial_id = 3"),
            "0.625 2.5 3");
  EXPECT_EQ(text(db,
                 "SELECT gpu_busy_pct || ' ' || CAST(gpu_vram_peak_bytes AS INTEGER) || ' ' || gpu_mem_clock_mhz"
                 " FROM trial_summary WHERE trial_id = 3"),
            "85.0 4000000000 2619.0");
  auto table = read_trial_table(db, 1);
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_EQ(table->rows.size(), 3u);
  EXPECT_EQ(text(db, "PRAGMA integrity_check"), "ok");
}

TEST(StoreUpgrade, FromEveryEarlierVersionTheStoreOpensAtTheLatest) {
  const auto migrations = store_migrations();
  for (size_t start = 0; start < migrations.size(); ++start) {
    const auto path = test::temp_dir() / ("from" + std::to_string(start) + ".db");
    {
      auto db = Database::open(path);
      ASSERT_TRUE(db);
      ASSERT_TRUE(migrate(*db, migrations.first(start)));
    }
    auto store = ResultsStore::open(path);
    ASSERT_TRUE(store) << "from version " << start << ": " << store.error().message;
    EXPECT_EQ(*schema_version(store->database()), store_schema_version()) << "from version " << start;
    EXPECT_EQ(text(store->database(), "PRAGMA integrity_check"), "ok");
    const std::set<std::string> columns = view_columns(store->database());
    for (const char* column : trial_table_columns()) EXPECT_TRUE(columns.count(column)) << column << " from " << start;
  }
}

}  // namespace
}  // namespace infertune
