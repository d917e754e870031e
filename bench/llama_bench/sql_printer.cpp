// sql: CREATE TABLE IF NOT EXISTS llama_bench (the fields of result_fields.h, TEXT / INTEGER / REAL), then
// one INSERT per test, so `infertune bench -o sql | sqlite3 results.db` appends to a table across runs.
// Raw samples are in the json output, not here (as in llama-bench).
#include <fmt/format.h>

#include "bench/llama_bench/printer.h"
#include "bench/llama_bench/result_fields.h"

namespace infertune {
namespace {

constexpr const char* kTable = "llama_bench";

const char* sql_type(FieldKind kind) {
  switch (kind) {
    case FieldKind::integer:
    case FieldKind::boolean:
      return "INTEGER";
    case FieldKind::real:
      return "REAL";
    case FieldKind::text:
      break;
  }
  return "TEXT";
}

// A literal: NULL, a bare number, or a string in single quotes with quotes doubled.
std::string sql_literal(const FieldValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "NULL";
  if (const auto* text = std::get_if<std::string>(&value)) {
    std::string out = "'";
    for (char c : *text) {
      if (c == '\'') out += '\'';
      out += c;
    }
    out += '\'';
    return out;
  }
  return field_text(value);
}

class SqlPrinter : public ResultPrinter {
 public:
  SqlPrinter(std::FILE* out, const RunInfo& run) : ResultPrinter(out), run_(run) {}

  void header() override {
    const std::vector<Field> fields = result_field_names();
    fmt::print(out_, "CREATE TABLE IF NOT EXISTS {} (\n", kTable);
    for (size_t i = 0; i < fields.size(); ++i) {
      fmt::print(out_, "  {} {}{}\n", fields[i].name, sql_type(fields[i].kind), i + 1 < fields.size() ? "," : "");
    }
    fmt::print(out_, ");\n\n");
  }

  void row(const BenchResult& result) override {
    std::string names;
    std::string values;
    for (const Field& f : result_fields(result, run_)) {
      if (!names.empty()) {
        names += ", ";
        values += ", ";
      }
      names += f.name;
      values += sql_literal(f.value);
    }
    fmt::print(out_, "INSERT INTO {} ({}) VALUES ({});\n", kTable, names, values);
    std::fflush(out_);
  }

 private:
  const RunInfo& run_;
};

}  // namespace

std::unique_ptr<ResultPrinter> make_sql_printer(std::FILE* out, const RunInfo& run) {
  return std::make_unique<SqlPrinter>(out, run);
}

}  // namespace infertune
