// Every output format of bench on hand-made results: one measured pp row, one measured tg row and one
// error row. The figures are recomputed here from the raw samples (mean and n-1 stddev of tokens/s,
// roofline and GOP/s from their definitions) rather than trusted.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "bench/llama_bench/printer.h"
#include "bench/llama_bench/roofline.h"
#include "test_support.h"

namespace infertune {
namespace {

constexpr double kBandwidthGbps = 50.0;  // all cores; one core reads 30
const ReadBandwidth kBandwidth{30.0, kBandwidthGbps, {}};

ModelFacts facts() {
  ModelFacts m;
  m.type = "llama 1B Q4_K - Medium";
  m.size_bytes = 807'000'000;
  m.n_params = 1'235'814'400;
  m.kernel = "avx2";
  m.weight_bytes_per_token = 760'000'000;
  m.layer_weight_elements = 973'000'000;
  m.output_weight_elements = 262'000'000;
  return m;
}

BenchResult pp_row() {
  BenchResult r;
  r.test.model = "it's.gguf";  // a quote, for csv and sql escaping
  r.test.n_prompt = 128;
  r.test.settings.context.n_batch = 64;  // two prompt pieces
  r.test.settings.placement.threads = 2;
  r.model = facts();
  r.threads_used = 2;
  r.test_time = "2026-01-02T03:04:05Z";
  r.samples_ns = {1'000'000'000, 2'000'000'000, 1'600'000'000};
  r.gemm = "auto(onednn 5/7 shapes)";
  return r;
}

BenchResult tg_row() {
  BenchResult r = pp_row();
  r.test.n_prompt = 0;
  r.test.n_gen = 32;
  r.test.n_depth = 512;
  r.samples_ns = {2'000'000'000, 2'500'000'000};
  r.gemm = "";  // as for a quantized model: no float-weight products
  return r;
}

BenchResult error_row() {
  BenchResult r;
  r.test.model = "missing.gguf";
  r.test.n_gen = 32;
  r.test_time = "2026-01-02T03:04:06Z";
  r.error = "cannot load the model: missing.gguf: No such file | or directory";
  return r;
}

RunInfo run_info() {
  RunInfo run;
  run.build_commit = "abc1234";
  run.build_number = 1234;
  run.default_threads = 6;
  run.cpu_info = "Test CPU";
  run.backends = "CPU";
  run.read_bandwidth = kBandwidth;
  return run;
}

// Independent statistics: tokens/s of each sample, mean, and sample (n - 1) standard deviation.
std::pair<double, double> ts_stats(const std::vector<uint64_t>& ns, int tokens) {
  double sum = 0;
  for (uint64_t t : ns) sum += tokens * 1e9 / double(t);
  const double mean = sum / double(ns.size());
  double sq = 0;
  for (uint64_t t : ns) sq += std::pow(tokens * 1e9 / double(t) - mean, 2);
  return {mean, ns.size() > 1 ? std::sqrt(sq / double(ns.size() - 1)) : 0.0};
}

std::string print(OutputFormat format, const std::vector<BenchResult>& rows, BenchParams params = {}) {
  params.output = format;
  const RunInfo run = run_info();
  std::FILE* file = std::tmpfile();
  {
    auto printer = make_printer(file, params.output, params, run);
    printer->header();
    for (const BenchResult& r : rows) printer->row(r);
    printer->footer();
  }
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  std::fclose(file);
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A csv line split into its values (every value quoted, quotes doubled).
// The trimmed cells of a markdown row ("| a | b |"); an escaped "\\|" stays inside its cell.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|' && line[i - 1] != '\\') {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

std::vector<std::string> csv_values(const std::string& line) {
  std::vector<std::string> values;
  std::string value;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        value += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        value += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      values.push_back(value);
      value.clear();
    } else {
      value += c;
    }
  }
  values.push_back(value);
  return values;
}

TEST(BenchOutput, DerivedFiguresFollowTheirDefinitions) {
  const BenchResult tg = tg_row();
  const auto [mean, sd] = ts_stats(tg.samples_ns, 32);
  EXPECT_DOUBLE_EQ(avg_ts(tg), mean);
  EXPECT_NEAR(stddev_ts(tg), sd, 1e-9);
  EXPECT_EQ(avg_ns(tg), 2'250'000'000u);
  EXPECT_EQ(stddev_ns(tg), static_cast<uint64_t>(std::llround(std::sqrt(2 * 250'000'000.0 * 250'000'000.0))));
  auto roofline = roofline_percent(tg, kBandwidth);  // 2 threads: both cores' 50 GB/s, not 2 x 30
  ASSERT_TRUE(roofline);
  EXPECT_NEAR(*roofline, 100.0 * 760e6 * mean / 50e9, 1e-9);
  EXPECT_FALSE(roofline_percent(tg, std::nullopt));
  BenchResult one_thread = tg;
  one_thread.threads_used = 1;  // one core's figure
  EXPECT_NEAR(*roofline_percent(one_thread, kBandwidth), 100.0 * 760e6 * mean / 30e9, 1e-9);

  // -ngl: against the GPU's (-mg) measured bandwidth; without its figure, none.
  BenchResult offloaded = tg;
  offloaded.test.settings.n_gpu_layers = 99;
  offloaded.test.settings.main_gpu = 1;
  const ReadBandwidth with_gpus{30.0, kBandwidthGbps, {3000.0, 900.0}};
  EXPECT_NEAR(*roofline_percent(offloaded, with_gpus), 100.0 * 760e6 * mean / 900e9, 1e-9);
  EXPECT_NEAR(*roofline_percent(tg, with_gpus), 100.0 * 760e6 * mean / 50e9, 1e-9);  // -ngl 0: the host's
  EXPECT_FALSE(roofline_percent(offloaded, ReadBandwidth{30.0, kBandwidthGbps, {3000.0, 0.0}}));
  offloaded.test.settings.main_gpu = 2;
  EXPECT_FALSE(roofline_percent(offloaded, with_gpus));
  // No GPU at all (-ngl auto on a CPU-only host runs on the CPU): the host's figure.
  EXPECT_NEAR(*roofline_percent(offloaded, kBandwidth), 100.0 * 760e6 * mean / 50e9, 1e-9);

  const BenchResult pp = pp_row();
  EXPECT_FALSE(roofline_percent(pp, kBandwidth));  // pp rows report GOP/s only
  // Every layer matrix for 128 tokens, the output projection for the last token of each of 2 pieces.
  const double ops = 2.0 * (973e6 * 128 + 262e6 * 2);
  EXPECT_DOUBLE_EQ(weight_ops_per_run(facts(), pp.test), ops);
  auto gops = achieved_gops(pp);
  ASSERT_TRUE(gops);
  EXPECT_NEAR(*gops, (ops / 1e9 + ops / 2e9 + ops / 1.6e9) / 3, 1e-9);
  EXPECT_FALSE(achieved_gops(error_row()));
}

TEST(BenchOutput, MarkdownIsLlamaBenchsTableWithErrorRows) {
  const std::string text = print(OutputFormat::markdown, {pp_row(), tg_row(), error_row()});
  const auto lines = lines_of(text);
  ASSERT_GE(lines.size(), 5u) << text;
  std::vector<std::string> columns;  // the header's cells, trimmed; parameters left at their default get none
  for (size_t start = 1; start < lines[0].size();) {
    const size_t end = lines[0].find('|', start);
    std::string cell = lines[0].substr(start, end - start);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    columns.push_back(cell);
    start = end + 1;
  }
  EXPECT_EQ(columns, std::vector<std::string>({"model", "size", "params", "backend", "threads", "kernel", "gemm",
                                               "test", "t/s", "roofline %", "GOP/s"}));
  EXPECT_EQ(lines[1].rfind("| ---", 0), 0u);
  // Every row of the table as wide as the header (in code points: "±" is one).
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(code_points(lines[i]), code_points(lines[0])) << lines[i];

  const auto [pp_mean, pp_sd] = ts_stats(pp_row().samples_ns, 128);
  EXPECT_NE(lines[2].find(fmt::format("{:.2f} ± {:.2f}", pp_mean, pp_sd)), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("pp128"), std::string::npos);
  EXPECT_NE(lines[2].find("llama 1B Q4_K - Medium"), std::string::npos);
  EXPECT_NE(lines[2].find(fmt::format("{:.2f} MiB", 807e6 / (1 << 20))), std::string::npos);
  EXPECT_NE(lines[2].find("1.24 B"), std::string::npos);
  EXPECT_NE(lines[3].find("tg32 @ d512"), std::string::npos);
  const auto [tg_mean, tg_sd] = ts_stats(tg_row().samples_ns, 32);
  EXPECT_NE(lines[3].find(fmt::format("{:.1f}", 100.0 * 760e6 * tg_mean / 50e9)), std::string::npos) << lines[3];
  // The error row: its message, with the '|' escaped so the row keeps its columns.
  EXPECT_NE(lines[4].find("missing.gguf"), std::string::npos);
  EXPECT_NE(lines[4].find("error: cannot load the model: missing.gguf: No such file \\| or directory"),
            std::string::npos)
      << lines[4];
  EXPECT_NE(text.find("\nbuild: abc1234\n"), std::string::npos);
  // gemm: what the row's float-weight products ran on, "-" for none.
  const size_t gemm = static_cast<size_t>(std::find(columns.begin(), columns.end(), "gemm") - columns.begin());
  EXPECT_EQ(cells_of(lines[2]).at(gemm), "auto(onednn 5/7 shapes)") << lines[2];
  EXPECT_EQ(cells_of(lines[3]).at(gemm), "-") << lines[3];
  EXPECT_EQ(cells_of(lines[4]).at(gemm), "-") << lines[4];
}

TEST(BenchOutput, MarkdownShowsParametersThatWereVaried) {
  BenchParams params;
  params.settings["batch_size"] = {"64", "128"};
  params.settings["cache_type_k"] = {"q8_0"};
  params.settings["n_gpu_layers"] = {"0", "1"};
  const std::string header = lines_of(print(OutputFormat::markdown, {pp_row()}, params))[0];
  EXPECT_NE(header.find("| n_batch"), std::string::npos) << header;
  EXPECT_NE(header.find("| type_k"), std::string::npos) << header;
  EXPECT_NE(header.find("| ngl"), std::string::npos) << header;
  EXPECT_EQ(header.find("| type_v"), std::string::npos) << header;
}

TEST(BenchOutput, CsvHasOneHeaderAndOneQuotedRowPerTest) {
  const auto lines = lines_of(print(OutputFormat::csv, {pp_row(), tg_row(), error_row()}));
  ASSERT_EQ(lines.size(), 4u);
  const std::vector<std::string> header = csv_values(lines[0]);
  EXPECT_EQ(header.front(), "build_commit");
  EXPECT_EQ(header.back(), "error");
  auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  for (const char* name : {"model_filename", "model_type", "model_size", "n_threads", "avg_ns", "avg_ts", "stddev_ts",
                           "test", "kernel", "gemm", "n_threads_used", "roofline_pct", "gops"}) {
    EXPECT_LT(column(name), header.size()) << name;
  }
  const std::vector<std::string> pp = csv_values(lines[1]);
  const std::vector<std::string> error = csv_values(lines[3]);
  ASSERT_EQ(pp.size(), header.size());
  ASSERT_EQ(error.size(), header.size());
  EXPECT_EQ(pp[column("model_filename")], "it's.gguf");
  EXPECT_EQ(pp[column("model_size")], "807000000");
  EXPECT_EQ(pp[column("test")], "pp128");
  EXPECT_NEAR(std::stod(pp[column("avg_ts")]), ts_stats(pp_row().samples_ns, 128).first, 1e-5);
  EXPECT_EQ(pp[column("roofline_pct")], "");
  EXPECT_EQ(pp[column("error")], "");
  EXPECT_EQ(error[column("avg_ts")], "");
  EXPECT_EQ(error[column("error")], error_row().error);
  EXPECT_EQ(pp[column("gemm")], "auto(onednn 5/7 shapes)");
  EXPECT_EQ(csv_values(lines[2])[column("gemm")], "");
  EXPECT_EQ(error[column("gemm")], "");
}

TEST(BenchOutput, JsonHasEveryRawSample) {
  const std::string text = print(OutputFormat::json, {pp_row(), tg_row(), error_row()});
  const auto json = nlohmann::json::parse(text, nullptr, false);
  ASSERT_TRUE(json.is_array()) << text;
  ASSERT_EQ(json.size(), 3u);
  const auto& pp = json[0];
  EXPECT_EQ(pp.at("samples_ns"), nlohmann::json(pp_row().samples_ns));
  ASSERT_EQ(pp.at("samples_ts").size(), 3u);
  EXPECT_DOUBLE_EQ(pp.at("samples_ts")[0].get<double>(), 128.0);
  EXPECT_DOUBLE_EQ(pp.at("avg_ts").get<double>(), ts_stats(pp_row().samples_ns, 128).first);
  EXPECT_EQ(pp.at("n_prompt"), 128);
  EXPECT_EQ(pp.at("n_gen"), 0);
  EXPECT_EQ(pp.at("model_type"), "llama 1B Q4_K - Medium");
  EXPECT_EQ(pp.at("cpu_strict"), false);
  EXPECT_EQ(pp.at("flash_attn"), -1);
  EXPECT_TRUE(pp.at("roofline_pct").is_null());
  EXPECT_TRUE(pp.at("error").is_null());
  EXPECT_TRUE(json[1].at("roofline_pct").is_number());
  EXPECT_EQ(json[1].at("n_depth"), 512);
  EXPECT_EQ(pp.at("gemm"), "auto(onednn 5/7 shapes)");
  EXPECT_TRUE(json[1].at("gemm").is_null());
  const auto& error = json[2];
  EXPECT_EQ(error.at("error"), error_row().error);
  EXPECT_TRUE(error.at("avg_ts").is_null());
  EXPECT_TRUE(error.at("model_type").is_null());
  EXPECT_EQ(error.at("samples_ns"), nlohmann::json::array());

  // No rows: still an array.
  EXPECT_EQ(nlohmann::json::parse(print(OutputFormat::json, {})), nlohmann::json::array());
}

// llama-bench's fields and their JSON kinds (tools/llama-bench/llama-bench.cpp, llama-cpp-python 0.3.36's source):
// its readers, llama.cpp's compare-llama-bench.py among them, need every one. The live comparison with a built
// llama-bench is tests/bench/llama_bench_fields_check.py.
TEST(BenchOutput, JsonStartsWithEveryFieldOfLlamaBenchInItsOrder) {
  using T = nlohmann::json::value_t;
  const std::vector<std::pair<std::string, T>> llama_bench = {{"build_commit", T::string},
                                                              {"build_number", T::number_integer},
                                                              {"cpu_info", T::string},
                                                              {"gpu_info", T::string},
                                                              {"backends", T::string},
                                                              {"model_filename", T::string},
                                                              {"model_type", T::string},
                                                              {"model_size", T::number_integer},
                                                              {"model_n_params", T::number_integer},
                                                              {"n_batch", T::number_integer},
                                                              {"n_ubatch", T::number_integer},
                                                              {"n_threads", T::number_integer},
                                                              {"cpu_mask", T::string},
                                                              {"cpu_strict", T::boolean},
                                                              {"poll", T::number_integer},
                                                              {"type_k", T::string},
                                                              {"type_v", T::string},
                                                              {"n_gpu_layers", T::number_integer},
                                                              {"n_cpu_moe", T::number_integer},
                                                              {"split_mode", T::string},
                                                              {"main_gpu", T::number_integer},
                                                              {"no_kv_offload", T::boolean},
                                                              {"flash_attn", T::number_integer},
                                                              {"devices", T::string},
                                                              {"tensor_split", T::string},
                                                              {"tensor_buft_overrides", T::string},
                                                              {"load_mode", T::string},
                                                              {"lazy_mode", T::string},
                                                              {"embeddings", T::boolean},
                                                              {"no_op_offload", T::number_integer},
                                                              {"no_host", T::boolean},
                                                              {"repack", T::boolean},
                                                              {"fit_target", T::number_integer},
                                                              {"fit_min_ctx", T::number_integer},
                                                              {"n_prompt", T::number_integer},
                                                              {"n_gen", T::number_integer},
                                                              {"n_depth", T::number_integer},
                                                              {"test_time", T::string},
                                                              {"avg_ns", T::number_integer},
                                                              {"stddev_ns", T::number_integer},
                                                              {"avg_ts", T::number_float},
                                                              {"stddev_ts", T::number_float}};
  const auto json = nlohmann::ordered_json::parse(print(OutputFormat::json, {pp_row()}));
  const auto& row = json.at(0);
  ASSERT_GE(row.size(), llama_bench.size());
  auto it = row.begin();
  for (const auto& [name, type] : llama_bench) {
    EXPECT_EQ(it.key(), name);
    // nlohmann reads a non-negative integer as unsigned: the kind, not the sign, is what readers depend on.
    const auto got = it.value().type() == nlohmann::json::value_t::number_unsigned
                         ? nlohmann::json::value_t::number_integer
                         : it.value().type();
    EXPECT_EQ(got, type) << name << " = " << it.value().dump();
    ++it;
  }
  EXPECT_EQ(row.at("build_number"), 1234);
  EXPECT_EQ(row.at("n_threads"), 2);  // -t 2 as given
  EXPECT_EQ(row.at("load_mode"), "auto");
  EXPECT_EQ(row.at("no_kv_offload"), false);
}

TEST(BenchOutput, DefaultThreadsArePrintedAsTheCountThatRuns) {
  BenchResult r = pp_row();
  r.test.settings.placement.threads = 0;  // -t absent
  BenchResult no_mmap = r;
  no_mmap.test.settings.use_mmap = false;
  no_mmap.test.settings.kv_offload = false;
  const auto json = nlohmann::json::parse(print(OutputFormat::json, {r, no_mmap}));
  EXPECT_EQ(json[0].at("n_threads"), 6);  // run_info()'s default_threads, as llama-bench prints its default
  EXPECT_EQ(json[1].at("load_mode"), "none");
  EXPECT_EQ(json[1].at("use_mmap"), false);
  EXPECT_EQ(json[1].at("no_kv_offload"), true);
}

TEST(BenchOutput, JsonlIsOneObjectPerLine) {
  const auto lines = lines_of(print(OutputFormat::jsonl, {pp_row(), error_row()}));
  ASSERT_EQ(lines.size(), 2u);
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first.at("samples_ns"), nlohmann::json(pp_row().samples_ns));
  EXPECT_EQ(nlohmann::json::parse(lines[1]).at("error"), error_row().error);
  EXPECT_EQ(first.at("gemm"), "auto(onednn 5/7 shapes)");
  EXPECT_TRUE(nlohmann::json::parse(lines[1]).at("gemm").is_null());
}

TEST(BenchOutput, SqlIsAcceptedBySqlite3) {
  const std::string sql = print(OutputFormat::sql, {pp_row(), tg_row(), error_row()});
  EXPECT_EQ(sql.rfind("CREATE TABLE IF NOT EXISTS llama_bench (", 0), 0u);
  if (test::run_command("command -v sqlite3").exit_code != 0) GTEST_SKIP() << "the sqlite3 shell is not installed";
  const auto dir = test::temp_dir();
  std::ofstream(dir / "out.sql") << sql << sql;  // twice: CREATE TABLE IF NOT EXISTS appends
  const std::string db = (dir / "bench.db").string();
  const auto loaded = test::run_command("sqlite3 " + db + " < " + (dir / "out.sql").string());
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  const auto rows = test::run_command("sqlite3 -separator '|' " + db +
                                      " \"SELECT test, model_filename, n_prompt, typeof(avg_ts), CASE WHEN avg_ts IS "
                                      "NULL THEN '' ELSE printf('%.4f', avg_ts) END, error IS NULL FROM "
                                      "llama_bench ORDER BY rowid LIMIT 3\"");
  ASSERT_EQ(rows.exit_code, 0) << rows.output;
  const auto lines = lines_of(rows.output);
  ASSERT_EQ(lines.size(), 3u) << rows.output;
  EXPECT_EQ(lines[0], fmt::format("pp128|it's.gguf|128|real|{:.4f}|1", ts_stats(pp_row().samples_ns, 128).first));
  EXPECT_EQ(lines[1].rfind("tg32 @ d512|it's.gguf|0|real|", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2], "tg32|missing.gguf|0|null||0");
  const auto count = test::run_command("sqlite3 " + db + " \"SELECT count(*), count(error) FROM llama_bench\"");
  EXPECT_EQ(count.output, "6|2\n");
  const auto gemm =
      test::run_command("sqlite3 " + db + " \"SELECT coalesce(gemm, 'NULL') FROM llama_bench ORDER BY rowid LIMIT 3\"");
  EXPECT_EQ(gemm.output, "auto(onednn 5/7 shapes)\nNULL\nNULL\n");
}

}  // namespace
}  // namespace infertune
