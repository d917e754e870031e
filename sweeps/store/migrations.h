#pragma once
// Forward schema migrations. The `schema_version` table holds one row per applied migration; a database is
// at the highest version recorded there (0: a new, empty file). Each migration runs in its own
// BEGIN IMMEDIATE transaction together with the row that records it, so a crash leaves the database at the
// previous version or the next, never between, and two processes opening the same file migrate it once.
#include <span>
#include <string_view>

#include "kernels/result.h"
#include "sweeps/store/sqlite_database.h"

namespace infertune {

struct Migration {
  int version = 0;               // 1, 2, ... without gaps
  std::string_view description;  // recorded beside the version
  std::string_view sql;          // statements that take version - 1 to version
};

// The version recorded in `schema_version`; 0 when the table does not exist.
Result<int> schema_version(Database& db);

// Applies every migration newer than the database's version, in order. Errors when the database is newer
// than the last migration given (a newer infertune wrote it) or when the list has gaps.
Status migrate(Database& db, std::span<const Migration> migrations);

}  // namespace infertune
