// `infertune sweep --base-model B --quant-types ...` end to end: a synthetic base says plainly that quality
// figures would not be meaningful and stores none (a not_meaningful row), and recommend does not apply a
// quality budget to its variants; a real base has each variant scored once, stored with the trials.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/quality/corpus.h"
#include "engine/synth/presets.h"
#include "sweeps/store/results_store.h"
#include "sweeps/trial/model_variants.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

std::string sweep_line(const fs::path& dir, const std::string& base, const std::string& types,
                       const std::string& more_flags = "") {
  return test::infertune_binary() + " sweep --base-model " + base + " --quant-types " + types + more_flags +
         " -p 16 -t 1 --min-reps 1 --max-reps 1 --no-warmup --db " + (dir / "r.db").string() + " --cache-dir " +
         (dir / "cache").string() + " 2>&1";
}

std::vector<VariantQualityRecord> quality_rows(const fs::path& db) {
  auto store = ResultsStore::open_read_only(db);
  EXPECT_TRUE(store) << store.error().message;
  if (!store) return {};
  auto rows = store->variant_quality(1);
  EXPECT_TRUE(rows) << rows.error().message;
  return rows ? *rows : std::vector<VariantQualityRecord>{};
}

TEST(SweepQuality, ASyntheticBaseSaysQualityIsNotMeaningful) {
  const fs::path dir = test::temp_dir();
  const fs::path tiny = dir / "tiny.gguf";
  const SynthRequest request{.config = find_synth_preset("tiny")->config,
                             .preset = "tiny",
                             .file_type = *file_type_from_name("f16"),
                             .mix = {}};
  ASSERT_TRUE(synthesize_once(request, tiny));
  const auto r = test::run_command(sweep_line(dir, tiny.string(), "q8_0,q4_0"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quality: not measured: the base model " + tiny.string() + " is synthetic"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("random weights"), std::string::npos) << r.output;
  const auto rows = quality_rows(dir / "r.db");
  ASSERT_EQ(rows.size(), 2u);
  for (const VariantQualityRecord& q : rows) {
    EXPECT_EQ(q.status, QualityStatus::not_meaningful);
    EXPECT_FALSE(q.ppl);
  }
  const auto rec = test::run_command(test::infertune_binary() + " recommend --db " + (dir / "r.db").string() +
                                     " --max-quality-loss 1% 2>&1");
  EXPECT_EQ(rec.exit_code, 0) << rec.output;
  EXPECT_NE(rec.output.find("--max-quality-loss 1% not applied to 2 configurations"), std::string::npos) << rec.output;
  EXPECT_EQ(rec.output.find("Excluded"), std::string::npos) << rec.output;
}

TEST(SweepQuality, ARealBasesVariantsAreScoredOnceEach) {
  if (!corpus_text("python-tutorial")) GTEST_SKIP() << "the python-tutorial corpus (Debian's python3-doc) is absent";
  const fs::path dir = test::temp_dir();
  const std::string base = test::fixture_path("models/fixture-llama-f32.gguf").string();
  const auto r = test::run_command(sweep_line(dir, base, "q8_0,q4_0"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quality: q8_0: PPL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("quality: q4_0: PPL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PPL vs base"), std::string::npos) << r.output;  // the closing recommendation
  const auto rows = quality_rows(dir / "r.db");
  ASSERT_EQ(rows.size(), 2u);
  for (const VariantQualityRecord& q : rows) {
    EXPECT_EQ(q.status, QualityStatus::measured) << q.reason;
    EXPECT_TRUE(q.ppl && q.base_ppl && q.kld_mean);
    EXPECT_TRUE(q.base_model_id);
  }
  // Once per variant: a second sweep reads the cached figures. Its spec's quality budget (q4_0's KLD is
  // about 0.08 on this fixture, q8_0's under 0.001) applies to the recommendation it prints.
  const auto again = test::run_command(sweep_line(dir, base, "q8_0,q4_0", " --max-kld 0.01"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("(cached)"), std::string::npos) << again.output;
  EXPECT_EQ(again.output.find("scoring the base"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("exceeds --max-kld 0.01"), std::string::npos) << again.output;
  const auto csv = test::run_command(test::infertune_binary() + " export --db " + (dir / "r.db").string() +
                                     " --sweep 1 --format csv 2>&1");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find("ppl_increase_pct"), std::string::npos) << csv.output;
}

}  // namespace
}  // namespace infertune
