#pragma once
// A prepared SQLite statement (RAII over sqlite3_stmt*) with typed binds and column reads. Parameters are
// numbered from 1, columns from 0, as in the C API. A failed bind is remembered and reported by the next
// step(), so a chain of binds needs one check.
#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::nullopt_t);
  template <std::integral T>
  Statement& bind(int index, T value) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      // SQLite integers are signed 64-bit; a larger value would silently wrap.
      if (value > static_cast<T>(INT64_MAX)) return bind_out_of_range(index);
    }
    return bind_int64(index, static_cast<int64_t>(value));
  }
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, std::nullopt);
  }

  // true: a row is available; false: the statement is done.
  Result<bool> step();
  // Steps to completion, discarding rows (INSERT, UPDATE, DDL).
  Status run();
  // Ready to run again with new binds.
  void reset();

  int64_t column_int(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;  // "" for NULL
  bool column_is_null(int column) const;
  std::optional<int64_t> column_optional_int(int column) const;
  std::optional<double> column_optional_double(int column) const;
  std::optional<std::string> column_optional_text(int column) const;
  int column_count() const;
  std::string column_name(int column) const;
  int column_type(int column) const;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL

  std::string sql() const;

 private:
  Statement& bind_int64(int index, int64_t value);
  Statement& bind_out_of_range(int index);
  Statement& check_bind(int rc, int index);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::optional<Error> bind_error_;
};

}  // namespace infertune
