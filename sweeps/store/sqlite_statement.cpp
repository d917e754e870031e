#include "sweeps/store/sqlite_statement.h"

#include <utility>

#include "sweeps/store/sqlite_database.h"

namespace infertune {

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK && !bind_error_)
    bind_error_ = sqlite_error(db_, fmt::format("cannot bind parameter {}", index), sql());
  return *this;
}

Statement& Statement::bind_int64(int index, int64_t value) {
  return check_bind(sqlite3_bind_int64(stmt_, index, value), index);
}

Statement& Statement::bind_out_of_range(int index) {
  if (!bind_error_) {
    bind_error_ = fail("results store {}: parameter {} does not fit a signed 64-bit integer (SQL: {})",
                       database_file(db_), index, sql());
  }
  return *this;
}

Statement& Statement::bind(int index, double value) {
  return check_bind(sqlite3_bind_double(stmt_, index, value), index);
}

Statement& Statement::bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies the text, so the caller's buffer may go away before step().
  return check_bind(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
}

Statement& Statement::bind(int index, std::nullopt_t) { return check_bind(sqlite3_bind_null(stmt_, index), index); }

Result<bool> Statement::step() {
  if (bind_error_) return *bind_error_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_error(db_, "statement failed", sql());
}

Status Statement::run() {
  for (;;) {
    auto row = step();
    if (!row) return row.error();
    if (!*row) return {};
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_.reset();
}

int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}

bool Statement::column_is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::optional<int64_t> Statement::column_optional_int(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_int(column);
}

std::optional<double> Statement::column_optional_double(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_double(column);
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (column_is_null(column)) return std::nullopt;
  return column_text(column);
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }

std::string Statement::column_name(int column) const {
  const char* name = sqlite3_column_name(stmt_, column);
  return name ? name : "";
}

int Statement::column_type(int column) const { return sqlite3_column_type(stmt_, column); }

std::string Statement::sql() const {
  const char* text = stmt_ ? sqlite3_sql(stmt_) : nullptr;
  return text ? text : "";
}

}  // namespace infertune
