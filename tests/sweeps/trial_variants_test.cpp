// Quantization variants of a base model: quantized from a real base (the bytes `infertune quantize` writes),
// synthesized from a synthetic one, cached under a name keyed by the base's content, reused when present.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/model/model.h"
#include "engine/synth/presets.h"
#include "sweeps/trial/model_variants.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

const std::string kBase = test::fixture_path("models/fixture-llama-f32.gguf").string();

TEST(TrialVariants, Q8VariantHasTheBaseShapeInQ8) {
  const fs::path cache = test::temp_dir() / "models";
  auto path = variant_path(kBase, "q8_0", cache);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(fs::path(*path).parent_path(), cache);
  EXPECT_NE(fs::path(*path).filename().string().find("q8_0"), std::string::npos) << *path;
  auto base = Model::load(kBase);
  auto variant = Model::load(*path);
  ASSERT_TRUE(base) << base.error().message;
  ASSERT_TRUE(variant) << variant.error().message;
  const ModelConfig& b = base->config();
  const ModelConfig& v = variant->config();
  EXPECT_EQ(v.arch, b.arch);
  EXPECT_EQ(v.n_layers, b.n_layers);
  EXPECT_EQ(v.n_embd, b.n_embd);
  EXPECT_EQ(v.n_head, b.n_head);
  EXPECT_EQ(v.n_head_kv, b.n_head_kv);
  EXPECT_EQ(v.n_ff, b.n_ff);
  EXPECT_EQ(v.n_vocab, b.n_vocab);
  EXPECT_EQ(v.tied_output, b.tied_output);
  for (const LayerWeights& layer : variant->weights().layers) {
    EXPECT_EQ(layer.attn_q.type, GgmlType::Q8_0);
    EXPECT_EQ(layer.ffn_down.type, GgmlType::Q8_0);
  }
  EXPECT_EQ(v.file_type, 7u);  // LLAMA_FTYPE_MOSTLY_Q8_0
  // Nothing but the variant is left in the cache (no temporary files).
  EXPECT_EQ(std::distance(fs::directory_iterator(cache), fs::directory_iterator()), 1);
}

TEST(TrialVariants, SecondCallReusesTheFile) {
  const fs::path cache = test::temp_dir() / "models";
  auto first = variant_path(kBase, "q4_0", cache);
  ASSERT_TRUE(first) << first.error().message;
  const auto written = fs::last_write_time(*first);
  // Mark the file: a rewrite would lose the mark.
  fs::last_write_time(*first, written - std::chrono::hours(1));
  const auto marked = fs::last_write_time(*first);
  int progress_calls = 0;
  auto second = variant_path(kBase, "q4_0", cache, [&](uint64_t, uint64_t) { ++progress_calls; });
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(fs::last_write_time(*second), marked);
  EXPECT_EQ(progress_calls, 0);
}

TEST(TrialVariants, KeyedByBaseAndType) {
  const fs::path cache = test::temp_dir();
  auto q8 = variant_cache_path(kBase, "q8_0", cache);
  auto q4 = variant_cache_path(kBase, "q4_0", cache);
  auto other = variant_cache_path(test::fixture_path("models/fixture-qwen2-f32.gguf").string(), "q8_0", cache);
  ASSERT_TRUE(q8 && q4 && other);
  EXPECT_NE(*q8, *q4);
  EXPECT_NE(*q8, *other);
  EXPECT_EQ(*q8, *variant_cache_path(kBase, "Q8_0", cache));  // type names are case-insensitive
  // The same file through another spelling of its path is the same base, and so is a copy of its bytes.
  const fs::path dotted = fs::path(kBase).parent_path() / "." / fs::path(kBase).filename();
  EXPECT_EQ(*q8, *variant_cache_path(dotted.string(), "q8_0", cache));
  const fs::path copy = test::temp_dir() / fs::path(kBase).filename();
  fs::copy_file(kBase, copy);
  EXPECT_EQ(*q8, *variant_cache_path(copy.string(), "q8_0", cache));
}

TEST(TrialVariants, ARealBaseIsQuantizedAsInfertuneQuantizeDoes) {
  const fs::path dir = test::temp_dir();
  for (const char* type : {"q8_0", "q4_0", "q4_k_m"}) {
    auto variant = produce_variant(kBase, type, dir / "models");
    ASSERT_TRUE(variant) << variant.error().message;
    EXPECT_EQ(variant->source, VariantSource::quantized) << type;
    EXPECT_FALSE(variant->requantized) << type;
    const fs::path direct = dir / (std::string("direct-") + type + ".gguf");
    const auto r = test::run_command(test::infertune_binary() + " quantize " + kBase + " " + direct.string() + " " +
                                     type + " 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(test::read_file_bytes(variant->path) == test::read_file_bytes(direct))
        << type << ": the variant differs from `infertune quantize` of the same base";
    auto file = GgufFile::open(variant->path);
    ASSERT_TRUE(file);
    EXPECT_FALSE(is_synthetic_model(*file));
  }
}

TEST(TrialVariants, AQuantizedBaseIsRequantizedAndSaysSo) {
  auto variant =
      produce_variant(test::fixture_path("models/fixture-llama-Q8_0.gguf").string(), "q4_0", test::temp_dir());
  ASSERT_TRUE(variant) << variant.error().message;
  EXPECT_EQ(variant->source, VariantSource::quantized);
  EXPECT_TRUE(variant->requantized);
}

TEST(TrialVariants, ASyntheticBaseGetsSynthesizedVariants) {
  const fs::path dir = test::temp_dir();
  const fs::path tiny = dir / "tiny.gguf";
  const SynthRequest request{.config = find_synth_preset("tiny")->config,
                             .preset = "tiny",
                             .file_type = *file_type_from_name("f16"),
                             .mix = {}};
  ASSERT_TRUE(synthesize_once(request, tiny));
  auto base = GgufFile::open(tiny.string());
  ASSERT_TRUE(base);
  EXPECT_TRUE(is_synthetic_model(*base));
  EXPECT_FALSE(is_synthetic_model(*GgufFile::open(kBase)));
  auto variant = produce_variant(tiny.string(), "q8_0", dir / "models");
  ASSERT_TRUE(variant) << variant.error().message;
  EXPECT_EQ(variant->source, VariantSource::synthesized);
  EXPECT_NE(variant->path.find("-q8_0-synth.gguf"), std::string::npos) << variant->path;
  auto file = GgufFile::open(variant->path);
  ASSERT_TRUE(file);
  EXPECT_TRUE(is_synthetic_model(*file));
}

TEST(TrialVariants, EmptyQuantIsTheBaseAndErrorsAreNamed) {
  const fs::path cache = test::temp_dir();
  auto same = variant_path(kBase, "", cache);
  ASSERT_TRUE(same);
  EXPECT_EQ(*same, kBase);
  auto unknown = variant_path(kBase, "q9_x", cache);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("'q9_x'"), std::string::npos) << unknown.error().message;
  auto missing = variant_path((cache / "absent.gguf").string(), "q8_0", cache);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("absent.gguf"), std::string::npos) << missing.error().message;
}

TEST(TrialVariants, DefaultCacheDirFollowsXdg) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/some/cache", 1);
  EXPECT_EQ(default_model_cache_dir(), fs::path("/some/cache/infertune/models"));
  if (old) {
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_CACHE_HOME");
  }
}

}  // namespace
}  // namespace infertune
