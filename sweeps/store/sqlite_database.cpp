#include "sweeps/store/sqlite_database.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <utility>

namespace infertune {
namespace {

// SQLite names no file for an in-memory database: the file each in-memory copy (copy_to_memory) was made
// from, by connection, so that the copy's errors (a failed migration, a damaged row) still name it.
std::mutex copy_files_mutex;
std::map<sqlite3*, std::string>& copy_files() {
  static std::map<sqlite3*, std::string> files;
  return files;
}

void close_connection(sqlite3* db) {
  if (db) {
    std::lock_guard lock(copy_files_mutex);
    copy_files().erase(db);
  }
  sqlite3_close_v2(db);
}

// The value a pragma query returns, e.g. "wal" for journal_mode.
Result<std::string> pragma_value(Database& db, std::string_view sql) {
  auto statement = db.prepare(sql);
  if (!statement) return statement.error();
  auto row = statement->step();
  if (!row) return row.error();
  if (!*row) return std::string();
  return statement->column_text(0);
}

}  // namespace

std::string database_file(sqlite3* db) {
  const char* name = db ? sqlite3_db_filename(db, "main") : nullptr;
  if (name && *name) return name;
  if (db) {
    std::lock_guard lock(copy_files_mutex);
    if (auto it = copy_files().find(db); it != copy_files().end()) return it->second;
  }
  return "(unknown file)";
}

Error sqlite_error(sqlite3* db, std::string_view what, std::string_view sql) {
  const char* message = db ? sqlite3_errmsg(db) : "out of memory";
  if (sql.empty()) return fail("results store {}: {}: {}", database_file(db), what, message);
  return fail("results store {}: {}: {} (SQL: {})", database_file(db), what, message, sql);
}

Result<Database> Database::open(const std::filesystem::path& path, const DatabaseOptions& options) {
  std::error_code ignored;
  if (!options.create && !std::filesystem::exists(path, ignored)) {
    return fail("results store {}: no such file", path.string());
  }
  sqlite3* db = nullptr;
  const int flags =
      options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error error =
        fail("results store {}: cannot open: {}", path.string(), db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return error;
  }
  sqlite3_extended_result_codes(db, 1);
  Database database(db, path);
  if (Status s = database.configure(options); !s) return s.error();
  return database;
}

// A file that is not a database is only noticed by the first statement, so this also validates the file.
Status Database::configure(const DatabaseOptions& options) {
  if (sqlite3_busy_timeout(db_, options.busy_timeout_ms) != SQLITE_OK) {
    return sqlite_error(db_, "cannot set the busy timeout", "");
  }
  // A reader leaves the file as it found it (a WAL file stays WAL, a rollback-journal file stays so).
  if (options.read_only) return exec("PRAGMA query_only=ON;");
  auto mode = pragma_value(*this, "PRAGMA journal_mode=WAL");
  if (!mode) return mode.error();
  if (*mode != "wal") {
    return fail(
        "results store {}: the WAL journal is unavailable here (journal_mode is '{}'); a network "
        "file system cannot hold the store",
        path_.string(), *mode);
  }
  return exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
}

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close_connection(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() { close_connection(db_); }

Status Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);  // the same text sqlite3_errmsg reports
  if (rc != SQLITE_OK) return sqlite_error(db_, "statement failed", sql);
  return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) return sqlite_error(db_, "cannot prepare", sql);
  Statement statement(db_, stmt);
  const std::string_view rest = sql.substr(static_cast<size_t>(tail - sql.data()));
  if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    return fail("results store {}: more than one statement given to prepare (SQL: {})", database_file(db_), sql);
  }
  if (!stmt) return fail("results store {}: no statement to prepare (SQL: '{}')", database_file(db_), sql);
  return statement;
}

Result<Database> Database::copy_to_memory() {
  sqlite3* memory = nullptr;
  if (sqlite3_open_v2(":memory:", &memory, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(memory);
    return fail("results store {}: cannot open an in-memory copy", path_.string());
  }
  Database copy(memory, path_);
  {
    std::lock_guard lock(copy_files_mutex);
    copy_files()[memory] = path_.string();
  }
  sqlite3_backup* backup = sqlite3_backup_init(memory, "main", db_, "main");
  if (!backup) return sqlite_error(memory, "cannot copy into memory", "");
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE)
    return fail("results store {}: cannot copy into memory: {}", path_.string(), sqlite3_errstr(rc));
  if (Status s = copy.exec("PRAGMA foreign_keys=ON;"); !s) return s.error();
  return copy;
}

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

}  // namespace infertune
