// `infertune history` end to end: the table, Markdown and JSON of a store with a regression, the filters,
// errors naming the file, and that the store is only read (its bytes unchanged, no file created beside it).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

#include "history_test_data.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

std::filesystem::path regression_db() {
  const auto db = temp_dir() / "results.db";
  auto store = ResultsStore::open(db);
  EXPECT_TRUE(store) << store.error().message;
  if (store) write_regression_store(*store);
  return db;
}

CommandResult history(const std::filesystem::path& db, const std::string& flags, bool with_stderr = true) {
  return run_command(infertune_binary() + " history --db " + db.string() + " " + flags +
                     (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::set<std::string> files_in(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in:\n" << text;
}

TEST(HistoryCli, TableShowsBuildsInTimeOrderAndTheRegression) {
  const auto db = regression_db();
  const auto r = history(db, "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "test.gguf tg32 -t 1 -tb 1 -c 4096 -b 512 -ub 256");
  expect_contains(r.output, "host aaaa000011112222 (Host A CPU), tg_tps (tokens/s, higher is better)");
  expect_contains(r.output, "time (UTC)");
  EXPECT_LT(r.output.find("c10000000000"), r.output.find("c20000000000")) << r.output;
  expect_contains(r.output, "2025-06-04 12:00:00  c40000000000  0.1.0    17.00");
  expect_contains(r.output, "-15.0%   << regression -15.0%");
  expect_contains(r.output, "change at c40000000000 (2025-06-04 12:00:00): 20.00 -> 17.00 tokens/s (-15.0%)");
  expect_contains(r.output, "2025-06-05 12:00:00  c50000000000  0.1.0    -  ");
  expect_contains(r.output, "  failed: exit status 1: synthetic failure\n");
  expect_contains(r.output, "1 change point (1 regression, 0 improvements) in 1 of 2 series");
}

TEST(HistoryCli, MarkdownTables) {
  const auto db = regression_db();
  const auto r = history(db, "-o md --metric ttft");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_contains(r.output, "### test.gguf tg32 -t 1");
  expect_contains(r.output, "| time (UTC) | commit | version | median | 95% CI | n | vs prev | change |");
  expect_contains(r.output, "ttft_ms (ms, lower is better)");
  expect_contains(r.output, "| **regression +20.0%** |");
  expect_contains(r.output, "| regression | +20.0% | test.gguf tg32 -t 1");
}

TEST(HistoryCli, JsonParsesBack) {
  const auto db = regression_db();
  const auto r = history(db, "-o json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.output;
  EXPECT_EQ(doc["min_change"], 0.03);
  ASSERT_EQ(doc["series"].size(), 2u);
  const nlohmann::json& s = doc["series"][0];
  EXPECT_EQ(s["metric"], "tg_tps");
  EXPECT_EQ(s["host"], kHostA);
  EXPECT_EQ(s["configuration_key"]["threads"], 1);
  ASSERT_EQ(s["points"].size(), 6u);
  EXPECT_EQ(s["points"][0]["median"], 20.0);
  EXPECT_TRUE(s["points"][0]["change_vs_previous"].is_null());
  EXPECT_EQ(s["points"][3]["change_point"], true);
  ASSERT_EQ(s["changes"].size(), 1u);
  EXPECT_EQ(s["changes"][0]["index"], 3);
  EXPECT_EQ(s["changes"][0]["direction"], "regression");
  EXPECT_EQ(s["changes"][0]["commit"], "c4" + std::string(38, '0'));
  EXPECT_EQ(doc["series"][1]["points"][4]["status"], "failed");
  EXPECT_TRUE(doc["series"][1]["points"][4]["median"].is_null());
  EXPECT_EQ(doc["summary"]["regressions"], 1);
}

TEST(HistoryCli, ChangesOnlyConfigAndMinChange) {
  const auto db = regression_db();
  auto r = history(db, "--changes-only -o json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_EQ(doc["series"].size(), 1u);
  EXPECT_EQ(doc["summary"]["hidden_series"], 1);

  r = history(db, "--config '-t 2 ' -o json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  doc = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_EQ(doc["series"].size(), 1u);
  EXPECT_EQ(doc["series"][0]["configuration_key"]["threads"], 2);

  r = history(db, "--min-change 20% -o json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  doc = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_EQ(doc["summary"]["changes"], 0) << "a 15% change is under a 20% minimum";
}

TEST(HistoryCli, StoreIsOnlyRead) {
  const auto db = regression_db();
  const auto before = read_file_bytes(db);
  const auto files_before = files_in(db.parent_path());
  for (const std::string flags : {"", "-o md", "-o json", "--metric ttft", "--config nothing"}) {
    history(db, flags);
  }
  EXPECT_EQ(read_file_bytes(db), before) << "history changed the store";
  // SQLite's readers of a WAL file may leave its shared-memory index and an empty WAL beside it; nothing
  // may be written to them.
  std::set<std::string> files_after = files_in(db.parent_path());
  files_after.erase("results.db-shm");
  EXPECT_EQ(files_after.erase("results.db-wal") ? std::filesystem::file_size(db.string() + "-wal") : 0u, 0u);
  EXPECT_EQ(files_after, files_before);
}

TEST(HistoryCli, ErrorsNameTheFile) {
  const auto dir = temp_dir();
  const auto missing = dir / "missing.db";
  auto r = history(missing, "");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "infertune history: ");
  expect_contains(r.output, "missing.db");
  EXPECT_FALSE(std::filesystem::exists(missing)) << "history must not create a store";

  const auto other = dir / "other.sqlite";
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(other.string().c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(handle, "CREATE TABLE notes (id INTEGER, text TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(handle);
  const auto other_bytes = read_file_bytes(other);
  r = history(other, "");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "other.sqlite: not an infertune results store");
  EXPECT_EQ(read_file_bytes(other), other_bytes);

  const auto empty = dir / "empty.db";
  ASSERT_TRUE(ResultsStore::open(empty));
  r = history(empty, "");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "empty.db: has no trials");

  const auto db = regression_db();
  r = history(db, "--config nothing");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  expect_contains(r.output, "no configuration matching --config 'nothing' has samples");
  expect_contains(r.output, "results.db");
}

TEST(HistoryCli, BadFlagsAreErrors) {
  const auto db = regression_db();
  for (const std::string flags : {"-o yaml", "--metric speed", "--min-change lots", "--min-change 150%"}) {
    const auto r = history(db, flags);
    EXPECT_EQ(r.exit_code, 1) << flags << ": " << r.output;
    expect_contains(r.output, flags.substr(0, flags.find(' ')));
  }
}

}  // namespace
}  // namespace infertune
