// `infertune bench` end to end on a fixture model: a real run (-p 16 -n 4 -r 2) whose samples, statistics
// and model figures are checked against independent computations (the GGUF tensor table, the raw
// samples); roofline % against a host probe planted in a private cache; error rows for what cannot run,
// with the rest still running; the exit status; and the sql output through the sqlite3 shell.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/probe/host_fingerprint.h"
#include "bench/probe/probe_cache.h"
#include "engine/gguf/gguf_file.h"
#include "probe_sample.h"
#include "test_support.h"

namespace infertune {
namespace {

const std::string kModel = test::fixture_path("models/fixture-llama-Q4_0.gguf").string();

class BenchCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test::infertune_binary())) GTEST_SKIP() << "the infertune binary is not built";
    dir_ = test::temp_dir();
  }
  // Runs bench with `flags`; stdout goes to a file (returned in `stdout_text`), stderr into the output.
  test::CommandResult bench(const std::string& flags, std::string& stdout_text, const std::string& env = "") {
    const auto out = dir_ / "stdout.txt";
    auto result =
        test::run_command("(" + env + " " + test::infertune_binary() + " bench " + flags + " > " + out.string() + ")");
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    stdout_text = text.str();
    return result;
  }
  std::filesystem::path dir_;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What a generated token reads, from the tensor table alone: every matrix of every layer, the output
// projection (token_embd when tied), and one row of token_embd.
uint64_t weight_bytes_per_token(const GgufFile& file) {
  uint64_t bytes = 0;
  const GgufTensorInfo* embd = file.find_tensor("token_embd.weight");
  for (const GgufTensorInfo& t : file.tensors()) {
    for (const char* suffix : {".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_output.weight",
                               ".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight"}) {
      if (t.name.rfind("blk.", 0) == 0 && t.name.ends_with(suffix)) bytes += t.n_bytes;
    }
  }
  const GgufTensorInfo* output = file.find_tensor("output.weight");
  bytes += output ? output->n_bytes : embd->n_bytes;
  return bytes + embd->n_bytes / embd->dims[1];
}

TEST_F(BenchCommand, RealRunOnTheFixtureModel) {
  std::string out;
  const auto result = bench("-m " + kModel + " -p 16 -n 4 -r 2 -t 1 --no-probe -o json", out);
  ASSERT_EQ(result.exit_code, 0) << result.output << out;
  const auto json = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << out;
  ASSERT_EQ(json.size(), 2u);

  auto file = GgufFile::open(kModel);
  ASSERT_TRUE(file);
  uint64_t tensor_bytes = 0, elements = 0;
  for (const GgufTensorInfo& t : file->tensors()) {
    tensor_bytes += t.n_bytes;
    elements += t.n_elements;
  }
  const char* names[] = {"pp16", "tg4"};
  const int tokens[] = {16, 4};
  for (size_t i = 0; i < 2; ++i) {
    const auto& row = json[i];
    EXPECT_EQ(row.at("test"), names[i]);
    EXPECT_TRUE(row.at("error").is_null()) << row.at("error");
    EXPECT_EQ(row.at("model_size"), tensor_bytes);
    EXPECT_EQ(row.at("model_n_params"), elements);
    EXPECT_EQ(row.at("model_type"), "llama ?B Q4_0");
    EXPECT_EQ(row.at("n_threads_used"), 1);
    EXPECT_EQ(row.at("weight_bytes_per_token"), weight_bytes_per_token(*file));
    EXPECT_FALSE(row.at("kernel").get<std::string>().empty());
    const auto samples = row.at("samples_ns").get<std::vector<uint64_t>>();
    ASSERT_EQ(samples.size(), 2u);
    double mean = 0;
    for (uint64_t ns : samples) {
      EXPECT_GT(ns, 0u);
      mean += tokens[i] * 1e9 / double(ns) / 2;
    }
    EXPECT_NEAR(row.at("avg_ts").get<double>(), mean, 1e-6 * mean);
    EXPECT_EQ(row.at("avg_ns"), std::llround((double(samples[0]) + double(samples[1])) / 2));
    EXPECT_TRUE(row.at("roofline_pct").is_null());  // --no-probe
    EXPECT_GT(row.at("gops").get<double>(), 0.0);
  }
}

TEST_F(BenchCommand, RooflineUsesTheProbesReadBandwidth) {
  auto live = read_host_topology();
  ASSERT_TRUE(live) << live.error().message;
  HostProbe probe = test::sample_probe();
  probe.host = live->info;
  probe.fingerprint = host_fingerprint(live->info);
  probe.measured_at_unix = std::time(nullptr);
  probe.bandwidth.read_all_cores.best = 10.0;  // GB/s
  // Figures for this host's GPUs (none without one): a probe missing a visible GPU is measured again.
  probe.gpus.clear();
  for (const GpuInfo& g : live->info.gpus)
    probe.gpus.push_back({g.index, g.name, g.pci_bus_id, 1000.0, 100.0, 8192, ""});
  ASSERT_TRUE(save_host_probe(probe_cache_file(dir_ / "infertune", probe.fingerprint), probe));

  std::string out;
  const auto result = bench("-m " + kModel + " -p 16 -n 4 -r 2 -o jsonl", out, "XDG_CACHE_HOME=" + dir_.string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.find("measuring"), std::string::npos) << "the planted probe was not used: " << result.output;
  const auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  const auto pp = nlohmann::json::parse(lines[0]);
  const auto tg = nlohmann::json::parse(lines[1]);
  EXPECT_TRUE(pp.at("roofline_pct").is_null());
  const double expected = 100.0 * tg.at("weight_bytes_per_token").get<double>() * tg.at("avg_ts").get<double>() / 10e9;
  EXPECT_NEAR(tg.at("roofline_pct").get<double>(), expected, 1e-9 * expected);
}

TEST_F(BenchCommand, CombinationsThatCannotRunGiveErrorRowsAndTheRestRuns) {
  std::string out;
  const auto result = bench(
      "-m " + kModel + ",/nonexistent/model.gguf -p 0 -n 2 -r 1 -ngl 0,1 -t 1,1024 --cpu-strict 1 --no-probe", out);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  const auto lines = lines_of(out);
  // Header, rule, 2 models x 2 ngl x 2 thread counts rows, blank line, build line. (A KV type the engine
  // lacks, -ctk q5_1, is now refused with the flags, as run and sweep refuse it.)
  ASSERT_EQ(lines.size(), 2u + 8u + 2u) << out;
  int ok = 0;
  for (size_t i = 2; i < 10; ++i) {
    if (lines[i].find("error: ") == std::string::npos) {
      ++ok;
      EXPECT_NE(lines[i].find("llama ?B Q4_0"), std::string::npos) << lines[i];
      EXPECT_NE(lines[i].find(" ± "), std::string::npos) << lines[i];
    }
  }
  EXPECT_EQ(ok, 1) << out;                                           // only the fixture with -ngl 0 and -t 1
  EXPECT_NE(out.find("error: -ngl 1: "), std::string::npos) << out;  // no GPU (or no CUDA) on a test machine
  EXPECT_NE(out.find("(use -ngl 0)"), std::string::npos) << out;
  EXPECT_NE(out.find("--cpu-strict 1 needs a CPU per thread"), std::string::npos) << out;
  EXPECT_NE(out.find("error: cannot load the model: "), std::string::npos) << out;
  EXPECT_NE(result.output.find("bench: error: tg2"), std::string::npos) << result.output;  // also on stderr
}

TEST_F(BenchCommand, ExitStatusIsNonZeroOnlyWhenEveryTestFailed) {
  std::string out;
  auto all_failed = bench("-m " + kModel + " -p 0 -n 2 -r 1 -ngl 1 --no-probe -o json", out);
  EXPECT_NE(all_failed.exit_code, 0);
  EXPECT_NE(all_failed.output.find("all 1 tests failed"), std::string::npos) << all_failed.output;
  const auto json = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << out;
  ASSERT_EQ(json.size(), 1u);
  EXPECT_NE(json[0].at("error").get<std::string>().find("-ngl 1"), std::string::npos);

  EXPECT_NE(bench("-m " + kModel + " -p x", out).exit_code, 0);
  EXPECT_NE(bench("-m " + kModel + " -p 0 -n 0 --no-probe", out).exit_code, 0);
  const auto bad_format = bench("-m " + kModel + " -o xml", out);
  EXPECT_NE(bad_format.exit_code, 0);
  EXPECT_NE(bad_format.output.find("-o: unknown format 'xml'"), std::string::npos) << bad_format.output;
}

TEST_F(BenchCommand, DepthBatchAndPlacementFlagsRun) {
  std::string out;
  const auto result = bench("-m " + kModel +
                                " -p 8 -n 2 -pg 4,2 -d 6 -b 3 -ub 2 -t 1 -C 0 --cpu-strict 1 --poll 0"
                                " -ctk q8_0 -ctv f32 -fa on,off -mmp 0 --no-warmup -r 2 --no-probe -o jsonl",
                            out);
  ASSERT_EQ(result.exit_code, 0) << result.output << out;
  const auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), 6u) << out;
  const char* names[] = {"pp8 @ d6", "tg2 @ d6", "pp4+tg2 @ d6"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto row = nlohmann::json::parse(lines[i]);
    EXPECT_TRUE(row.at("error").is_null()) << row.at("error");
    EXPECT_EQ(row.at("test"), names[i % 3]);
    EXPECT_EQ(row.at("flash_attn"), i < 3 ? 1 : 0);
    EXPECT_EQ(row.at("type_k"), "q8_0");
    EXPECT_EQ(row.at("use_mmap"), false);
    EXPECT_EQ(row.at("samples_ns").size(), 2u);
  }
}

// -sm, -mg and -ts reach the rows as llama-bench writes them ("3.00/1.00"; "0.00" for the default); a test
// asking for GPU layers without a GPU is an error row, the others run on the CPU.
TEST_F(BenchCommand, GpuSplitFlagsAreWrittenAsLlamaBenchWritesThem) {
  std::string out;
  const auto result =
      bench("-m " + kModel + " -p 8 -n 0 -r 1 -sm none,layer -mg 0 -ts 0,3/1 --no-warmup --no-probe -o jsonl", out);
  ASSERT_EQ(result.exit_code, 0) << result.output << out;
  const auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), 4u) << out;
  const char* splits[] = {"0.00", "3.00/1.00"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto row = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(row.at("split_mode"), i < 2 ? "none" : "layer") << i;
    EXPECT_EQ(row.at("main_gpu"), 0) << i;
    EXPECT_EQ(row.at("tensor_split"), splits[i % 2]) << i;
  }
}

TEST_F(BenchCommand, SqlOutputLoadsIntoSqlite3) {
  if (test::run_command("command -v sqlite3").exit_code != 0) GTEST_SKIP() << "the sqlite3 shell is not installed";
  std::string out;
  const auto result = bench("-m " + kModel + " -p 16 -n 4 -r 2 -ngl 0,1 --no-probe -o sql", out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ofstream(dir_ / "out.sql") << out;
  const std::string db = (dir_ / "bench.db").string();
  const auto loaded = test::run_command("sqlite3 " + db + " < " + (dir_ / "out.sql").string());
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output << out;
  const auto rows = test::run_command("sqlite3 " + db +
                                      " \"SELECT test || ':' || n_gpu_layers || ':' || (error IS NULL) || ':' || "
                                      "ifnull(avg_ts > 0, '-') FROM llama_bench ORDER BY rowid\"");
  EXPECT_EQ(rows.output, "pp16:0:1:1\ntg4:0:1:1\npp16:1:0:-\ntg4:1:0:-\n") << rows.output;
}

// -oe: the same rows a second time on stderr, in another format (llama-bench's -o csv -oe json).
TEST_F(BenchCommand, OutputErrWritesTheSameRowsOnStderr) {
  std::string out;
  const auto result = bench("-m " + kModel + " -p 8 -n 2 -r 1 -t 1 --no-probe -o csv -oe json", out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto json = nlohmann::json::parse(result.output, nullptr, false);  // stderr alone: stdout went to `out`
  ASSERT_TRUE(json.is_array()) << result.output;
  ASSERT_EQ(json.size(), 2u);
  const auto csv = lines_of(out);
  ASSERT_EQ(csv.size(), 3u) << out;
  for (size_t i = 0; i < 2; ++i) {
    const std::string avg_ns = "\"" + std::to_string(json[i].at("avg_ns").get<int64_t>()) + "\"";
    EXPECT_NE(csv[i + 1].find(avg_ns), std::string::npos) << "row " << i << " differs: " << csv[i + 1];
  }
}

// -v: the model's load, then per test the engine flags and a line per thread, on stderr; stdout unchanged.
TEST_F(BenchCommand, VerboseDescribesTheLoadAndEachTestOnStderr) {
  std::string out;
  const auto result = bench("-m " + kModel + " -p 8 -n 0 -r 1 -t 2 -b 64 --no-probe -o jsonl -v", out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("bench: loaded " + kModel + " in "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("llama ?B Q4_0"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("bench: pp8: engine flags: -t 2 -b 64 "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("bench: pp8: thread 1: CPU"), std::string::npos) << result.output;
  EXPECT_EQ(lines_of(out).size(), 1u) << out;
}

}  // namespace
}  // namespace infertune
