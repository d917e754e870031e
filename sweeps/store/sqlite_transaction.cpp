#include "sweeps/store/sqlite_transaction.h"

#include <utility>

#include "sweeps/store/sqlite_database.h"

namespace infertune {

Result<Transaction> Transaction::begin_immediate(Database& db) {
  if (Status s = db.exec("BEGIN IMMEDIATE"); !s) return s.error();
  return Transaction(db.handle());
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  // SQLite may already have rolled back on its own (a full disk, an I/O error): then autocommit is back on.
  if (db_ && sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::commit() {
  if (!db_) return fail("results store: commit of a transaction that is no longer open");
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Error error = sqlite_error(db_, "commit failed", "COMMIT");
    return error;  // the destructor rolls back what is left
  }
  db_ = nullptr;
  return {};
}

}  // namespace infertune
