// `infertune compare` end to end: stores compared (PASS, FAIL, unmatched configurations named, the three
// output formats), read-only opening (a file that is not a store, or of a newer schema, is refused and left
// byte-identical), bad input (exit status 4), --noise-from, and --bin with binaries that fail or print garbage.
// The ABBA self-test with the real engine is in compare_self_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compare_test_stores.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string compare(const std::string& args) { return test::infertune_binary() + " compare " + args; }

// Sweep 1 and 2: the same configurations, same speed (different noise). Sweep 3: 20% slower, and a
// configuration (-t 3) the others do not have, while -t 2 is missing.
std::filesystem::path write_runs(const std::filesystem::path& dir) {
  const auto path = dir / "runs.db";
  auto store = ResultsStore::open(path);
  EXPECT_TRUE(store);
  test::add_sweep(*store,
                  {{test::tg_config(1), test::noisy(100, 10, 1)}, {test::tg_config(2), test::noisy(180, 10, 2)}});
  test::add_sweep(*store,
                  {{test::tg_config(1), test::noisy(100, 10, 3)}, {test::tg_config(2), test::noisy(180, 10, 4)}});
  test::add_sweep(*store, {{test::tg_config(1), test::noisy(80, 10, 5)}, {test::tg_config(3), test::noisy(200, 10, 6)}},
                  "spec-b", "def456");
  return path;
}

TEST(CompareCli, AaStoresPass) {
  const auto dir = test::temp_dir();
  const auto db = write_runs(dir);
  const auto r = test::run_command(compare(db.string() + ":1 " + db.string() + ":2"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("overall: PASS (exit status 0)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("m.gguf tg32 -t 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Mann-Whitney"), std::string::npos) << r.output;
}

TEST(CompareCli, SlowerStoreFailsAndNamesUnmatchedConfigurations) {
  const auto dir = test::temp_dir();
  const auto db = write_runs(dir);
  const auto r = test::run_command(compare(db.string() + ":1 " + db.string() + " --metric tg --json " +
                                           (dir / "out.json").string() + " --markdown " + (dir / "out.md").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("-20.0%"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("m.gguf tg32 -t 2: only in the baseline"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("m.gguf tg32 -t 3: only in the candidate"), std::string::npos) << r.output;

  const nlohmann::json doc = nlohmann::json::parse(read_text(dir / "out.json"));
  EXPECT_EQ(doc["verdict"], "FAIL");
  EXPECT_EQ(doc["exit_status"], 2);
  ASSERT_EQ(doc["comparisons"].size(), 1u);
  const auto& row = doc["comparisons"][0];
  EXPECT_EQ(row["verdict"], "FAIL");
  EXPECT_EQ(row["metric"]["name"], "tg");
  EXPECT_NEAR(row["ratio"].get<double>(), 0.8, 0.02);
  EXPECT_LT(row["ratio_ci95"][0].get<double>(), row["ratio"].get<double>());
  EXPECT_GT(row["ratio_ci95"][1].get<double>(), row["ratio"].get<double>());
  EXPECT_LT(row["p_value"].get<double>(), 0.001);
  EXPECT_EQ(doc["unmatched"].size(), 2u);

  const std::string md = read_text(dir / "out.md");
  EXPECT_EQ(md.rfind("### ❌ infertune compare: **FAIL**", 0), 0u) << md;
  EXPECT_NE(md.find("| configuration | metric |"), std::string::npos) << md;
  EXPECT_NE(md.find("**Not compared**"), std::string::npos) << md;
  EXPECT_LT(md.find("geometric mean"), md.find("| configuration |")) << md;
}

TEST(CompareCli, OutputFormatsAreReproducible) {
  const auto dir = test::temp_dir();
  const auto db = write_runs(dir);
  const std::string args = db.string() + ":1 " + db.string() + ":2 -o json --output ";
  ASSERT_EQ(test::run_command(compare(args + (dir / "a.json").string())).exit_code, 0);
  ASSERT_EQ(test::run_command(compare(args + (dir / "b.json").string())).exit_code, 0);
  EXPECT_EQ(read_text(dir / "a.json"), read_text(dir / "b.json"));  // a fixed seed: the same intervals
  EXPECT_EQ(nlohmann::json::parse(read_text(dir / "a.json"))["verdict"], "PASS");
}

TEST(CompareCli, NonStoreFilesAreRefusedAndLeftByteIdentical) {
  const auto dir = test::temp_dir();
  const auto db = write_runs(dir);
  const auto other = dir / "other.db";
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(handle, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('keep me');", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(handle);
  const std::string before = read_text(other);
  auto r = test::run_command(compare(other.string() + " " + db.string()));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find(other.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not an infertune results store"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(other), before);
  EXPECT_FALSE(std::filesystem::exists(dir / "other.db-wal"));

  const auto text = dir / "notes.txt";
  std::ofstream(text) << "just text\n";
  r = test::run_command(compare(db.string() + " " + text.string()));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find(text.string()), std::string::npos) << r.output;
  EXPECT_EQ(read_text(text), "just text\n");
}

TEST(CompareCli, NewerSchemaIsRefused) {
  const auto dir = test::temp_dir();
  const auto db = write_runs(dir);
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(handle, "INSERT INTO schema_version (version, description, applied_at) VALUES (999, 'future', 'x')",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(handle);
  const auto r = test::run_command(compare(db.string() + ":1 " + db.string() + ":2"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("newer"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(db.string()), std::string::npos) << r.output;
}

TEST(CompareCli, BadInputExitsWithFour) {
  const auto dir = test::temp_dir();
  const auto db = write_runs(dir);
  const std::string sides = db.string() + ":1 " + db.string() + ":2";
  const std::vector<std::string> cases{sides + " --metric tg,speed",
                                       sides + " --threshold 120%",
                                       sides + " --threshold x",
                                       sides + " -o html",
                                       sides + " --frobnicate",
                                       db.string() + ":1",
                                       db.string() + ":1 " + (dir / "missing.db").string(),
                                       db.string() + ":1 " + db.string() + ":9",
                                       sides + " --threshold auto",
                                       "--bin /nonexistent/infertune --bin /bin/true -m x.gguf"};
  for (const std::string& args : cases) {
    const auto r = test::run_command(compare(args));
    EXPECT_EQ(r.exit_code, 4) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("infertune compare: "), std::string::npos) << args << "\n" << r.output;
  }
}

TEST(CompareCli, ThresholdsFromAaRuns) {
  const auto dir = test::temp_dir();
  const auto db = write_runs(dir);
  const auto r = test::run_command(compare(db.string() + ":1 " + db.string() + ":2 --noise-from " + db.string() +
                                           " --json " + (dir / "out.json").string()));
  // 10 repetitions with 1% noise against a threshold of about 1%: PASS or INCONCLUSIVE, never a failure.
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(read_text(dir / "out.json"));
  EXPECT_NE(doc["threshold_source"].get<std::string>().find("A/A runs in"), std::string::npos);
  // Sweeps 1 and 2 are one spec and build: their tg ratios are within a few percent, floored at 1%.
  const double tg = doc["threshold_pct"]["tg"].get<double>();
  EXPECT_GE(tg, 1.0);
  EXPECT_LT(tg, 3.0);
}

std::filesystem::path script(const std::filesystem::path& dir, const std::string& name, const std::string& body) {
  const auto path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST(CompareCli, BinaryPrintingGarbageOrFailingIsNamed) {
  const auto dir = test::temp_dir();
  const auto good = script(dir, "good-bench",
                           R"(echo '{"model_filename":"m.gguf","n_prompt":0,"n_gen":16,"samples_ts":[100,101,99]}')");
  const auto garbage = script(dir, "garbage-bench", "echo 'hello, I am not json'");
  const auto failing = script(dir, "failing-bench", "echo 'model not found' >&2; exit 3");
  auto r = test::run_command(compare("--bin " + good.string() + " --bin " + garbage.string() + " -m m.gguf -q"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("candidate binary " + garbage.string() + " (block 2 of 16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not a bench jsonl result"), std::string::npos) << r.output;
  r = test::run_command(compare("--bin " + failing.string() + " --bin " + good.string() + " -m m.gguf -q"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("baseline binary " + failing.string() + " (block 1 of 16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("status 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("model not found"), std::string::npos) << r.output;
}

TEST(CompareCli, BinariesAreRunInAbbaOrderWithTheirOwnEnvironment) {
  const auto dir = test::temp_dir();
  const auto log = dir / "order.log";
  // Each run appends its side (from the environment) to the log and reports 100 t/s.
  const auto bench =
      script(dir, "logging-bench",
             "echo \"$SIDE $*\" >> " + log.string() +
                 "\necho '{\"model_filename\":\"m.gguf\",\"n_prompt\":0,\"n_gen\":16,\"samples_ts\":[100,100,100]}'");
  const auto r = test::run_command(compare("--bin " + bench.string() + " --bin " + bench.string() +
                                           " --baseline-env SIDE=A --candidate-env SIDE=B --blocks 12 -m m.gguf -n 16 "
                                           "-t 1 -ngl 0 -q"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string expected_args = "bench --model m.gguf --n-gen 16 --threads 1 --n-gpu-layers 0 -o jsonl";
  std::string expected;
  for (char side : std::string("ABBAABBAABBA")) expected += std::string(1, side) + " " + expected_args + "\n";
  EXPECT_EQ(read_text(log), expected);
}

// llama-bench's rows (load_mode, no use_mmap, numa or prio) pair with bench's (all of them) when the tests are the
// same; a test whose parameters differ between the sides is named with the parameter in a note.
TEST(CompareCli, LlamaBenchRowsPairWithBenchRows) {
  const auto dir = test::temp_dir();
  const std::string common =
      R"("model_filename":"m.gguf","n_prompt":0,"n_gen":16,"n_threads":2,"samples_ts":[100,100,100])";
  const auto llama_bench = script(dir, "llama-bench", "echo '{" + common + R"(,"n_gpu_layers":0,"load_mode":"auto"}')");
  const auto bench =
      script(dir, "bench-binary", "echo '{" + common + R"(,"n_gpu_layers":0,"use_mmap":true,"numa":"none","prio":0}')");
  auto r = test::run_command(compare("--bin " + llama_bench.string() + " --bin " + bench.string() +
                                     " --blocks 4 -m m.gguf -n 16 -q --json " + (dir / "out.json").string()));
  auto doc = nlohmann::json::parse(read_text(dir / "out.json"), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  EXPECT_EQ(doc["comparisons"].size(), 1u) << r.output;
  EXPECT_TRUE(doc["unmatched"].empty()) << r.output;

  const auto gpu_default =
      script(dir, "llama-bench-ngl", "echo '{" + common + R"(,"n_gpu_layers":-1,"load_mode":"none"}')");
  r = test::run_command(compare("--bin " + gpu_default.string() + " --bin " + bench.string() +
                                " --blocks 4 -m m.gguf -n 16 -q --json " + (dir / "out.json").string()));
  doc = nlohmann::json::parse(read_text(dir / "out.json"), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  EXPECT_TRUE(doc["comparisons"].empty()) << r.output;
  ASSERT_EQ(doc["notes"].size(), 1u) << r.output;
  EXPECT_EQ(doc["notes"][0],
            "m.gguf tg16 ran with other parameters on each side (n_gpu_layers (-ngl) -1 vs 0, use_mmap (-mmp) false "
            "vs true: baseline vs candidate): give those flags to both to compare it");

  // A model file name that is not a string (a broken bench) is shown as it is, not thrown on.
  const auto odd_a =
      script(dir, "odd-a", R"(echo '{"model_filename":7,"n_prompt":0,"n_gen":16,"n_threads":1,"samples_ts":[1]}')");
  const auto odd_b =
      script(dir, "odd-b", R"(echo '{"model_filename":7,"n_prompt":0,"n_gen":16,"n_threads":2,"samples_ts":[1]}')");
  r = test::run_command(compare("--bin " + odd_a.string() + " --bin " + odd_b.string() +
                                " --blocks 4 -m m.gguf -n 16 -q --json " + (dir / "out.json").string()));
  doc = nlohmann::json::parse(read_text(dir / "out.json"), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  ASSERT_EQ(doc["notes"].size(), 1u) << r.output;
  EXPECT_THAT(doc["notes"][0].get<std::string>(), ::testing::StartsWith("7 tg16 ran with other parameters"))
      << r.output;
}

}  // namespace
}  // namespace infertune
