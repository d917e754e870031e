// `infertune embedding` end to end on the llama fixture: json is OpenAI's list with a vector per prompt, unit length
// by default, equal to the in-process Embedder's; --embd-separator splits (empty pieces skipped) and -f reads a
// file; --pooling none gives a vector per token; the other layouts and scalings are llama-embedding's; bad input
// fails with a message that says what is wrong. The layouts themselves are checked in process too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "engine/embedding/embedder.h"
#include "engine/embedding/embedding_output.h"
#include "engine/model/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

constexpr size_t kFixtureEmbd = 256;

std::string fixture_model() { return test::fixture_path("models/fixture-llama-f32.gguf").string(); }

// stdout alone (the summary and warnings on stderr dropped) when `quiet`, else both (run_command's 2>&1).
test::CommandResult embedding(const std::string& args, bool quiet = true) {
  const std::string command =
      fmt::format("{} embedding -m {} -t 2 {}", test::infertune_binary(), fixture_model(), args);
  return test::run_command(quiet ? fmt::format("({} 2>/dev/null)", command) : command);
}

json embedding_json(const std::string& args) {
  const auto result = embedding(args + " --embd-output-format json");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  const json parsed = json::parse(result.output, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << result.output;
  return parsed;
}

std::vector<std::vector<double>> vectors_of(const json& list) {
  std::vector<std::vector<double>> out;
  for (const json& item : list.at("data")) out.push_back(item.at("embedding").get<std::vector<double>>());
  return out;
}

double norm(const std::vector<double>& v) { return std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0)); }

size_t token_count(const std::string& text) {
  const auto result = test::run_command(
      fmt::format("{} tokenize -m {} --ids --parse-special -p '{}'", test::infertune_binary(), fixture_model(), text));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return std::count(result.output.begin(), result.output.end(), ',') + 1;
}

TEST(EmbeddingCommandTest, JsonIsOpenAIsListWithAUnitVectorPerPrompt) {
  const json list = embedding_json("--pooling mean -p 'Once upon a time\nthe cat sat\nhello world'");
  EXPECT_EQ(list.at("object"), "list");
  ASSERT_EQ(list.at("data").size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const json& item = list.at("data")[i];
    EXPECT_EQ(item.at("object"), "embedding");
    EXPECT_EQ(item.at("index"), i);
    const auto v = item.at("embedding").get<std::vector<double>>();
    ASSERT_EQ(v.size(), kFixtureEmbd);
    EXPECT_NEAR(norm(v), 1.0, 1e-5) << "prompt " << i;
  }
  EXPECT_FALSE(list.contains("cosineSimilarity"));
}

TEST(EmbeddingCommandTest, ValuesAreTheInProcessEmbeddersToTheBit) {
  const std::vector<std::string> prompts = {"Once upon a time", "the cat sat on the mat"};
  const auto ours =
      vectors_of(embedding_json(fmt::format("--pooling last -ctk f32 -ctv f32 -p '{}\n{}'", prompts[0], prompts[1])));

  auto model = Model::load(fixture_model());
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto tokenizer = Tokenizer::from_gguf(model->file());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
  std::vector<std::vector<int32_t>> inputs;
  for (const std::string& p : prompts) inputs.push_back(tokenizer->encode(p, true, true));
  auto ctx = Context::create(*model, {.n_ctx = 4096, .n_seq_max = 2, .embeddings = true});
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  Embedder embedder(*ctx, {.pooling = Pooling::last});
  auto expected = embedder.embed(inputs);
  ASSERT_TRUE(expected.ok()) << expected.error().message;

  ASSERT_EQ(ours.size(), expected->size());
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].size(), (*expected)[i].values.size());
    for (size_t d = 0; d < ours[i].size(); ++d) {
      ASSERT_EQ(static_cast<float>(ours[i][d]), (*expected)[i].values[d]) << "prompt " << i << ", value " << d;
    }
  }
}

TEST(EmbeddingCommandTest, TheSeparatorSplitsAndEmptyPiecesAreSkipped) {
  const json list = embedding_json("--pooling mean --embd-separator '<#>' -p '<#>one<#>two<#><#>three<#>'");
  const auto vectors = vectors_of(list);
  ASSERT_EQ(vectors.size(), 3u);
  // Each piece alone gives the same vector as within the list.
  const auto two = vectors_of(embedding_json("--pooling mean -p 'two'"));
  ASSERT_EQ(two.size(), 1u);
  for (size_t d = 0; d < kFixtureEmbd; ++d) EXPECT_NEAR(vectors[1][d], two[0][d], 1e-6) << d;
}

TEST(EmbeddingCommandTest, PromptsComeFromAFileWithoutItsFinalNewline) {
  const auto path = test::temp_dir() / "prompts.txt";
  std::ofstream(path) << "first line\nsecond line\n";
  EXPECT_EQ(vectors_of(embedding_json("--pooling cls -f " + path.string())).size(), 2u);
}

TEST(EmbeddingCommandTest, PoolingNoneGivesAUnitVectorPerToken) {
  const std::string a = "Once upon a time", b = "there was a cat";
  const size_t tokens = token_count(a) + token_count(b);
  ASSERT_GT(tokens, 4u);
  // The fixture's file says no pooling_type: none is its own, as in llama.cpp.
  for (const std::string pooling : {"--pooling none", ""}) {
    const auto vectors = vectors_of(embedding_json(fmt::format("{} -p '{}\n{}'", pooling, a, b)));
    ASSERT_EQ(vectors.size(), tokens) << pooling;
    for (const auto& v : vectors) EXPECT_NEAR(norm(v), 1.0, 1e-5) << pooling;
  }
}

TEST(EmbeddingCommandTest, ControlTokenTextsAreParsedAsLlamaCppParsesEmbeddingInputs) {
  // "</s>" is the fixture's EOS: one token, and an input that ends with it draws no warning.
  const auto parsed = test::run_command(
      fmt::format("{} tokenize -m {} --ids --parse-special -p 'a</s>'", test::infertune_binary(), fixture_model()));
  const auto plain =
      test::run_command(fmt::format("{} tokenize -m {} --ids -p 'a</s>'", test::infertune_binary(), fixture_model()));
  ASSERT_NE(parsed.output, plain.output);
  EXPECT_EQ(vectors_of(embedding_json("--pooling none -p 'a</s>'")).size(), token_count("a</s>"));
  const auto result = embedding("--pooling last -p 'a</s>'", /*quiet=*/false);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, Not(HasSubstr("neither SEP nor EOS")));
  EXPECT_THAT(embedding("--pooling last -p 'a'", /*quiet=*/false).output,
              HasSubstr("warning: the prompt ends with neither SEP nor EOS"));
  EXPECT_THAT(embedding("--pooling last -p 'a\nb</s>\nc'", /*quiet=*/false).output,
              HasSubstr("warning: 2 of the 3 prompts end with neither SEP nor EOS"));
}

TEST(EmbeddingCommandTest, TheSummaryNamesPromptsTokensAndPooling) {
  const auto result = embedding("--pooling mean -p 'a\nb c'", /*quiet=*/false);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr(fmt::format("embedding: 2 prompts, {} tokens, pooling mean, --embd-normalize 2: "
                                                   "2 embeddings of 256 values",
                                                   token_count("a") + token_count("b c"))));
}

TEST(EmbeddingCommandTest, TheDefaultLayoutIsLlamaEmbeddings) {
  const auto several = embedding("--pooling mean -p 'alpha beta\ngamma'");
  ASSERT_EQ(several.exit_code, 0) << several.output;
  EXPECT_THAT(several.output, HasSubstr("embedding 0: "));
  EXPECT_THAT(several.output, HasSubstr("embedding 1: "));
  EXPECT_THAT(several.output, HasSubstr("cosine similarity matrix:\n\nalpha   gamma \n  1.00 "));
  std::istringstream lines(several.output);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "");  // llama-embedding starts with an empty line
  std::getline(lines, line);
  EXPECT_EQ(std::count(line.begin(), line.end(), '.'), 16) << "several prompts: the first 16 values " << line;

  const auto one = embedding("--pooling mean -p 'alpha beta'");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(std::count(one.output.begin(), one.output.end(), '.'), static_cast<long>(kFixtureEmbd))
      << "one prompt: every value";
  EXPECT_THAT(one.output, Not(HasSubstr("cosine")));

  const auto tokens = embedding("--pooling none -p 'alpha'");
  ASSERT_EQ(tokens.exit_code, 0) << tokens.output;
  EXPECT_THAT(tokens.output, HasSubstr(" ... "));
}

TEST(EmbeddingCommandTest, ArrayJsonPlusAndRawLayouts) {
  const auto array = embedding("--pooling mean --embd-output-format array -p 'a\nb\nc'");
  ASSERT_EQ(array.exit_code, 0) << array.output;
  const json rows = json::parse(array.output);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].size(), kFixtureEmbd);

  const auto plus = embedding("--pooling mean --embd-output-format json+ -p 'a\nb\nc'");
  ASSERT_EQ(plus.exit_code, 0) << plus.output;
  const json list = json::parse(plus.output);
  const auto similarity = list.at("cosineSimilarity").get<std::vector<std::vector<double>>>();
  ASSERT_EQ(similarity.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(similarity[i].size(), 3u);
    EXPECT_DOUBLE_EQ(similarity[i][i], 1.0);
    for (size_t j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(similarity[i][j], similarity[j][i]);
  }

  const auto raw = embedding("--pooling mean --embd-output-format raw -p 'a\nb'");
  ASSERT_EQ(raw.exit_code, 0) << raw.output;
  std::istringstream lines(raw.output);
  std::string line;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_EQ(std::count(line.begin(), line.end(), ' '), static_cast<long>(kFixtureEmbd) - 1) << line;
  }
}

TEST(EmbeddingCommandTest, NormalizeModes) {
  const std::string prompt = "--pooling mean -p 'Once upon a time'";
  const auto unscaled = vectors_of(embedding_json(prompt + " --embd-normalize -1"));
  ASSERT_EQ(unscaled.size(), 1u);
  EXPECT_GT(std::fabs(norm(unscaled[0]) - 1.0), 1e-3) << "the final-normed state is not of unit length";

  const auto taxicab = vectors_of(embedding_json(prompt + " --embd-normalize 1"));
  double sum = 0;
  for (double v : taxicab[0]) sum += std::fabs(v);
  EXPECT_NEAR(sum, 1.0, 1e-5);

  const auto int16 = vectors_of(embedding_json(prompt + " --embd-normalize 0"));
  double largest = 0;
  for (double v : int16[0]) {
    EXPECT_EQ(v, std::round(v)) << "whole numbers";
    largest = std::max(largest, std::fabs(v));
  }
  EXPECT_EQ(largest, 32760.0);
}

TEST(EmbeddingCommandTest, BadInputIsReported) {
  const auto path = test::temp_dir() / "long.txt";
  std::ofstream(path) << "Once upon a time there was a little cat who liked to sit in the sun all day long";
  const std::pair<std::string, std::string> cases[] = {
      {"-p ''", "the prompt is empty"},
      {"-p '\n\n'", "nothing but separators"},
      {"", "exactly one of -p TEXT and -f FILE"},
      {"-f /nonexistent/prompts.txt", "-f /nonexistent/prompts.txt: cannot read the file"},
      {fmt::format("-f {} -c 8", path.string()), "more than the 8 an input may have (raise -c"},
      {"-p a --embd-normalize -2", "--embd-normalize"},
      {"-p a --pooling rank", "rank pooling"},
      {"-p a --pooling max", "expected none, mean, cls or last"},
      {"-p a --embd-output-format xml", "--embd-output-format 'xml'"},
      {"-p a --embd-separator ''", "--embd-separator: the separator is empty"},
      {"-p a -np 300", "300 is out of range"},
  };
  for (const auto& [args, message] : cases) {
    const auto result = embedding(args, /*quiet=*/false);
    EXPECT_NE(result.exit_code, 0) << args;
    EXPECT_THAT(result.output, HasSubstr(message)) << args;
  }
  const auto missing =
      test::run_command(fmt::format("{} embedding -m /nonexistent.gguf -p hello 2>&1", test::infertune_binary()));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.output, HasSubstr("/nonexistent.gguf"));
}

// ----- the layouts, in process -----

TEST(EmbeddingOutputTest, PlainLayoutOfSeveralPromptsEndsWithTheSimilarityMatrix) {
  const std::vector<float> a = {1, 0}, b = {0, 2};
  const EmbeddingListing listing{.prompts = {"first prompt", "b"}, .rows = {a, b}};
  EXPECT_EQ(format_embeddings(listing, EmbeddingFormat::plain),
            "\n"
            "embedding 0:  1.000000  0.000000 \n"
            "embedding 1:  0.000000  2.000000 \n"
            "\n"
            "cosine similarity matrix:\n\n"
            "first       b \n"
            "  1.00   0.00 first prom\n"
            "  0.00   1.00 b\n"
            "\n");
}

TEST(EmbeddingOutputTest, PerTokenRowsShowTheirFirstAndLastThreeValues) {
  const std::vector<float> row = {1, 2, 3, 4, 5, 6, 7};
  const EmbeddingListing listing{.prompts = {"x"}, .rows = {row}, .per_token = true, .int16_scaled = true};
  EXPECT_EQ(format_embeddings(listing, EmbeddingFormat::plain),
            "\nembedding 0:      1      2      3  ...      5      6      7 \n\n");
}

TEST(EmbeddingOutputTest, JsonLayoutsWriteRoundTripValues) {
  const std::vector<float> a = {0.1f, -1e-7f}, b = {1.0f / 3, 1};
  const EmbeddingListing listing{.prompts = {"a", "b"}, .rows = {a, b}};
  EXPECT_EQ(format_embeddings(listing, EmbeddingFormat::array), "[[0.1,-1e-07],[0.33333334,1]]\n\n");
  EXPECT_EQ(format_embeddings(listing, EmbeddingFormat::json_plus),
            "{\n"
            "  \"object\": \"list\",\n"
            "  \"data\": [\n"
            "    {\n"
            "      \"object\": \"embedding\",\n"
            "      \"index\": 0,\n"
            "      \"embedding\": [0.1,-1e-07]\n"
            "    },\n"
            "    {\n"
            "      \"object\": \"embedding\",\n"
            "      \"index\": 1,\n"
            "      \"embedding\": [0.33333334,1]\n"
            "    }\n"
            "  ],\n"
            "  \"cosineSimilarity\": [\n"
            "    [  1.00,   0.32 ],\n"
            "    [  0.32,   1.00 ]\n"
            "  ]\n"
            "}\n"
            "\n");
  EXPECT_EQ(format_embeddings(listing, EmbeddingFormat::raw), "0.1 -1e-07\n0.33333334 1\n\n");
}

TEST(EmbeddingOutputTest, CosineSimilarityOfZeroVectorsIsLlamaCpps) {
  const std::vector<float> zero = {0, 0}, one = {1, 0};
  EXPECT_EQ(cosine_similarity(zero, zero), 1.0);
  EXPECT_EQ(cosine_similarity(zero, one), 0.0);
  EXPECT_NEAR(cosine_similarity(one, std::vector<float>{1, 1}), std::sqrt(0.5), 1e-12);
}

TEST(EmbeddingOutputTest, FormatNames) {
  EXPECT_EQ(*parse_embedding_format(""), EmbeddingFormat::plain);
  EXPECT_EQ(*parse_embedding_format("json+"), EmbeddingFormat::json_plus);
  auto bad = parse_embedding_format("csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("array, json, json+ or raw"));
}

}  // namespace
}  // namespace infertune
