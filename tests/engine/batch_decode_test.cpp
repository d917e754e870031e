// Batched decoding through the Batch API, against each sequence decoded alone: N sequences in one batch
// (prompts of different lengths, then one token per sequence per step) give per sequence the same logits
// and the same greedy tokens; a prefix shared by sequence copy or by multi-sequence tokens (stored once)
// gives the results of recomputing it; ubatch splits, flash-attention or not and the scalar reference
// agree; removed and shifted positions continue like fresh contexts; a full cache and bad batches are
// errors the caller can tell apart, with the cache unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/batch/batch.h"
#include "forward_test_models.h"
#include "kernels/attention/attention.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

// Batched and single-sequence runs share every kernel; only the grouping of work differs, which moves the logits by
// float rounding: max |d| / std of 1e-5. Gemma's GELU reads a half-precision table, so where a rounding difference
// crosses one of its steps that activation moves by a step (1e-3 of it), and the logits by up to about 1e-3 of their
// spread: still far below what a wrong mask, position or cache cell does (1e-1 and more).
double same_tolerance(ModelArch arch) { return is_gemma_arch(arch) ? 2e-3 : 1e-5; }

size_t argmax(std::span<const float> row) {
  return static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

// A sequence decoded alone in a fresh context: its prompt's logits (every position) and `steps` greedy
// steps (the logits of each step and the tokens chosen).
struct Alone {
  std::vector<float> prompt_logits;
  std::vector<std::vector<float>> step_logits;
  std::vector<int32_t> greedy;
};

class BatchDecodeTest : public ::testing::TestWithParam<ModelArch> {
 protected:
  void SetUp() override {
    auto loaded = test::load_tiny(GetParam());
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model_ = std::move(*loaded);
    n_vocab_ = model_->config().n_vocab;
  }

  Context context(ContextParams params) {
    auto ctx = Context::create(*model_, params);
    EXPECT_TRUE(ctx.ok()) << ctx.error().message;
    return std::move(*ctx);
  }

  Alone alone(std::span<const int32_t> prompt, size_t steps, ContextParams params = {.n_ctx = 128}) {
    Alone a;
    Context ctx = context(params);
    auto logits = ctx.decode(prompt, Logits::All);
    EXPECT_TRUE(logits.ok()) << logits.error().message;
    if (!logits) return a;
    a.prompt_logits.assign(logits->begin(), logits->end());
    std::vector<float> last(logits->end() - n_vocab_, logits->end());
    for (size_t i = 0; i < steps; ++i) {
      const auto token = static_cast<int32_t>(argmax(last));
      a.greedy.push_back(token);
      auto next = ctx.decode(std::span<const int32_t>(&token, 1));
      EXPECT_TRUE(next.ok()) << next.error().message;
      if (!next) return a;
      last.assign(next->begin(), next->end());
      a.step_logits.push_back(last);
    }
    return a;
  }

  // A prompt of n distinct-looking ids, different per seed.
  static std::vector<int32_t> prompt(size_t n, uint32_t seed) {
    std::vector<int32_t> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(3 + (i * 131 + seed * 71 + 7) % 509);
    return p;
  }

  std::span<const float> row(std::span<const float> logits, size_t i) const {
    return logits.subspan(i * n_vocab_, n_vocab_);
  }

  void expect_parallel_matches_alone(const std::vector<std::vector<int32_t>>& prompts, ContextParams params,
                                     bool interleave, size_t steps, const std::vector<Alone>& want);

  std::unique_ptr<Model> model_;
  size_t n_vocab_ = 0;
};

// Decodes several prompts together, then greedy steps one token per sequence per batch; compares with
// each alone. `interleave`: the prompts' tokens alternate between sequences in the batch.
void BatchDecodeTest::expect_parallel_matches_alone(const std::vector<std::vector<int32_t>>& prompts,
                                                    ContextParams params, bool interleave, size_t steps,
                                                    const std::vector<Alone>& want) {
  const size_t n_vocab = n_vocab_;
  auto made = Context::create(*model_, params);
  ASSERT_TRUE(made.ok()) << made.error().message;
  Context& ctx = *made;
  Batch batch;
  std::vector<std::pair<size_t, size_t>> where;  // batch index -> (sequence, position)
  size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  auto add = [&](size_t s, size_t i) {
    batch.add(prompts[s][i], static_cast<int32_t>(i), {static_cast<SeqId>(s)}, true);
    where.emplace_back(s, i);
  };
  if (interleave) {
    for (size_t i = 0; i < longest; ++i) {
      for (size_t s = 0; s < prompts.size(); ++s) {
        if (i < prompts[s].size()) add(s, i);
      }
    }
  } else {
    for (size_t s = 0; s < prompts.size(); ++s) {
      for (size_t i = 0; i < prompts[s].size(); ++i) add(s, i);
    }
  }
  ASSERT_TRUE(ctx.decode(batch).ok());
  std::vector<std::vector<float>> last(prompts.size());
  for (size_t b = 0; b < batch.size(); ++b) {
    const auto [s, i] = where[b];
    auto got = ctx.logits_ith(b);
    ASSERT_TRUE(got.ok()) << got.error().message;
    const auto ref = std::span<const float>(want[s].prompt_logits).subspan(i * n_vocab, n_vocab);
    EXPECT_LE(test::logits_diff(*got, ref).max_over_std, same_tolerance(GetParam()))
        << "sequence " << s << " position " << i;
    if (i + 1 == prompts[s].size()) last[s].assign(got->begin(), got->end());
  }
  for (size_t step = 0; step < steps; ++step) {
    batch.clear();
    for (size_t s = 0; s < prompts.size(); ++s) {
      const auto token = static_cast<int32_t>(argmax(last[s]));
      EXPECT_EQ(token, want[s].greedy[step]) << "sequence " << s << " step " << step;
      batch.add(token, static_cast<int32_t>(prompts[s].size() + step), {static_cast<SeqId>(s)}, true);
    }
    ASSERT_TRUE(ctx.decode(batch).ok());
    for (size_t s = 0; s < prompts.size(); ++s) {
      auto got = ctx.logits_ith(s);
      ASSERT_TRUE(got.ok());
      EXPECT_LE(test::logits_diff(*got, want[s].step_logits[step]).max_over_std, same_tolerance(GetParam()))
          << "sequence " << s << " step " << step;
      last[s].assign(got->begin(), got->end());
    }
  }
}

TEST_P(BatchDecodeTest, ParallelSequencesMatchEachAlone) {
  const std::vector<std::vector<int32_t>> prompts = {prompt(5, 1), prompt(9, 2), prompt(1, 3), prompt(14, 4)};
  constexpr size_t kSteps = 6;
  std::vector<Alone> want;
  for (const auto& p : prompts) want.push_back(alone(p, kSteps));
  for (bool flash : {true, false}) {
    for (bool interleave : {false, true}) {
      for (uint32_t ubatch : {512u, 7u}) {
        SCOPED_TRACE(testing::Message() << "flash " << flash << " interleave " << interleave << " ubatch " << ubatch);
        ContextParams params{.n_ctx = 128,
                             .n_threads = 2,
                             .n_ubatch = ubatch,
                             .n_seq_max = 4,
                             .flash_attn = flash ? FlashAttention::On : FlashAttention::Off};
        expect_parallel_matches_alone(prompts, params, interleave, kSteps, want);
      }
    }
  }
}

TEST_P(BatchDecodeTest, PrefixSharedBySequenceCopyMatchesRecomputing) {
  const std::vector<int32_t> prefix = prompt(10, 5);
  const std::vector<std::vector<int32_t>> suffixes = {prompt(3, 6), prompt(1, 7), prompt(6, 8)};
  Context ctx = context({.n_ctx = 64, .n_seq_max = 3});
  ASSERT_TRUE(ctx.decode(prefix).ok());  // sequence 0
  ASSERT_TRUE(ctx.kv_cache().seq_cp(0, 1, -1, -1).ok());
  ASSERT_TRUE(ctx.kv_cache().seq_cp(0, 2, -1, -1).ok());
  EXPECT_EQ(ctx.kv_cache().n_used(), prefix.size());  // stored once
  Batch batch;
  std::vector<std::pair<size_t, size_t>> where;
  size_t n_suffix = 0;
  for (size_t s = 0; s < suffixes.size(); ++s) {
    for (size_t i = 0; i < suffixes[s].size(); ++i) {
      batch.add(suffixes[s][i], static_cast<int32_t>(prefix.size() + i), {static_cast<SeqId>(s)}, true);
      where.emplace_back(s, i);
      ++n_suffix;
    }
  }
  ASSERT_TRUE(ctx.decode(batch).ok());
  EXPECT_EQ(ctx.kv_cache().n_used(), prefix.size() + n_suffix);
  EXPECT_EQ(ctx.kv_bytes_used(), (prefix.size() + n_suffix) * ctx.kv_bytes_per_token());
  for (size_t s = 0; s < suffixes.size(); ++s) {
    std::vector<int32_t> whole = prefix;
    whole.insert(whole.end(), suffixes[s].begin(), suffixes[s].end());
    const Alone want = alone(whole, 0);
    for (size_t b = 0; b < batch.size(); ++b) {
      if (where[b].first != s) continue;
      auto got = ctx.logits_ith(b);
      ASSERT_TRUE(got.ok());
      EXPECT_LE(test::logits_diff(*got, row(want.prompt_logits, prefix.size() + where[b].second)).max_over_std,
                same_tolerance(GetParam()))
          << "sequence " << s;
    }
  }
}

TEST_P(BatchDecodeTest, PromptWithSeveralSequenceIdsIsStoredOnceAndMatches) {
  const std::vector<int32_t> shared = prompt(8, 9);
  Context ctx = context({.n_ctx = 64, .n_seq_max = 3});
  Batch batch;
  for (size_t i = 0; i < shared.size(); ++i) batch.add(shared[i], static_cast<int32_t>(i), {0, 1, 2}, true);
  ASSERT_TRUE(ctx.decode(batch).ok());
  EXPECT_EQ(ctx.kv_cache().n_used(), shared.size());
  const Alone want = alone(shared, 0);
  EXPECT_LE(test::logits_diff(ctx.logits(), want.prompt_logits).max_over_std, same_tolerance(GetParam()));
  // Each sequence continues on its own from the shared cells.
  batch.clear();
  const std::vector<int32_t> next = {11, 12, 13};
  for (SeqId s = 0; s < 3; ++s) batch.add(next[s], static_cast<int32_t>(shared.size()), {s}, true);
  ASSERT_TRUE(ctx.decode(batch).ok());
  for (SeqId s = 0; s < 3; ++s) {
    std::vector<int32_t> whole = shared;
    whole.push_back(next[s]);
    const Alone w = alone(whole, 0);
    EXPECT_LE(test::logits_diff(*ctx.logits_ith(s), row(w.prompt_logits, shared.size())).max_over_std,
              same_tolerance(GetParam()));
  }
  // Keeping one sequence frees what only the others held.
  ASSERT_TRUE(ctx.kv_cache().seq_keep(1).ok());
  EXPECT_EQ(ctx.kv_cache().n_used(), shared.size() + 1);
}

TEST_P(BatchDecodeTest, FlashStandardAndTheScalarReferenceAgree) {
  const std::vector<int32_t> tokens = prompt(70, 10);  // more than one key tile
  std::vector<float> reference;
  {
    ScopedAttentionVariant scalar("scalar");
    auto r = test::logits_all(*model_, tokens, {.n_ctx = 128, .flash_attn = FlashAttention::Off});
    ASSERT_TRUE(r.ok());
    reference = *r;
  }
  for (FlashAttention fa : {FlashAttention::On, FlashAttention::Off, FlashAttention::Auto}) {
    auto got = test::logits_all(*model_, tokens, {.n_ctx = 128, .flash_attn = fa});
    ASSERT_TRUE(got.ok());
    EXPECT_LE(test::logits_diff(*got, reference).max_over_std, same_tolerance(GetParam())) << flash_attention_name(fa);
  }
  ScopedAttentionVariant scalar("scalar");
  auto scalar_flash = test::logits_all(*model_, tokens, {.n_ctx = 128, .flash_attn = FlashAttention::On});
  ASSERT_TRUE(scalar_flash.ok());
  EXPECT_LE(test::logits_diff(*scalar_flash, reference).max_over_std, same_tolerance(GetParam()));
}

TEST_P(BatchDecodeTest, RemovedTailIsRecomputedLikeAFreshContext) {
  const std::vector<int32_t> first = prompt(12, 11);
  const std::vector<int32_t> other = prompt(4, 12);
  Context ctx = context({.n_ctx = 64});
  ASSERT_TRUE(ctx.decode(first).ok());
  ASSERT_TRUE(ctx.kv_cache().seq_rm(0, 8, -1).ok());
  EXPECT_EQ(ctx.n_past(), 8u);
  auto got = ctx.decode(other, Logits::All);
  ASSERT_TRUE(got.ok());
  std::vector<int32_t> whole(first.begin(), first.begin() + 8);
  whole.insert(whole.end(), other.begin(), other.end());
  const Alone want = alone(whole, 0);
  const auto tail = std::span<const float>(want.prompt_logits).subspan(8 * n_vocab_);
  EXPECT_LE(test::logits_diff(*got, tail).max_over_std, same_tolerance(GetParam()));
}

// Rope is relative: a whole sequence moved by delta (keys re-rotated) continues exactly like the same
// tokens decoded at the moved positions from the start.
TEST_P(BatchDecodeTest, ShiftedSequenceContinuesLikeOneDecodedAtTheNewPositions) {
  const std::vector<int32_t> tokens = prompt(20, 13);
  constexpr int32_t kDelta = 37;
  Context shifted = context({.n_ctx = 64});
  ASSERT_TRUE(shifted.decode(tokens).ok());
  ASSERT_TRUE(shifted.kv_cache().seq_add(0, -1, -1, kDelta).ok());
  EXPECT_EQ(shifted.kv_cache().seq_pos_min(0), kDelta);
  Context fresh = context({.n_ctx = 64});
  ASSERT_TRUE(fresh.decode(Batch::of_sequence(tokens, 0, kDelta, false)).ok());
  const std::vector<int32_t> next = {42};
  auto a = shifted.decode(Batch::of_sequence(next, 0, kDelta + 20, true));
  ASSERT_TRUE(a.ok());
  const std::vector<float> got(shifted.logits().begin(), shifted.logits().end());
  ASSERT_TRUE(fresh.decode(Batch::of_sequence(next, 0, kDelta + 20, true)).ok());
  EXPECT_LE(test::logits_diff(got, fresh.logits()).max_over_std, std::max(1e-4, same_tolerance(GetParam())));
  // And not like the unshifted sequence (the test can see a missing rotation).
  Context unshifted = context({.n_ctx = 64});
  ASSERT_TRUE(unshifted.decode(tokens).ok());
  ASSERT_TRUE(unshifted.decode(Batch::of_sequence(next, 0, kDelta + 20, true)).ok());
  EXPECT_GT(test::logits_diff(got, unshifted.logits()).max_over_std, 1e-3);
}

TEST_P(BatchDecodeTest, FullCacheIsACacheFullFailureAndChangesNothing) {
  Context ctx = context({.n_ctx = 8, .n_seq_max = 2});
  ASSERT_TRUE(ctx.decode(Batch::of_sequence(prompt(6, 14), 0, 0, false)).ok());
  const Status full = ctx.decode(Batch::of_sequence(prompt(3, 15), 1, 0, true));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(ctx.last_failure(), DecodeFailure::CacheFull);
  EXPECT_THAT(full.error().message, HasSubstr("context full"));
  EXPECT_EQ(ctx.kv_cache().n_used(), 6u);
  EXPECT_EQ(ctx.kv_cache().seq_pos_max(1), -1);
  // The caller frees room (here: part of sequence 0) and the same batch then fits.
  ASSERT_TRUE(ctx.kv_cache().seq_rm(0, 4, -1).ok());
  EXPECT_TRUE(ctx.decode(Batch::of_sequence(prompt(3, 15), 1, 0, true)).ok());
  EXPECT_EQ(ctx.last_failure(), DecodeFailure::None);
  EXPECT_EQ(ctx.kv_cache().n_used(), 7u);
}

TEST_P(BatchDecodeTest, BadBatchesAreInvalidBatchFailures) {
  Context ctx = context({.n_ctx = 32, .n_batch = 4, .n_seq_max = 2});
  auto expect_invalid = [&](const Batch& batch, const char* what) {
    const Status s = ctx.decode(batch);
    ASSERT_FALSE(s.ok()) << what;
    EXPECT_THAT(s.error().message, HasSubstr(what));
    EXPECT_EQ(ctx.last_failure(), DecodeFailure::InvalidBatch);
    EXPECT_EQ(ctx.kv_cache().n_used(), 0u);
  };
  Batch b;
  expect_invalid(b, "empty");
  b.add(5, 0, {2}, true);
  expect_invalid(b, "sequence id 2 at batch index 0");
  b.clear();
  b.add(5, 0, {0}, false);
  b.add(6, -1, {0}, true);
  expect_invalid(b, "negative position -1 at batch index 1");
  b.clear();
  b.add(5, 0, std::span<const SeqId>{}, true);
  expect_invalid(b, "no sequence");
  expect_invalid(Batch::of_sequence(prompt(5, 1), 0, 0, false), "logical batch size 4");
  b.clear();
  b.add(600, 0, {0}, true);
  expect_invalid(b, "token id 600");
  // A token that did not ask for logits has none.
  ASSERT_TRUE(ctx.decode(Batch::of_sequence(prompt(3, 1), 0, 0, false)).ok());
  EXPECT_FALSE(ctx.logits_ith(0).ok());
  EXPECT_TRUE(ctx.logits_ith(2).ok());
  EXPECT_FALSE(ctx.logits_ith(3).ok());
}

// A position a sequence already holds (in the cache or earlier in the batch) is refused, naming it; the
// same position of another sequence, or after seq_rm, is fine.
TEST_P(BatchDecodeTest, PositionsASequenceHoldsAreRefused) {
  Context ctx = context({.n_ctx = 32, .n_batch = 8, .n_seq_max = 2});
  ASSERT_TRUE(ctx.decode(Batch::of_sequence(prompt(3, 1), 0, 0, true)).ok());  // seq 0: positions 0-2
  Batch twice;
  twice.add(5, 3, {1}, false);
  twice.add(6, 3, {1}, true);
  Status s = ctx.decode(twice);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("position 3 of sequence 1 appears twice in the batch (indices 0 and 1)"));
  EXPECT_EQ(ctx.last_failure(), DecodeFailure::InvalidBatch);
  Batch cached;
  cached.add(7, 3, {0}, false);
  cached.add(8, 2, {0, 1}, true);
  s = ctx.decode(cached);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("position 2 of sequence 0 at batch index 1 is already in the KV cache"));
  EXPECT_EQ(ctx.kv_cache().n_used(), 3u);
  ASSERT_TRUE(ctx.decode(Batch::of_sequence(prompt(3, 4), 1, 0, true)).ok());  // seq 1 may use 0-2
  ASSERT_TRUE(ctx.kv_cache().seq_rm(0, 2, -1).ok());
  EXPECT_TRUE(ctx.decode(Batch::of_sequence(prompt(1, 9), 0, 2, true)).ok());  // recompute after seq_rm
  EXPECT_EQ(ctx.kv_cache().n_used(), 6u);
}

// The convenience decode splits a prompt longer than -b into several batches with the same result.
TEST_P(BatchDecodeTest, LongPromptsAreSplitIntoLogicalBatches) {
  const std::vector<int32_t> tokens = prompt(23, 16);
  auto whole = test::logits_all(*model_, tokens, {.n_ctx = 64});
  auto split = test::logits_all(*model_, tokens, {.n_ctx = 64, .n_batch = 5, .n_ubatch = 3});
  ASSERT_TRUE(whole.ok() && split.ok());
  EXPECT_LE(test::logits_diff(*split, *whole).max_over_std, same_tolerance(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Arch, BatchDecodeTest,
                         ::testing::Values(ModelArch::Llama, ModelArch::Qwen2, ModelArch::Qwen3, ModelArch::Qwen3Moe,
                                           ModelArch::Qwen2Moe, ModelArch::GptOss, ModelArch::Phi3, ModelArch::Gemma2,
                                           ModelArch::Gemma3),
                         [](const auto& info) { return test::arch_param_name(info.param); });

}  // namespace
}  // namespace infertune
