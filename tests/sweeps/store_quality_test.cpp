// The variant_quality table (schema version 4): a variant's quality recorded once per sweep and read back,
// replaced on a second record, refused for an unknown sweep, joined into trial_summary; and a store written at
// version 3 (before quality) opening with every row, an empty table and NULL quality columns.
#include <gtest/gtest.h>

#include <algorithm>
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

ModelRecord model(const std::string& hash, const std::string& path) {
  ModelRecord m;
  m.content_hash = hash;
  m.path = path;
  m.arch = "llama";
  m.file_bytes = 1000;
  return m;
}

VariantQualityRecord measured(int64_t sweep, int64_t variant, int64_t base) {
  VariantQualityRecord q;
  q.sweep_id = sweep;
  q.model_id = variant;
  q.base_model_id = base;
  q.quant = "q4_0";
  q.status = QualityStatus::measured;
  q.corpus = "python-tutorial";
  q.n_ctx = 512;
  q.n_chunks = 4;
  q.positions = 1020;
  q.ppl = 10.4;
  q.ppl_error = 0.2;
  q.base_ppl = 10.0;
  q.kld_mean = 0.03;
  q.kld_error = 0.001;
  q.kld_p99 = 0.2;
  q.kld_max = 0.9;
  q.same_top = 0.93;
  return q;
}

TEST(StoreQuality, RecordedOncePerVariantAndReadBack) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  const int64_t base = *store.upsert_model(model("basehash", "/m/base.gguf"));
  const int64_t q4 = *store.upsert_model(model("q4hash", "/cache/base-q4_0.gguf"));
  const int64_t q8 = *store.upsert_model(model("q8hash", "/cache/base-q8_0.gguf"));
  ASSERT_TRUE(store.record_variant_quality(measured(sweep, q4, base)));
  VariantQualityRecord synthetic;
  synthetic.sweep_id = sweep;
  synthetic.model_id = q8;
  synthetic.quant = "q8_0";
  synthetic.status = QualityStatus::not_meaningful;
  synthetic.reason = "the base is synthetic";
  ASSERT_TRUE(store.record_variant_quality(synthetic));

  auto rows = store.variant_quality(sweep);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  const VariantQualityRecord& a = (*rows)[0];
  EXPECT_EQ(a.model_id, q4);
  EXPECT_EQ(a.base_model_id, base);
  EXPECT_EQ(a.status, QualityStatus::measured);
  EXPECT_EQ(a.corpus, "python-tutorial");
  EXPECT_EQ(a.n_ctx, 512);
  EXPECT_EQ(a.positions, 1020);
  EXPECT_DOUBLE_EQ(*a.ppl, 10.4);
  EXPECT_DOUBLE_EQ(*a.kld_mean, 0.03);
  EXPECT_DOUBLE_EQ(*a.same_top, 0.93);
  EXPECT_NEAR(*a.ppl_increase_pct(), 4.0, 1e-9);
  const VariantQualityRecord& b = (*rows)[1];
  EXPECT_EQ(b.status, QualityStatus::not_meaningful);
  EXPECT_EQ(b.reason, "the base is synthetic");
  EXPECT_FALSE(b.ppl);
  EXPECT_FALSE(b.base_model_id);
  EXPECT_FALSE(b.ppl_increase_pct());

  // A second record of the same variant in the sweep replaces the first (one row per variant).
  VariantQualityRecord again = measured(sweep, q4, base);
  again.ppl = 10.2;
  ASSERT_TRUE(store.record_variant_quality(again));
  rows = store.variant_quality(sweep);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_DOUBLE_EQ(*(*rows)[0].ppl, 10.2);

  // Unknown sweep: refused, nothing written.
  auto unknown = store.record_variant_quality(measured(sweep + 100, q4, base));
  EXPECT_FALSE(unknown);
  EXPECT_EQ(text(store.database(), "SELECT count(*) FROM variant_quality"), "2");
}

TEST(StoreQuality, TrialSummaryCarriesTheVariantsFigures) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  const int64_t base = *store.upsert_model(model("basehash", "/m/base.gguf"));
  const int64_t q4 = *store.upsert_model(model("q4hash", "/cache/base-q4_0.gguf"));
  TrialRecord trial = test::test_trial(sweep, 1);
  trial.model_id = q4;
  ASSERT_TRUE(store.record_trial(trial));
  TrialRecord other = test::test_trial(sweep, 2);  // a model file used as given: no figures
  ASSERT_TRUE(store.record_trial(other));
  ASSERT_TRUE(store.record_variant_quality(measured(sweep, q4, base)));
  Database& db = store.database();
  EXPECT_EQ(text(db,
                 "SELECT quality_status || ' ' || ppl || ' ' || base_ppl || ' ' || round(ppl_increase_pct, 6) || ' ' ||"
                 " kld_mean || ' ' || same_top FROM trial_summary WHERE config_hash = 'config-1'"),
            "measured 10.4 10.0 4.0 0.03 0.93");
  EXPECT_EQ(text(db, "SELECT quality_status FROM trial_summary WHERE config_hash = 'config-2'"), "NULL");
  auto table = read_trial_table(db, sweep);
  ASSERT_TRUE(table) << table.error().message;
  const auto& columns = table->columns;
  const auto at = std::find(columns.begin(), columns.end(), "kld_mean") - columns.begin();
  ASSERT_LT(size_t(at), columns.size());
  EXPECT_EQ(std::get<double>(table->rows[0][at]), 0.03);
}

// Version 3 wrote no quality; a v3 file with a sweep, a model and a trial opens at version 4 with its rows.
TEST(StoreQuality, Version3StoreOpensWithEmptyQuality) {
  const auto path = test::temp_dir() / "v3.db";
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(migrate(*db, store_migrations().first(3)));
    ASSERT_TRUE(db->exec(R"sql(
INSERT INTO hosts VALUES (1, 'feedfacefeedface', 'Old CPU', 'avx2', 2, 4, 8589934592, '[]', '[]', 20.5, '{}',
                          '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z');
INSERT INTO builds VALUES (1, '0.1.0', 'abc', 'GNU 12', 'Release', '-O3', 'cpu', 'avx2 scalar', '2025-01-01T00:00:00.000Z');
INSERT INTO models VALUES (1, 'hash1', '/cache/base-q4_0.gguf', 'llama', 1000, 123456, '{"q4_0":100000}',
                           '2025-01-01T00:00:00.000Z');
INSERT INTO sweeps VALUES (1, 'base_model: [b]', 'spechash', 'done', 1, 1, '2025-01-01T00:00:00.000Z', NULL);
INSERT INTO trials VALUES (1, 1, 'h1', '{"model":"/m/base.gguf","quant":"q4_0","threads":2}', 1, 'ok', NULL, 900,
  1000, '2025-01-01T00:00:01.000Z', '2025-01-01T00:00:02.000Z', 1.0);
)sql"));
  }
  {  // read-only: migrated in memory, the file stays at version 3
    auto reader = ResultsStore::open_read_only(path);
    ASSERT_TRUE(reader) << reader.error().message;
    auto rows = reader->variant_quality(1);
    ASSERT_TRUE(rows) << rows.error().message;
    EXPECT_TRUE(rows->empty());
  }
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db);
    EXPECT_EQ(*schema_version(*db), 3);
  }
  auto store = ResultsStore::open(path, {.create = false});
  ASSERT_TRUE(store) << store.error().message;
  Database& db = store->database();
  EXPECT_EQ(*schema_version(db), store_schema_version());
  EXPECT_EQ(text(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(text(db, "SELECT count(*) FROM trials"), "1");
  EXPECT_EQ(text(db, "SELECT quant || ' ' || coalesce(ppl, 'none') FROM trial_summary"), "q4_0 none");
  // The upgraded file takes quality rows.
  ASSERT_TRUE(store->record_variant_quality(measured(1, 1, 1)));
  EXPECT_EQ(text(db, "SELECT ppl FROM trial_summary WHERE trial_id = 1"), "10.4");
}

}  // namespace
}  // namespace infertune
