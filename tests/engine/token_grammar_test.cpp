// Grammar-constrained generation: TokenGrammar's view of a vocabulary (end tokens only where the grammar may end,
// control tokens never, a token's bytes against the grammar, mask() agreeing with allows() token by token), and the
// Scheduler generating under a grammar on the fixture model: every reply is a sentence of the grammar, and each
// greedy token is the best-scored token the grammar allows, which the sampler's shortcut (ask about the chosen
// token first, mask only when it is refused) must not change.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/gguf/gguf_file.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/token_grammar.h"
#include "engine/model/model.h"
#include "engine/scheduler/scheduler.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

namespace infertune {
namespace {

std::shared_ptr<const Grammar> grammar_of(std::string_view gbnf) {
  auto grammar = Grammar::parse(gbnf);
  EXPECT_TRUE(grammar) << grammar.error().message;
  return std::make_shared<const Grammar>(grammar ? std::move(*grammar) : *Grammar::parse("root ::= \"\""));
}

std::shared_ptr<const GrammarVocabulary> small_vocabulary() {
  using R = GrammarTokenRole;
  return std::make_shared<const GrammarVocabulary>(
      std::vector<std::string>{"</s>", "<ctl>", "a", "ab", "b", "\xC3", "\xA9", "é", "x", ""},
      std::vector<R>{R::End, R::Never, R::Text, R::Text, R::Text, R::Text, R::Text, R::Text, R::Text, R::Text});
}

TEST(TokenGrammar, AllowsTokensByTheirBytesAndEndsOnlyWhereTheGrammarMay) {
  TokenGrammar g(grammar_of("root ::= \"a\" \"b\"* \"é\"?\n"), small_vocabulary());
  EXPECT_FALSE(g.allows(0));  // nothing yet: cannot end
  EXPECT_FALSE(g.allows(1));  // control
  EXPECT_TRUE(g.allows(2));
  EXPECT_TRUE(g.allows(3));
  EXPECT_FALSE(g.allows(4));
  EXPECT_FALSE(g.allows(9));  // no bytes
  g.accept(3);                // "ab"
  EXPECT_TRUE(g.allows(0));   // a sentence: may end
  EXPECT_TRUE(g.allows(4));
  EXPECT_TRUE(g.allows(5));   // the first byte of é
  EXPECT_FALSE(g.allows(6));  // a lone continuation byte
  EXPECT_TRUE(g.allows(7));
  g.accept(5);
  EXPECT_FALSE(g.allows(0));  // inside a character: cannot end
  EXPECT_TRUE(g.allows(6));
  EXPECT_FALSE(g.allows(7));
  g.accept(6);
  EXPECT_TRUE(g.can_end());
  EXPECT_FALSE(g.can_continue());
}

TEST(TokenGrammar, MaskRefusesExactlyWhatAllowsRefuses) {
  TokenGrammar g(grammar_of("root ::= [a-b]+ \"é\"\n"), small_vocabulary());
  for (int step = 0; step < 3; ++step) {
    std::vector<float> logits(10, 1.0f);
    logits[8] = -std::numeric_limits<float>::infinity();
    g.mask(logits);
    for (int32_t t = 0; t < 10; ++t) EXPECT_EQ(std::isfinite(logits[t]), t != 8 && g.allows(t)) << step << " " << t;
    g.accept(step == 2 ? 5 : 3);
  }
}

// A grammar that keeps many parse paths open makes every check dear; past its work bound a mask refuses the tokens
// it has not checked, rather than stall the serving loop.
TEST(TokenGrammar, AMaskStopsCheckingPastItsWorkBound) {
  const auto grammar = grammar_of("root ::= item*\nitem ::= [a-b] | [a-c] | [a-d] | [a-e] | [a-f] | [a-g]\n");
  const auto vocabulary = small_vocabulary();
  std::vector<float> unbounded(10, 1.0f), bounded(10, 1.0f);
  TokenGrammar(grammar, vocabulary).mask(unbounded);
  TokenGrammar(grammar, vocabulary, 1).mask(bounded);
  EXPECT_TRUE(std::isfinite(unbounded[3]));   // "ab"
  EXPECT_FALSE(std::isfinite(unbounded[8]));  // "x"
  size_t allowed_unbounded = 0, allowed_bounded = 0;
  for (size_t t = 0; t < 10; ++t) {
    allowed_unbounded += std::isfinite(unbounded[t]);
    allowed_bounded += std::isfinite(bounded[t]);
    if (std::isfinite(bounded[t])) {
      EXPECT_TRUE(std::isfinite(unbounded[t])) << t;  // never more than the grammar allows
    }
  }
  EXPECT_LT(allowed_bounded, allowed_unbounded);
}

class ConstrainedGeneration : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = test::fixture_path("models/fixture-llama-f32.gguf").string();
    auto model = Model::load(path);
    ASSERT_TRUE(model) << model.error().message;
    model_ = std::make_unique<Model>(std::move(*model));
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.error().message;
    auto tokenizer = Tokenizer::from_gguf(*file);
    ASSERT_TRUE(tokenizer) << tokenizer.error().message;
    tokenizer_ = std::make_unique<Tokenizer>(std::move(*tokenizer));
    vocabulary_ = std::make_shared<const GrammarVocabulary>(GrammarVocabulary::from_tokenizer(*tokenizer_));
  }

  struct Generated {
    std::vector<int32_t> tokens;
    std::string text;  // the pieces of the tokens before an end token
    bool ended = false;
  };

  // Generates under `grammar`; with greedy sampling, checks every token against a replica of the grammar: it
  // must be the best-scored of the tokens the grammar allows at that point.
  Generated generate(const std::shared_ptr<const Grammar>& grammar, float temperature, uint64_t seed,
                     uint32_t max_tokens) {
    auto ctx = Context::create(*model_, {.n_ctx = 128, .n_threads = 1, .n_batch = 32, .n_seq_max = 1});
    EXPECT_TRUE(ctx) << ctx.error().message;
    TokenGrammar replica(grammar, vocabulary_);
    SchedulerParams params{.n_parallel = 1, .stop_at_eos = true};
    params.grammar_vocabulary = vocabulary_;
    if (temperature <= 0) {
      params.on_logits = [&](RequestId, int32_t token, std::span<const float> row) {
        std::vector<float> masked(row.begin(), row.end());
        replica.mask(masked);
        const auto best = std::max_element(masked.begin(), masked.end()) - masked.begin();
        EXPECT_EQ(token, best);
        replica.accept(token);
      };
    }
    auto scheduler = Scheduler::create(*ctx, params);
    EXPECT_TRUE(scheduler) << scheduler.error().message;
    SamplingParams sampling;
    sampling.temperature = temperature;
    sampling.seed = seed;
    auto id = scheduler->submit({.prompt = tokenizer_->encode("Once upon a time", true, false),
                                 .max_new_tokens = max_tokens,
                                 .sampling = sampling,
                                 .grammar = grammar});
    EXPECT_TRUE(id) << id.error().message;
    auto results = scheduler->run();
    EXPECT_TRUE(results) << results.error().message;
    Generated out;
    if (!results || results->empty()) return out;
    out.tokens = (*results)[0].tokens;
    for (int32_t t : out.tokens) {
      if (tokenizer_->is_end_of_generation(t)) {
        out.ended = true;
        break;
      }
      out.text += tokenizer_->token_to_piece(t);
    }
    return out;
  }

  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
};

TEST_F(ConstrainedGeneration, GreedyTokensAreTheBestTheGrammarAllows) {
  const auto grammar = grammar_of(R"(root ::= " " word (" " word){2} "." | " " [0-9]+ "."
word ::= [a-z]+
)");
  const Generated g = generate(grammar, 0.0f, 1, 40);
  ASSERT_FALSE(g.tokens.empty());
  EXPECT_TRUE(GrammarMatcher(grammar).allows(g.text)) << g.text;
  if (g.ended) {
    EXPECT_TRUE(grammar_accepts(*grammar, g.text)) << g.text;
  }
}

TEST_F(ConstrainedGeneration, SampledRepliesAreSentencesOfTheGrammar) {
  const auto grammar = grammar_of(R"(root ::= " {\"n\": " [1-9] [0-9]? ", \"ok\": " ("true" | "false") "}"
)");
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Generated g = generate(grammar, 1.5f, seed, 40);
    EXPECT_TRUE(g.ended) << "seed " << seed << ": " << g.text;
    EXPECT_TRUE(grammar_accepts(*grammar, g.text)) << "seed " << seed << ": " << g.text;
  }
}

TEST_F(ConstrainedGeneration, ARequestWithAGrammarNeedsTheVocabulary) {
  auto ctx = Context::create(*model_, {.n_ctx = 64, .n_threads = 1, .n_batch = 32, .n_seq_max = 1});
  ASSERT_TRUE(ctx);
  auto scheduler = Scheduler::create(*ctx, {.n_parallel = 1});
  ASSERT_TRUE(scheduler);
  auto id = scheduler->submit({.prompt = {1, 2}, .grammar = grammar_of("root ::= \"a\"\n")});
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message.find("grammar_vocabulary"), std::string::npos);
}

}  // namespace
}  // namespace infertune
