// A variant's quality against its base (sweeps/quality): perplexity and KL divergence on the corpus, the base's
// log-probabilities computed once for every variant, each variant's figures measured once and then read from
// the cache. A small corpus of our own (under a test root) keeps it independent of the installed python3-doc.
#include <gtest/gtest.h>

#include <fstream>

#include "sweeps/quality/variant_quality.h"
#include "sweeps/store/stable_hash.h"
#include "sweeps/trial/model_variants.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

const std::string kBase = test::fixture_path("models/fixture-llama-f32.gguf").string();

// A python-tutorial corpus under `root`: enough English prose for two chunks of 64 tokens and more.
QualityMethod test_method(const fs::path& root) {
  const fs::path tutorial = root / "usr/share/doc/python3.11/html/_sources/tutorial";
  fs::create_directories(tutorial);
  std::ofstream out(tutorial / "intro.rst.txt");
  for (int i = 0; i < 20; ++i) {
    out << "Python is an easy to learn, powerful programming language. It has efficient high-level data "
           "structures and a simple but effective approach to object-oriented programming. Section "
        << i << " shows how the interpreter reads a line, runs it and prints the result.\n\n";
  }
  QualityMethod method;
  method.n_ctx = 64;
  method.n_chunks = 2;
  method.corpus_root = root.string();
  return method;
}

size_t files_ending(const fs::path& dir, const std::string& suffix) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().string().ends_with(suffix);
  return n;
}

TEST(QualityMeasure, EachVariantOnceAndTheBaseOnce) {
  const fs::path dir = test::temp_dir();
  const fs::path cache = dir / "models";
  const QualityMethod method = test_method(dir / "root");
  const std::string hash = *file_content_hash(kBase);
  auto q8 = produce_variant(kBase, "q8_0", cache);
  auto q4 = produce_variant(kBase, "q4_0", cache);
  ASSERT_TRUE(q8 && q4);

  auto first = measure_variant_quality(kBase, hash, q8->path, method, cache);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->from_cache);
  EXPECT_FALSE(first->base_from_cache);
  const QualityFigures& a = first->figures;
  EXPECT_EQ(a.corpus, "python-tutorial");
  EXPECT_EQ(a.n_ctx, 64u);
  EXPECT_EQ(a.n_chunks, 2u);
  EXPECT_EQ(a.positions, 2u * (64 - 1 - 32));
  EXPECT_GT(a.ppl, 1);
  EXPECT_GT(a.base_ppl, 1);
  EXPECT_GE(a.kld_mean, 0);
  EXPECT_LT(a.kld_mean, 0.05);  // Q8_0 stays close to F32
  EXPECT_GT(a.same_top, 0.5);
  EXPECT_EQ(files_ending(cache, ".logprobs"), 1u);

  // Measured once: the second time the figures come from the cache, the same.
  auto again = measure_variant_quality(kBase, hash, q8->path, method, cache);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->figures.ppl, a.ppl);
  EXPECT_EQ(again->figures.kld_mean, a.kld_mean);

  // Another variant reuses the base's log-probabilities and is further from the base.
  auto other = measure_variant_quality(kBase, hash, q4->path, method, cache);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_FALSE(other->from_cache);
  EXPECT_TRUE(other->base_from_cache);
  EXPECT_EQ(other->figures.base_ppl, a.base_ppl);
  EXPECT_GT(other->figures.kld_mean, a.kld_mean);
  EXPECT_EQ(files_ending(cache, ".logprobs"), 1u);
  EXPECT_EQ(files_ending(cache, ".json"), 2u);
  for (const auto& e : fs::directory_iterator(cache)) {
    EXPECT_EQ(e.path().string().find(".part-"), std::string::npos) << e.path();  // no temporary left
  }
}

TEST(QualityMeasure, TheBaseAgainstItselfHasNoLoss) {
  const fs::path dir = test::temp_dir();
  const QualityMethod method = test_method(dir / "root");
  auto same = measure_variant_quality(kBase, *file_content_hash(kBase), kBase, method, dir / "cache");
  ASSERT_TRUE(same) << same.error().message;
  // The base's log-probabilities are kept in half precision: the figures are within its rounding.
  EXPECT_NEAR(same->figures.ppl_increase_pct(), 0, 0.5);
  EXPECT_LT(same->figures.kld_mean, 5e-3);
  EXPECT_GT(same->figures.same_top, 0.95);  // near-ties may round the other way
}

TEST(QualityMeasure, AMissingCorpusIsANamedErrorAndCachesNothing) {
  const fs::path dir = test::temp_dir();
  QualityMethod method;
  method.corpus_root = (dir / "empty-root").string();
  auto result = measure_variant_quality(kBase, "0000000000000000", kBase, method, dir / "cache");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("python3-doc"), std::string::npos) << result.error().message;
  EXPECT_FALSE(fs::exists(dir / "cache") && !fs::is_empty(dir / "cache"));
}

TEST(QualityMeasure, TheChunkFitsTheBasesTrainedContext) {
  auto method = quality_method_for(test::fixture_path("models/stories260K.gguf").string(), QualityMethod{});
  ASSERT_TRUE(method) << method.error().message;
  EXPECT_EQ(method->n_ctx, 128u);  // trained on 128 tokens
  EXPECT_FALSE(quality_method_for("/nonexistent/base.gguf", QualityMethod{}));
}

}  // namespace
}  // namespace infertune
