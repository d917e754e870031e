// The schema and its forward migrations: creation, reopening, a later migration (a fake version after the
// last real one), a database newer than the code, and a migration that fails half-way. Upgrading files
// written by earlier versions (v1 -> v2) is in store_upgrade_test.cpp.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "store_test_data.h"
#include "sweeps/store/migrations.h"
#include "sweeps/store/schema.h"
#include "test_support.h"

namespace infertune {
namespace {

std::set<std::string> schema_objects(Database& db, const std::string& type) {
  auto q = db.prepare("SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%'");
  EXPECT_TRUE(q);
  q->bind(1, type);
  std::set<std::string> names;
  while (*q->step()) names.insert(q->column_text(0));
  return names;
}

int64_t scalar(Database& db, const std::string& sql) {
  auto q = db.prepare(sql);
  EXPECT_TRUE(q) << q.error().message;
  EXPECT_TRUE(*q->step()) << sql;
  return q->column_int(0);
}

const int kLatest = store_schema_version();

std::vector<Migration> with_fake_next_version() {
  std::vector<Migration> list(store_migrations().begin(), store_migrations().end());
  list.push_back(
      {kLatest + 1, "trial notes", "ALTER TABLE trials ADD COLUMN note TEXT; CREATE TABLE notes_seen (x INTEGER);"});
  return list;
}

TEST(StoreSchema, OpeningCreatesEveryTableAndTheView) {
  auto store = ResultsStore::open(test::temp_dir() / "r.db");
  ASSERT_TRUE(store) << store.error().message;
  Database& db = store->database();
  EXPECT_EQ(store_schema_version(), 5);
  EXPECT_EQ(*schema_version(db), 5);
  const std::set<std::string> expected = {"schema_version", "hosts",   "builds",  "models",          "sweeps",
                                          "trials",         "samples", "metrics", "recommendations", "variant_quality"};
  EXPECT_EQ(schema_objects(db, "table"), expected);
  EXPECT_EQ(schema_objects(db, "view"), std::set<std::string>{"trial_summary"});
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM schema_version"), 5);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM trial_summary"), 0);
}

TEST(StoreSchema, ANewFileIsAtVersionZero) {
  auto db = Database::open(test::temp_dir() / "empty.db");
  ASSERT_TRUE(db);
  EXPECT_EQ(*schema_version(*db), 0);
}

TEST(StoreSchema, ReopeningKeepsDataAndDoesNotMigrateAgain) {
  const auto path = test::temp_dir() / "r.db";
  int64_t sweep = 0;
  {
    ResultsStore store = test::store_with_sweep(path, sweep);
    ASSERT_TRUE(store.record_trial(test::test_trial(sweep, 1)));
  }
  auto reopened = ResultsStore::open(path, {.create = false});
  ASSERT_TRUE(reopened) << reopened.error().message;
  EXPECT_EQ(scalar(reopened->database(), "SELECT count(*) FROM schema_version"), kLatest);
  auto trials = reopened->trials(sweep);
  ASSERT_TRUE(trials);
  EXPECT_EQ(trials->size(), 1u);
}

TEST(StoreSchema, LaterMigrationAppliesOnTopOfExistingData) {
  const auto path = test::temp_dir() / "r.db";
  int64_t sweep = 0;
  {
    ResultsStore store = test::store_with_sweep(path, sweep);
    ASSERT_TRUE(store.record_trial(test::test_trial(sweep, 1)));
  }
  auto db = Database::open(path);
  ASSERT_TRUE(db);
  const auto migrations = with_fake_next_version();
  ASSERT_TRUE(migrate(*db, migrations));
  EXPECT_EQ(*schema_version(*db), kLatest + 1);
  EXPECT_EQ(scalar(*db, "SELECT count(*) FROM schema_version"), kLatest + 1);
  EXPECT_EQ(scalar(*db, "SELECT count(*) FROM trials WHERE note IS NULL"), 1);  // the row survived, with the column
  EXPECT_TRUE(schema_objects(*db, "table").count("notes_seen"));
  ASSERT_TRUE(migrate(*db, migrations));  // idempotent
  EXPECT_EQ(scalar(*db, "SELECT count(*) FROM schema_version"), kLatest + 1);
}

TEST(StoreSchema, FromEveryEarlierVersionToTheLatest) {
  const auto migrations = with_fake_next_version();
  for (size_t start = 0; start < migrations.size(); ++start) {
    const auto path = test::temp_dir() / ("from" + std::to_string(start) + ".db");
    auto db = Database::open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(migrate(*db, std::span(migrations).first(start)));
    EXPECT_EQ(*schema_version(*db), static_cast<int>(start));
    ASSERT_TRUE(migrate(*db, migrations)) << "from version " << start;
    EXPECT_EQ(*schema_version(*db), kLatest + 1);
    EXPECT_EQ(scalar(*db, "SELECT count(*) FROM pragma_table_info('trials') WHERE name = 'note'"), 1);
  }
}

TEST(StoreSchema, ADatabaseNewerThanTheCodeIsRefused) {
  const auto path = test::temp_dir() / "r.db";
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(migrate(*db, with_fake_next_version()));
  }
  auto store = ResultsStore::open(path);
  ASSERT_FALSE(store);
  const std::string newer = "schema version " + std::to_string(kLatest + 1) + " is newer";
  EXPECT_NE(store.error().message.find(newer), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find(path.string()), std::string::npos) << store.error().message;
}

TEST(StoreSchema, AFailingMigrationLeavesThePreviousVersionWhole) {
  const auto path = test::temp_dir() / "r.db";
  auto db = Database::open(path);
  ASSERT_TRUE(db);
  std::vector<Migration> list(store_migrations().begin(), store_migrations().end());
  list.push_back(
      {kLatest + 1, "broken", "CREATE TABLE half_done (x INTEGER); ALTER TABLE no_such_table ADD COLUMN y TEXT;"});
  Status s = migrate(*db, list);
  ASSERT_FALSE(s);
  const std::string failed = "schema version " + std::to_string(kLatest + 1) + " (broken)";
  EXPECT_NE(s.error().message.find(failed), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("no_such_table"), std::string::npos) << s.error().message;
  EXPECT_EQ(*schema_version(*db), kLatest);
  EXPECT_FALSE(schema_objects(*db, "table").count("half_done"));
}

TEST(StoreSchema, MigrationListsWithGapsAreRefused) {
  auto db = Database::open(test::temp_dir() / "r.db");
  ASSERT_TRUE(db);
  const std::vector<Migration> gap = {{1, "one", "CREATE TABLE a (x)"}, {3, "three", "CREATE TABLE c (x)"}};
  EXPECT_FALSE(migrate(*db, gap));
  EXPECT_EQ(*schema_version(*db), 0);
}

}  // namespace
}  // namespace infertune
