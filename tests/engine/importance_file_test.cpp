// `infertune quantize --imatrix` (engine/quantize/importance_file.h, quantize_plan.h): both layouts read back to
// mean squares (GGUF sums / counts, .dat values / ncall), --include/--exclude-weights by substring, and every bad
// input refused with the file and what is wrong: missing, garbage, truncated, a GGUF without imatrix metadata,
// non-finite values, an entry whose length does not fit its tensor. (Byte equality with llama-quantize on a
// fixture: tests/engine/quantize_imatrix_check.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/quality/importance_matrix.h"
#include "engine/quantize/importance_file.h"
#include "engine/quantize/quantize_plan.h"
#include "test_support.h"

namespace infertune {
namespace {

void append_i32(std::string& out, int32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

// A legacy .dat file: one entry per (name, ncall, values), then the chunk count and dataset.
std::string dat_bytes(const std::vector<std::tuple<std::string, int32_t, std::vector<float>>>& entries) {
  std::string out;
  append_i32(out, static_cast<int32_t>(entries.size()));
  for (const auto& [name, ncall, values] : entries) {
    append_i32(out, static_cast<int32_t>(name.size()));
    out += name;
    append_i32(out, ncall);
    append_i32(out, static_cast<int32_t>(values.size()));
    out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  append_i32(out, 7);
  append_i32(out, 5);
  out += "a.txt";
  return out;
}

std::string write(const std::string& name, const std::string& bytes) {
  const std::string path = (test::temp_dir() / name).string();
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(ImportanceFile, LegacyDatValuesAreDividedByNcall) {
  const std::string path =
      write("m.dat", dat_bytes({{"blk.0.attn_q.weight", 2, {2, 4, 6, 8}}, {"blk.0.ffn_up.weight", 0, {3, 5}}}));
  auto file = load_importance_file(path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->entries.at("blk.0.attn_q.weight"), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(file->entries.at("blk.0.ffn_up.weight"), (std::vector<float>{3, 5}));  // ncall 0: as stored
  EXPECT_EQ(file->chunk_count, 7);
  EXPECT_EQ(file->datasets, (std::vector<std::string>{"a.txt"}));
}

TEST(ImportanceFile, GgufSumsAreDividedByTokenCounts) {
  ImportanceMatrix m;
  m.observe("blk.0.attn_q.weight", std::vector<float>{1, 2, 3, -1, 0, 2}, 2, 3);
  const std::string path = (test::temp_dir() / "m.gguf").string();
  ImportanceMatrix::Provenance provenance;
  provenance.datasets = {"text.txt"};
  provenance.chunk_count = 3;
  provenance.chunk_size = 64;
  ASSERT_TRUE(m.write_gguf(path, provenance).ok());
  auto file = load_importance_file(path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->entries.at("blk.0.attn_q.weight"), (std::vector<float>{1, 2, 6.5f}));
  EXPECT_EQ(file->chunk_count, 3);
  EXPECT_EQ(file->datasets, (std::vector<std::string>{"text.txt"}));
}

TEST(ImportanceFile, IncludeAndExcludeMatchSubstrings) {
  const std::string path = write(
      "m.dat",
      dat_bytes({{"blk.0.attn_q.weight", 1, {1}}, {"blk.0.ffn_up.weight", 1, {1}}, {"blk.1.ffn_down.weight", 1, {1}}}));
  auto file = load_importance_file(path);
  ASSERT_TRUE(file.ok());
  ImportanceFile excluded = *file;
  ASSERT_TRUE(select_importance(excluded, {}, {"ffn_"}).ok());
  EXPECT_EQ(excluded.entries.size(), 1u);
  EXPECT_TRUE(excluded.entries.count("blk.0.attn_q.weight"));
  ImportanceFile included = *file;
  ASSERT_TRUE(select_importance(included, {"blk.1.", "attn_q"}, {}).ok());
  EXPECT_EQ(included.entries.size(), 2u);
  EXPECT_FALSE(included.entries.count("blk.0.ffn_up.weight"));
}

TEST(ImportanceFile, BadFilesAreErrorsNamingTheFile) {
  const std::string missing = (test::temp_dir() / "absent.dat").string();
  auto r = load_importance_file(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(missing), std::string::npos) << r.error().message;

  const std::string garbage = write("garbage.dat", "this is not an importance matrix at all");
  r = load_importance_file(garbage);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(garbage), std::string::npos) << r.error().message;

  std::string whole = dat_bytes({{"blk.0.attn_q.weight", 1, {1, 2, 3, 4}}});
  const std::string truncated = write("truncated.dat", whole.substr(0, 30));
  r = load_importance_file(truncated);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("blk.0.attn_q.weight"), std::string::npos) << r.error().message;

  // A model file is GGUF but not an importance matrix.
  const std::string model = test::fixture_path("models/fixture-llama-f32.gguf").string();
  r = load_importance_file(model);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("imatrix"), std::string::npos) << r.error().message;
}

TEST(ImportanceFile, NonFiniteValuesAreRefused) {
  const std::string path = write("nan.dat", dat_bytes({{"blk.0.attn_q.weight", 1, {1, NAN}}}));
  auto file = load_importance_file(path);
  ASSERT_TRUE(file.ok());
  const Status s = select_importance(*file, {}, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("blk.0.attn_q.weight"), std::string::npos) << s.error().message;
  ASSERT_TRUE(select_importance(*file, {}, {"attn_q"}).ok());  // excluded entries are not checked
}

TEST(ImportanceFile, PlanAttachesEntriesAndRefusesOnesThatDoNotFit) {
  auto model = GgufFile::open(test::fixture_path("models/fixture-llama-f32.gguf").string());
  ASSERT_TRUE(model.ok());
  ImportanceFile importance;
  importance.path = "m.gguf";
  importance.entries["blk.0.attn_q.weight"] = std::vector<float>(256, 1.0f);
  importance.entries["token_embd.weight"] = std::vector<float>(3, 1.0f);  // wrong, but llama-quantize lets it pass
  QuantizeOptions options;
  options.file_type = *quantize_file_type("Q4_K_M");
  options.importance = &importance;
  auto plan = plan_quantization(*model, options);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  for (const TensorPlan& p : *plan) {
    if (p.source->name == "blk.0.attn_q.weight") {
      EXPECT_EQ(p.importance.size(), 256u);
    } else if (p.source->name == "token_embd.weight" || p.source->name == "blk.1.attn_q.weight") {
      EXPECT_TRUE(p.importance.empty() && p.missing_importance) << p.source->name;
    }
  }

  importance.entries["blk.0.attn_q.weight"] = std::vector<float>(100, 1.0f);
  plan = plan_quantization(*model, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("m.gguf"), std::string::npos) << plan.error().message;
  EXPECT_NE(plan.error().message.find("blk.0.attn_q.weight"), std::string::npos) << plan.error().message;
  EXPECT_NE(plan.error().message.find("100"), std::string::npos) << plan.error().message;
}

}  // namespace
}  // namespace infertune
