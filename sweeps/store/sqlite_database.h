#pragma once
// A connection to one SQLite database file (RAII over sqlite3*), opened the way the results store needs it
// (DESIGN.md, "Results store"): WAL journal, synchronous=FULL, a busy timeout, foreign keys enforced.
// Every error names the database file and the SQL that failed.
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "kernels/result.h"
#include "sweeps/store/sqlite_statement.h"

namespace infertune {

struct DatabaseOptions {
  bool create = true;           // create the file when it does not exist (otherwise that is an error)
  bool read_only = false;       // SQLITE_OPEN_READONLY: nothing, not even the journal mode, is written
  int busy_timeout_ms = 10000;  // how long a writer waits for another process's write lock
};

class Database {
 public:
  static Result<Database> open(const std::filesystem::path& path, const DatabaseOptions& options = {});

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more statements that return no rows (schema text, pragmas, BEGIN/COMMIT).
  Status exec(std::string_view sql);
  // Compiles one statement (text after the first statement is an error: it would be silently ignored).
  Result<Statement> prepare(std::string_view sql);

  // A private in-memory copy of this database (SQLite's backup API), writable, that still names this
  // file in its messages: what a reader migrates when the file's schema is older than the binary's.
  Result<Database> copy_to_memory();

  int64_t last_insert_rowid() const;
  const std::filesystem::path& path() const { return path_; }
  sqlite3* handle() { return db_; }

 private:
  Database(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  Status configure(const DatabaseOptions& options);

  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

// The file a connection reads: SQLite's name for it, or for an in-memory copy (Database::copy_to_memory) the file
// it was copied from.
std::string database_file(sqlite3* db);

// "results store FILE: WHAT: SQLITE_MESSAGE (SQL: ...)" for the connection's most recent error.
Error sqlite_error(sqlite3* db, std::string_view what, std::string_view sql);

}  // namespace infertune
