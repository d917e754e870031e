// Commands that only read a store (export, recommend, report, compare, history) open it with
// ResultsStore::open_read_only: the file is never changed — not a byte, not its journal mode — and a file
// that is not an infertune store, or is newer than this binary, is refused with its name.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "store_test_data.h"
#include "sweeps/store/migrations.h"
#include "sweeps/store/schema.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void make_other_database(const std::filesystem::path& path) {
  auto db = Database::open(path);
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("PRAGMA journal_mode=DELETE; CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('x');"));
}

TEST(StoreReadOnly, ReadsAStoreWithoutChangingIt) {
  const auto path = test::temp_dir() / "results.db";
  int64_t sweep = 0;
  {
    auto store = test::store_with_sweep(path, sweep);
    ASSERT_TRUE(store.record_trial(test::test_trial(sweep, 1)));
  }
  const std::string before = read_text(path);
  auto store = ResultsStore::open_read_only(path);
  ASSERT_TRUE(store) << store.error().message;
  auto trials = store->trials(sweep);
  ASSERT_TRUE(trials);
  EXPECT_EQ(trials->size(), 1u);
  // A write through it fails instead of changing the file.
  EXPECT_FALSE(store->create_sweep({"x", "y", 1, 1, ""}));
  EXPECT_EQ(read_text(path), before);
}

TEST(StoreReadOnly, AnOlderSchemaIsMigratedInMemoryOnly) {
  const auto path = test::temp_dir() / "v1.db";
  {
    auto db = Database::open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(migrate(*db, store_migrations().first(1)));
  }
  const std::string before = read_text(path);
  auto store = ResultsStore::open_read_only(path);
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ(*schema_version(store->database()), store_schema_version());
  auto version_on_disk = Database::open(path, {.create = false, .read_only = true});
  ASSERT_TRUE(version_on_disk);
  EXPECT_EQ(*schema_version(*version_on_disk), 1);
  EXPECT_EQ(read_text(path), before);
}

TEST(StoreReadOnly, RefusesWhatIsNotAStoreNamingTheFile) {
  const auto dir = test::temp_dir();
  const auto empty = dir / "empty.db";
  std::ofstream(empty).close();
  auto e = ResultsStore::open_read_only(empty);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("empty.db"), std::string::npos);
  EXPECT_NE(e.error().message.find("not an infertune results store"), std::string::npos) << e.error().message;
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);

  const auto other = dir / "other.db";
  make_other_database(other);
  const std::string before = read_text(other);
  auto o = ResultsStore::open_read_only(other);
  ASSERT_FALSE(o);
  EXPECT_NE(o.error().message.find("other.db"), std::string::npos);
  EXPECT_NE(o.error().message.find("notes"), std::string::npos) << o.error().message;
  EXPECT_EQ(read_text(other), before);

  const auto text = dir / "notes.txt";
  std::ofstream(text) << "just some text, long enough to look like a header of something else entirely\n";
  auto t = ResultsStore::open_read_only(text);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("notes.txt"), std::string::npos) << t.error().message;

  auto missing = ResultsStore::open_read_only(dir / "missing.db");
  ASSERT_FALSE(missing);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing.db"));
}

TEST(StoreReadOnly, ANewerSchemaIsRefused) {
  const auto path = test::temp_dir() / "future.db";
  {
    auto store = ResultsStore::open(path);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->database().exec(
        "INSERT INTO schema_version (version, description, applied_at) VALUES (99, 'future', 'now')"));
  }
  auto store = ResultsStore::open_read_only(path);
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find("future.db"), std::string::npos);
}

// A schema_version row beyond int (a damaged file) was truncated to a version this binary knows: 2^32 + 5
// read as 5, the latest, and the file was read as a current store.
TEST(StoreReadOnly, AVersionBeyondIntIsRefusedNotTruncated) {
  const auto path = test::temp_dir() / "huge.db";
  {
    auto store = ResultsStore::open(path);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->database().exec(
        "INSERT INTO schema_version (version, description, applied_at) VALUES (4294967301, 'damaged', 'now')"));
  }
  auto store = ResultsStore::open_read_only(path);
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message.find("4294967301"), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find("huge.db"), std::string::npos) << store.error().message;
  EXPECT_FALSE(ResultsStore::open(path));
}

// An older file is migrated in an in-memory copy, which SQLite knows by no file name: its errors (here a
// migration that fails on a damaged schema, then a read of the migrated copy) still name the file.
// Found by results_store_fuzz: in this store the sweeps table's leaf page is damaged (a cell overwritten), and
// SQLite answers "WHERE id = 0" with sweep 1, without an error. find_sweep refused nothing and gave sweep 1 as 0.
TEST(StoreReadOnly, ALookupADamagedTreeAnswersWithAnotherRowIsAnError) {
  const auto path = test::temp_dir() / "damaged-sweeps-page.db";
  std::filesystem::copy_file(std::filesystem::path(__FILE__).parent_path() / "data" / "store-damaged-sweeps-page.db",
                             path, std::filesystem::copy_options::overwrite_existing);
  const std::string before = read_text(path);
  {
    auto store = ResultsStore::open_read_only(path);
    ASSERT_TRUE(store) << store.error().message;
    auto sweep = store->find_sweep(0);
    ASSERT_FALSE(sweep) << "sweep 0 read as sweep " << (*sweep ? std::to_string((*sweep)->id) : "none");
    EXPECT_NE(sweep.error().message.find("is damaged: looking up sweep 0 found sweep 1"), std::string::npos)
        << sweep.error().message;
    EXPECT_NE(sweep.error().message.find(path.string()), std::string::npos) << sweep.error().message;
    for (int64_t id : {1, 2, 3}) {
      auto other = store->find_sweep(id);
      if (other && *other) {
        EXPECT_EQ((*other)->id, id);
      }
    }
  }
  EXPECT_EQ(read_text(path), before);
}

TEST(StoreReadOnly, TheInMemoryCopyNamesTheFileInItsErrors) {
  const auto dir = test::temp_dir();
  const auto damaged = dir / "v4-with-shard.db";
  {
    auto db = Database::open(damaged);
    ASSERT_TRUE(db);
    ASSERT_TRUE(migrate(*db, store_migrations().first(4)));
    ASSERT_TRUE(db->exec("ALTER TABLE sweeps ADD COLUMN shard TEXT"));  // what migration 5 adds
  }
  auto refused = ResultsStore::open_read_only(damaged);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("migration to schema version 5"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find(damaged.string()), std::string::npos) << refused.error().message;

  const auto old = dir / "v1.db";
  {
    auto db = Database::open(old);
    ASSERT_TRUE(db);
    ASSERT_TRUE(migrate(*db, store_migrations().first(1)));
  }
  auto store = ResultsStore::open_read_only(old);
  ASSERT_TRUE(store) << store.error().message;
  Status s = store->database().exec("SELECT * FROM no_such_table");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(old.string()), std::string::npos) << s.error().message;
}

// The commands as a user meets them: export on a 0-byte file, recommend on another application's database.
TEST(StoreReadOnly, ExportAndRecommendLeaveForeignFilesAlone) {
  const auto dir = test::temp_dir();
  const auto empty = dir / "empty.db";
  std::ofstream(empty).close();
  const auto e = test::run_command(test::infertune_binary() + " export --db " + empty.string() + " 2>&1");
  EXPECT_EQ(e.exit_code, 1) << e.output;
  EXPECT_NE(e.output.find("empty.db"), std::string::npos) << e.output;
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);

  const auto other = dir / "other.db";
  make_other_database(other);
  const std::string before = read_text(other);
  const auto r = test::run_command(test::infertune_binary() + " recommend --db " + other.string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not an infertune results store"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(other), before);
  EXPECT_FALSE(std::filesystem::exists(other.string() + "-wal"));
}

}  // namespace
}  // namespace infertune
