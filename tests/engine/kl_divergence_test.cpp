// The base log-probability file (engine/quality/logprob_file.h) and the KL divergence statistics
// (engine/quality/kl_divergence.h): a file round-trips its tokens and the log-softmax of its chunks' scored rows and
// refuses a damaged file; a model compared with itself has KL divergence ~0 and the same top token everywhere; two
// known distributions give their KL divergence and delta p; percentiles come from the sorted values.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "engine/quality/kl_divergence.h"
#include "engine/quality/logprob_file.h"

namespace infertune {
namespace {

std::string temp_file(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

TEST(LogprobFile, RoundTripsTokensAndTheScoredRowsLogSoftmax) {
  const LogprobHeader header{8, 5, 2};  // rows 4..6 of each chunk are scored
  std::vector<int32_t> tokens(16);
  for (int i = 0; i < 16; ++i) tokens[i] = i % 5;
  std::vector<float> logits(8 * 5);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>((i * 7) % 11) * 0.5f;
  const std::string path = temp_file("infertune-logprobs-test.bin");
  auto writer = LogprobWriter::create(path, header, tokens);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  ASSERT_TRUE(writer->add_chunk(logits).ok());
  ASSERT_TRUE(writer->add_chunk(logits).ok());
  EXPECT_FALSE(writer->add_chunk(logits).ok());  // more than the header's chunks
  ASSERT_TRUE(writer->finish().ok());

  auto reader = LogprobReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->header().n_chunks, 2u);
  EXPECT_EQ(reader->tokens(), tokens);
  std::vector<f16_t> rows;
  ASSERT_TRUE(reader->read_chunk(1, rows).ok());
  ASSERT_EQ(rows.size(), 3u * 5u);
  std::vector<float> want(5);
  log_softmax(std::span<const float>(logits).subspan(5 * 5, 5), want);  // scored row 1 = chunk row 5
  for (size_t v = 0; v < 5; ++v) EXPECT_NEAR(f16_to_f32(rows[5 + v]), want[v], 2e-3);
  EXPECT_FALSE(reader->read_chunk(2, rows).ok());

  {  // a token outside the vocabulary (the first token, just after the 20-byte header)
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    const int32_t bad = 5;
    f.write(reinterpret_cast<const char*>(&bad), sizeof(bad));
  }
  auto bad_token = LogprobReader::open(path);
  ASSERT_FALSE(bad_token.ok());
  EXPECT_NE(bad_token.error().message.find("outside the vocabulary"), std::string::npos) << bad_token.error().message;
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
  auto damaged = LogprobReader::open(path);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.error().message.find("the header says"), std::string::npos) << damaged.error().message;
  std::ofstream(path) << "not a log-probability file";
  EXPECT_FALSE(LogprobReader::open(path).ok());
  std::filesystem::remove(path);
}

std::vector<f16_t> logprobs_of(const std::vector<float>& logits) {
  std::vector<float> lp(logits.size());
  log_softmax(logits, lp);
  std::vector<f16_t> out;
  for (float v : lp) out.push_back(f32_to_f16(v));
  return out;
}

TEST(KlDivergence, AModelAgainstItselfHasNoneAndTheSameTopTokens) {
  KldAccumulator acc;
  const std::vector<float> a = {0.1f, 2.0f, -1.0f, 0.5f}, b = {3.0f, 0.0f, 0.0f, -2.0f};
  acc.add(logprobs_of(a), a, 1);
  acc.add(logprobs_of(b), b, 2);
  const KldSummary s = acc.summary();
  EXPECT_EQ(s.positions, 2u);
  EXPECT_NEAR(s.kld.mean, 0.0, 1e-3);
  EXPECT_EQ(s.same_top, 1.0);
  EXPECT_NEAR(s.delta_p.max, 0.0, 1e-3);
  EXPECT_NEAR(s.ppl_model, s.ppl_base, 1e-2 * s.ppl_base);
}

TEST(KlDivergence, TwoKnownDistributions) {
  // Base p = (3/4, 1/4), model q = (1/4, 3/4): KL = 3/4 ln 3 + 1/4 ln(1/3) = ln(3) / 2; the top tokens differ;
  // the next token (0) lost half its probability.
  KldAccumulator acc;
  acc.add(logprobs_of({std::log(3.0f), 0.0f}), std::vector<float>{0.0f, std::log(3.0f)}, 0);
  const KldSummary s = acc.summary();
  EXPECT_NEAR(s.kld.mean, std::log(3.0) / 2, 2e-3);
  EXPECT_EQ(s.same_top, 0.0);
  EXPECT_NEAR(s.delta_p.mean, -0.5, 1e-3);
  EXPECT_NEAR(s.ln_ppl_ratio, std::log(3.0), 2e-3);  // -ln(1/4) - -ln(3/4)
}

TEST(KlDivergence, PercentilesComeFromTheSortedValues) {
  std::vector<double> values;
  for (int i = 100; i >= 0; --i) values.push_back(i);
  const Distribution d = Distribution::of(values);
  EXPECT_EQ(d.min, 0);
  EXPECT_EQ(d.max, 100);
  EXPECT_EQ(d.median, 50);
  EXPECT_EQ(d.p90, 90);
  EXPECT_EQ(d.p01, 1);
  EXPECT_NEAR(d.mean, 50, 1e-12);
}

}  // namespace
}  // namespace infertune
