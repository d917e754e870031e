#pragma once
// A sweep over two quantization variants of one base with their quality rows (variant_quality), for the
// recommend and report tests: q4_0 is faster (120 tokens/s against 100) and worse (+4% perplexity, mean KLD
// 0.03, against +0.5% and 0.002); with `synthetic`, neither has figures (a synthetic base).
#include <filesystem>
#include <string>

#include "recommend_test_data.h"
#include "test_support.h"

namespace infertune::test {

inline nlohmann::json variant_config(const std::string& quant) {
  nlohmann::json c = trial_config(2, 1, batched_workload(1));
  c["model"] = "/m/base.gguf";
  c["quant"] = quant;
  return c;
}

struct QualitySweep {
  std::filesystem::path path;
  int64_t sweep = 0;
  int64_t q8 = 0, q4 = 0, base = 0;
};

inline QualitySweep make_quality_sweep(bool synthetic) {
  QualitySweep s;
  s.path = temp_dir() / "r.db";
  ResultsStore store = store_with_sweep(s.path, s.sweep);
  const auto model = [&](const std::string& hash, const std::string& path) {
    ModelRecord m;
    m.content_hash = hash;
    m.path = path;
    m.arch = "llama";
    m.file_bytes = 1000;
    return *store.upsert_model(m);
  };
  s.base = model("base", "/m/base.gguf");
  s.q8 = model("q8", "/cache/base-q8_0.gguf");
  s.q4 = model("q4", "/cache/base-q4_0.gguf");
  const auto trial = [&](const std::string& quant, int64_t model_id, double tps) {
    TrialRecord t;
    t.sweep_id = s.sweep;
    const nlohmann::json config = variant_config(quant);
    t.config_json = config.dump();
    t.config_hash = config_hash(config);
    t.model_id = model_id;
    t.peak_rss_bytes = 1000;
    for (const auto& [metric, values] : batched_metrics(tps, 50, 10)) {
      for (size_t i = 0; i < values.size(); ++i) t.samples.push_back({metric, int64_t(i), values[i], false});
    }
    EXPECT_TRUE(store.record_trial(t));
  };
  trial("q8_0", s.q8, 100);
  trial("q4_0", s.q4, 120);
  const auto quality = [&](const std::string& quant, int64_t model_id, double ppl, double kld) {
    VariantQualityRecord q;
    q.sweep_id = s.sweep;
    q.model_id = model_id;
    q.quant = quant;
    if (synthetic) {
      q.status = QualityStatus::not_meaningful;
      q.reason = "the base model /m/base.gguf is synthetic (written by infertune synth: random weights)";
    } else {
      q.base_model_id = s.base;
      q.corpus = "python-tutorial";
      q.n_ctx = 512;
      q.n_chunks = 4;
      q.positions = 1020;
      q.ppl = ppl;
      q.ppl_error = 0.1;
      q.base_ppl = 10.0;
      q.kld_mean = kld;
      q.same_top = 0.95;
    }
    EXPECT_TRUE(store.record_variant_quality(q));
  };
  quality("q8_0", s.q8, 10.05, 0.002);
  quality("q4_0", s.q4, 10.4, 0.03);
  return s;
}

}  // namespace infertune::test
