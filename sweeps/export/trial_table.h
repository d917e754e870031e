#pragma once
// The rows `infertune export` writes: the trial_summary view (schema.h), one row per trial, in a fixed
// column order. The column names are a stable interface (README, "export"): add columns at the end, never
// rename or drop one.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "kernels/result.h"
#include "sweeps/store/sqlite_database.h"

namespace infertune {

// A value as SQLite typed it; monostate is NULL.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // [rows][columns]
  std::vector<bool> json_columns;       // [columns]: the text is a JSON document (written as JSON, not a string)
};

// The exported columns, in order.
std::span<const char* const> trial_table_columns();

// Every trial, or the trials of one sweep (an error when no such sweep exists).
Result<Table> read_trial_table(Database& db, std::optional<int64_t> sweep_id);

}  // namespace infertune
