// The SQLite wrapper: how a connection is configured, typed binds, transactions, and errors that name the
// database file and the SQL.
#include <gtest/gtest.h>

#include <fstream>

#include "sweeps/store/sqlite_database.h"
#include "sweeps/store/sqlite_transaction.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string pragma(Database& db, const std::string& name) {
  auto s = db.prepare("PRAGMA " + name);
  EXPECT_TRUE(s) << s.error().message;
  auto row = s->step();
  EXPECT_TRUE(row && *row);
  return s->column_text(0);
}

int64_t count(Database& db, const std::string& table) {
  auto s = db.prepare("SELECT count(*) FROM " + table);
  EXPECT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->step());
  return s->column_int(0);
}

TEST(Sqlite, OpenConfiguresWalFullSyncForeignKeysAndBusyTimeout) {
  const auto path = test::temp_dir() / "a.db";
  auto db = Database::open(path, {.busy_timeout_ms = 1234});
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(pragma(*db, "journal_mode"), "wal");
  EXPECT_EQ(pragma(*db, "synchronous"), "2");  // FULL
  EXPECT_EQ(pragma(*db, "foreign_keys"), "1");
  EXPECT_EQ(pragma(*db, "busy_timeout"), "1234");
}

TEST(Sqlite, MissingFileWithoutCreateIsAnErrorNamingIt) {
  const auto path = test::temp_dir() / "absent.db";
  auto db = Database::open(path, {.create = false});
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find(path.string()), std::string::npos) << db.error().message;
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Sqlite, AFileThatIsNotADatabaseIsRefused) {
  const auto path = test::temp_dir() / "text.db";
  std::ofstream(path) << "this is not an SQLite database, just a long enough line of text to look like a header\n";
  auto db = Database::open(path);
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find(path.string()), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("not a database"), std::string::npos) << db.error().message;
}

TEST(Sqlite, ErrorsNameTheFileAndTheSql) {
  const auto path = test::temp_dir() / "a.db";
  auto db = Database::open(path);
  ASSERT_TRUE(db);
  auto bad = db->prepare("SELECT nonsense FROM nowhere");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find(path.string()), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("SELECT nonsense FROM nowhere"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("no such table"), std::string::npos) << bad.error().message;

  ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER NOT NULL)"));
  auto insert = db->prepare("INSERT INTO t (x) VALUES (?)");
  ASSERT_TRUE(insert);
  insert->bind(1, std::nullopt);
  Status s = insert->run();
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("NOT NULL"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("INSERT INTO t"), std::string::npos) << s.error().message;
}

TEST(Sqlite, PrepareRefusesASecondStatement) {
  auto db = Database::open(test::temp_dir() / "a.db");
  ASSERT_TRUE(db);
  EXPECT_FALSE(db->prepare("SELECT 1; SELECT 2"));
  EXPECT_TRUE(db->prepare("SELECT 1;  "));
}

TEST(Sqlite, TypedBindsRoundTrip) {
  auto db = Database::open(test::temp_dir() / "a.db");
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, n INTEGER)"));
  auto insert = db->prepare("INSERT INTO t VALUES (?, ?, ?, ?)");
  ASSERT_TRUE(insert);
  const std::string text = std::string("with\0nul", 8);
  insert->bind(1, int64_t{-9007199254740993}).bind(2, 0.1).bind(3, text).bind(4, std::optional<int>());
  ASSERT_TRUE(insert->run());
  insert->reset();
  insert->bind(1, 7u).bind(2, std::optional<double>(2.5)).bind(3, "plain").bind(4, true);
  ASSERT_TRUE(insert->run());

  auto query = db->prepare("SELECT i, r, s, n, typeof(n) FROM t ORDER BY rowid");
  ASSERT_TRUE(query);
  ASSERT_TRUE(*query->step());
  EXPECT_EQ(query->column_int(0), -9007199254740993);
  EXPECT_EQ(query->column_double(1), 0.1);
  EXPECT_EQ(query->column_text(2), text);
  EXPECT_FALSE(query->column_optional_int(3));
  EXPECT_EQ(query->column_text(4), "null");
  ASSERT_TRUE(*query->step());
  EXPECT_EQ(query->column_int(0), 7);
  EXPECT_EQ(query->column_optional_double(1), 2.5);
  EXPECT_EQ(query->column_text(2), "plain");
  EXPECT_EQ(query->column_optional_int(3), 1);
  EXPECT_FALSE(*query->step());
}

TEST(Sqlite, UnsignedValuesBeyondInt64AreRefusedNotWrapped) {
  auto db = Database::open(test::temp_dir() / "a.db");
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (i INTEGER)"));
  auto insert = db->prepare("INSERT INTO t VALUES (?)");
  ASSERT_TRUE(insert);
  insert->bind(1, uint64_t{1} << 63);
  Status s = insert->run();
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("parameter 1"), std::string::npos) << s.error().message;
  EXPECT_EQ(count(*db, "t"), 0);
}

TEST(Sqlite, TransactionRollsBackUnlessCommitted) {
  auto db = Database::open(test::temp_dir() / "a.db");
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER)"));
  {
    auto transaction = Transaction::begin_immediate(*db);
    ASSERT_TRUE(transaction) << transaction.error().message;
    ASSERT_TRUE(db->exec("INSERT INTO t VALUES (1)"));
    EXPECT_EQ(count(*db, "t"), 1);  // visible inside the transaction
  }
  EXPECT_EQ(count(*db, "t"), 0);
  {
    auto transaction = Transaction::begin_immediate(*db);
    ASSERT_TRUE(transaction);
    ASSERT_TRUE(db->exec("INSERT INTO t VALUES (2)"));
    ASSERT_TRUE(transaction->commit());
    EXPECT_FALSE(transaction->commit());  // once only
  }
  EXPECT_EQ(count(*db, "t"), 1);
}

TEST(Sqlite, ImmediateTransactionWaitsForAnotherWriterThenReportsBusy) {
  const auto path = test::temp_dir() / "a.db";
  auto first = Database::open(path);
  auto second = Database::open(path, {.busy_timeout_ms = 50});
  ASSERT_TRUE(first && second);
  auto holding = Transaction::begin_immediate(*first);
  ASSERT_TRUE(holding);
  auto waiting = Transaction::begin_immediate(*second);
  ASSERT_FALSE(waiting);
  EXPECT_NE(waiting.error().message.find("locked"), std::string::npos) << waiting.error().message;
  EXPECT_NE(waiting.error().message.find("BEGIN IMMEDIATE"), std::string::npos) << waiting.error().message;
}

TEST(Sqlite, ReadersSeeTheLastCommitWhileAWriteIsOpen) {
  const auto path = test::temp_dir() / "a.db";
  auto writer = Database::open(path);
  auto reader = Database::open(path);
  ASSERT_TRUE(writer && reader);
  ASSERT_TRUE(writer->exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)"));
  auto transaction = Transaction::begin_immediate(*writer);
  ASSERT_TRUE(transaction);
  ASSERT_TRUE(writer->exec("INSERT INTO t VALUES (2)"));
  EXPECT_EQ(count(*reader, "t"), 1);  // WAL: no reader blocks, none sees uncommitted rows
  ASSERT_TRUE(transaction->commit());
  EXPECT_EQ(count(*reader, "t"), 2);
}

}  // namespace
}  // namespace infertune
