#include "sweeps/store/migrations.h"

#include <climits>

#include "sweeps/store/sqlite_transaction.h"
#include "sweeps/store/time_text.h"

namespace infertune {
namespace {

constexpr std::string_view kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY,"
    " description TEXT NOT NULL,"
    " applied_at TEXT NOT NULL)";

Status check_sequence(std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return fail("results store: migration #{} has version {}; versions must run 1, 2, ... without gaps", i + 1,
                  migrations[i].version);
    }
  }
  return {};
}

Status apply(Database& db, const Migration& migration) {
  auto transaction = Transaction::begin_immediate(db);
  if (!transaction) return transaction.error();
  // Another process may have applied it while this one waited for the write lock.
  auto current = schema_version(db);
  if (!current) return current.error();
  if (*current >= migration.version) return {};
  if (Status s = db.exec(kCreateVersionTable); !s) return s;
  if (Status s = db.exec(migration.sql); !s) {
    return fail("migration to schema version {} ({}): {}", migration.version, migration.description, s.error().message);
  }
  auto record = db.prepare("INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)");
  if (!record) return record.error();
  record->bind(1, migration.version).bind(2, migration.description).bind(3, utc_now_text());
  if (Status s = record->run(); !s) return s;
  return transaction->commit();
}

}  // namespace

Result<int> schema_version(Database& db) {
  auto exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'");
  if (!exists) return exists.error();
  auto found = exists->step();
  if (!found) return found.error();
  if (!*found) return 0;
  auto query = db.prepare("SELECT coalesce(max(version), 0) FROM schema_version");
  if (!query) return query.error();
  auto row = query->step();
  if (!row) return row.error();
  // Versions run 1, 2, ... (0: none yet); one beyond int (a damaged or foreign file) must not be truncated
  // into a version this binary knows.
  const int64_t version = query->column_int(0);
  if (version < 0 || version > INT_MAX) {
    return fail("results store {}: schema_version records version {}, which no infertune writes", db.path().string(),
                version);
  }
  return static_cast<int>(version);
}

Status migrate(Database& db, std::span<const Migration> migrations) {
  if (Status s = check_sequence(migrations); !s) return s;
  auto current = schema_version(db);
  if (!current) return current.error();
  const int latest = static_cast<int>(migrations.size());
  if (*current > latest) {
    return fail(
        "results store {}: schema version {} is newer than this infertune understands ({}); use a newer "
        "infertune",
        db.path().string(), *current, latest);
  }
  for (const Migration& migration : migrations) {
    if (migration.version <= *current) continue;
    if (Status s = apply(db, migration); !s) return s;
  }
  return {};
}

}  // namespace infertune
