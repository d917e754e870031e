// CSV export against spreadsheet formula injection (OWASP "CSV injection"): a text cell that a spreadsheet
// would run as a formula gets a leading single quote; numbers, and text that cannot start a formula, are
// written unchanged; RFC 4180 quoting still applies to the neutralised text.
#include <gtest/gtest.h>

#include "sweeps/export/table_format.h"

namespace infertune {
namespace {

// The CSV data line of a one-column table holding `cell`.
std::string csv_line(Cell cell) {
  Table table;
  table.columns = {"value"};
  table.json_columns = {false};
  table.rows = {{std::move(cell)}};
  const std::string csv = format_csv(table);
  const std::string header = "value\n";
  EXPECT_EQ(csv.substr(0, header.size()), header) << csv;
  EXPECT_EQ(csv.back(), '\n') << csv;
  return csv.substr(header.size(), csv.size() - header.size() - 1);
}

TEST(ExportCsvInjection, FormulaTextIsPrefixedWithAQuote) {
  EXPECT_EQ(csv_line(std::string("=1+2")), "'=1+2");
  EXPECT_EQ(csv_line(std::string("+1")), "'+1");
  EXPECT_EQ(csv_line(std::string("@SUM(A1)")), "'@SUM(A1)");
  EXPECT_EQ(csv_line(std::string("-5")), "'-5");
  EXPECT_EQ(csv_line(std::string("\tx")), "'\tx");
}

TEST(ExportCsvInjection, NeutralisedTextIsStillQuotedAsRfc4180Requires) {
  EXPECT_EQ(csv_line(std::string("=HYPERLINK(\"http://x\",\"y\")")), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(csv_line(std::string("=A1,B1")), "\"'=A1,B1\"");
  // A leading CR is a formula start and a line break: both the quote prefix and RFC 4180 quoting.
  EXPECT_EQ(csv_line(std::string("\r=1")), "\"'\r=1\"");
}

TEST(ExportCsvInjection, NumbersStayNumbers) {
  EXPECT_EQ(csv_line(-5.0), "-5");
  EXPECT_EQ(csv_line(-2.5), "-2.5");
  EXPECT_EQ(csv_line(int64_t{-1}), "-1");
  EXPECT_EQ(csv_line(std::monostate{}), "");
}

TEST(ExportCsvInjection, OrdinaryTextIsUnchanged) {
  EXPECT_EQ(csv_line(std::string("/models/tiny q4.gguf")), "/models/tiny q4.gguf");
  EXPECT_EQ(csv_line(std::string("0-3,8")), "\"0-3,8\"");  // a dash inside is not a formula start
  EXPECT_EQ(csv_line(std::string("a=b")), "a=b");
  EXPECT_EQ(csv_line(std::string("'quoted")), "'quoted");
  EXPECT_EQ(csv_line(std::string("")), "");
}

}  // namespace
}  // namespace infertune
