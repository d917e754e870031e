#pragma once
// A write transaction as a scope: BEGIN IMMEDIATE takes the database's write lock at once (waiting up to
// the busy timeout), so a transaction never fails half-way for lack of it; leaving the scope without
// commit() rolls everything back. A process killed inside the scope leaves nothing of it on disk.
#include <sqlite3.h>

#include "kernels/result.h"

namespace infertune {

class Database;

class Transaction {
 public:
  static Result<Transaction> begin_immediate(Database& db);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status commit();

 private:
  explicit Transaction(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;  // null once committed, rolled back or moved from
};

}  // namespace infertune
