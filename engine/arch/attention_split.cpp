#include "engine/arch/attention_split.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>

#include "kernels/attention/attention_merge.h"

namespace infertune {
namespace {

// Work is counted in (query, key) pairs. One pair is a dot product and a weighted sum over the head size,
// some 10 ns; a split call costs some microseconds more (the merge, and a second phase waking the threads
// again when the merge is large), and each piece writes and merges its partial state.
constexpr double kSplitCallCost = 1024;
constexpr double kPieceCost = 32;
// Merges of at most this many partial values run on the calling thread.
constexpr size_t kSerialMergeValues = 1 << 16;
// Splitting must promise at least this much earlier a finish to be worth it.
constexpr double kRequiredGain = 0.9;

uint32_t max_keys(const AttentionProblem& p) {
  if (p.n_keys.empty()) return 0;
  return *std::max_element(p.n_keys.begin(), p.n_keys.end());
}

// The dot products and weighted sums of every query, and decoding each key and value row once.
double problem_cost(const AttentionProblem& p) {
  double pairs = 0;
  for (uint32_t n : p.n_keys) pairs += n;
  return pairs * p.n_heads + max_keys(p);
}

// When the dynamic hand-out of these tasks ends: largest first, each to the thread that is free first.
double finish_time(std::vector<double> costs, unsigned n_threads) {
  std::sort(costs.begin(), costs.end(), std::greater<>());
  std::priority_queue<double, std::vector<double>, std::greater<>> loads;
  for (unsigned t = 0; t < n_threads; ++t) loads.push(0.0);
  double finish = 0;
  for (double c : costs) {
    const double load = loads.top() + c;
    loads.pop();
    loads.push(load);
    finish = std::max(finish, load);
  }
  return finish;
}

// Pieces per problem when no piece should cost more than `target` (and none has fewer keys than allowed).
std::vector<uint32_t> splits_for(std::span<const double> costs, std::span<const uint32_t> keys, double target) {
  std::vector<uint32_t> splits(costs.size(), 1);
  for (size_t i = 0; i < costs.size(); ++i) {
    const uint32_t most = std::max<uint32_t>(1, keys[i] / kMinKeysPerPiece);
    const double wanted = std::ceil(costs[i] / target);
    splits[i] = static_cast<uint32_t>(std::clamp<double>(wanted, 1, most));
  }
  return splits;
}

double finish_time_split(std::span<const double> costs, std::span<const uint32_t> splits, unsigned n_threads) {
  std::vector<double> pieces;
  bool any = false;
  for (size_t i = 0; i < costs.size(); ++i) {
    any |= splits[i] > 1;
    const double overhead = splits[i] > 1 ? kPieceCost : 0;
    for (uint32_t j = 0; j < splits[i]; ++j) pieces.push_back(costs[i] / splits[i] + overhead);
  }
  return finish_time(std::move(pieces), n_threads) + (any ? kSplitCallCost : 0);
}

}  // namespace

std::vector<uint32_t> plan_key_splits(std::span<const AttentionProblem> problems, unsigned n_threads) {
  std::vector<uint32_t> none(problems.size(), 1);
  if (n_threads <= 1 || problems.empty()) return none;
  std::vector<double> costs;
  std::vector<uint32_t> keys;
  for (const AttentionProblem& p : problems) {
    costs.push_back(problem_cost(p));
    keys.push_back(max_keys(p));
  }
  const double ideal = std::accumulate(costs.begin(), costs.end(), 0.0) / n_threads;
  const double unsplit = finish_time(costs, n_threads);
  if (unsplit <= ideal / kRequiredGain) return none;  // already balanced
  // Pieces of about a thread's share, or a half or a quarter of it: finer pieces balance uneven problems,
  // and a thread that is descheduled (a busy machine) then holds back less of the work. So the finest
  // plan within 5% of the best estimate is taken.
  std::vector<uint32_t> plans[3];
  double times[3];
  const double shares[3] = {1.0, 0.5, 0.25};
  double best_time = unsplit * kRequiredGain;
  for (int i = 0; i < 3; ++i) {
    plans[i] = splits_for(costs, keys, ideal * shares[i]);
    times[i] = finish_time_split(costs, plans[i], n_threads);
    best_time = std::min(best_time, times[i]);
  }
  std::vector<uint32_t> best = none;
  for (int i = 0; i < 3; ++i) {
    if (times[i] < unsplit * kRequiredGain && times[i] <= best_time * 1.05) best = plans[i];
  }
  return best;
}

namespace {

// Lists the pieces (split problems' ranges as even as whole keys allow) and lays out their partial outputs.
void lay_out_pieces(std::span<const AttentionProblem> problems, SplitAttentionBuffers& b) {
  b.pieces.clear();
  b.parts.clear();
  b.split_problems.clear();
  b.first_part.assign(problems.size(), 0);
  size_t floats = 0;
  std::vector<size_t>& part_offsets = b.part_offsets;
  part_offsets.clear();
  for (uint32_t i = 0; i < problems.size(); ++i) {
    const AttentionProblem& p = problems[i];
    const uint32_t n = b.splits[i];
    if (n <= 1) {
      b.pieces.push_back({i, 0, std::numeric_limits<uint32_t>::max(), 0});
      continue;
    }
    const uint32_t keys = max_keys(p);
    const size_t queries = p.rows.size() * p.n_heads;
    b.split_problems.push_back(i);
    b.first_part[i] = static_cast<uint32_t>(b.parts.size());
    for (uint32_t j = 0; j < n; ++j) {
      const auto begin = static_cast<uint32_t>(uint64_t(keys) * j / n);
      const auto end = static_cast<uint32_t>(uint64_t(keys) * (j + 1) / n);
      b.pieces.push_back({i, begin, end, static_cast<uint32_t>(b.parts.size())});
      b.parts.push_back({});
      part_offsets.push_back(floats);
      floats += queries * (2 + p.v.dim);
    }
  }
  if (b.storage.size() < floats) b.storage.resize(floats);
  // Pointers only once the storage has its final size: per part its max, sum and acc arrays in a row.
  for (const SplitAttentionBuffers::Piece& piece : b.pieces) {
    if (b.splits[piece.problem] <= 1) continue;
    const AttentionProblem& p = problems[piece.problem];
    const size_t queries = p.rows.size() * p.n_heads;
    AttentionPartial& part = b.parts[piece.part];
    part.max = b.storage.data() + part_offsets[piece.part];
    part.sum = part.max + queries;
    part.acc = part.sum + queries;
  }
  // Larger pieces first, so that the dynamic hand-out ends with small ones.
  std::stable_sort(b.pieces.begin(), b.pieces.end(), [&](const auto& x, const auto& y) {
    const auto cost = [&](const SplitAttentionBuffers::Piece& piece) {
      return problem_cost(problems[piece.problem]) / b.splits[piece.problem];
    };
    return cost(x) > cost(y);
  });
}

}  // namespace

Status run_split_attention(const ParallelFor& threads, AttentionFn fn, std::span<const AttentionProblem> problems,
                           std::span<AttentionScratch> scratch, SplitAttentionBuffers& b,
                           std::optional<uint32_t> forced_splits) {
  if (scratch.size() < threads.n_threads()) return fail("attention: scratch for {} threads", threads.n_threads());
  if (forced_splits) {
    b.splits.resize(problems.size());
    for (size_t i = 0; i < problems.size(); ++i) {
      b.splits[i] = std::clamp<uint32_t>(*forced_splits, 1, std::max<uint32_t>(1, max_keys(problems[i])));
    }
  } else {
    b.splits = plan_key_splits(problems, threads.n_threads());
  }
  lay_out_pieces(problems, b);
  Status s = threads.tasks(b.pieces.size(), [&](size_t i, unsigned thread) {
    const SplitAttentionBuffers::Piece& piece = b.pieces[i];
    if (b.splits[piece.problem] <= 1) {
      fn(problems[piece.problem], scratch[thread]);
      return;
    }
    AttentionProblem p = problems[piece.problem];
    p.key_begin = piece.key_begin;
    p.key_end = piece.key_end;
    p.partial = &b.parts[piece.part];
    fn(p, scratch[thread]);
  });
  if (!s || b.split_problems.empty()) return s;
  const auto merge = [&](size_t i) {
    const uint32_t index = b.split_problems[i];
    const AttentionProblem& p = problems[index];
    const std::span<const AttentionPartial> parts(b.parts.data() + b.first_part[index], b.splits[index]);
    for (size_t r = 0; r < p.rows.size(); ++r) {
      for (uint32_t h = 0; h < p.n_heads; ++h) {
        float* out = p.out + p.rows[r] * p.out_stride + static_cast<size_t>(h) * p.v.dim;
        const float sink = p.sinks ? p.sinks[h] : -std::numeric_limits<float>::infinity();
        merge_attention_partials(parts, r * p.n_heads + h, p.v.dim, out, sink);
      }
    }
  };
  // A decoding step's merge is a few thousand multiply-adds: cheaper on this thread than waking the others.
  size_t merged_values = 0;
  for (uint32_t index : b.split_problems) {
    const AttentionProblem& p = problems[index];
    merged_values += p.rows.size() * p.n_heads * p.v.dim * b.splits[index];
  }
  if (merged_values <= kSerialMergeValues) {
    for (size_t i = 0; i < b.split_problems.size(); ++i) merge(i);
    return {};
  }
  return threads.tasks(b.split_problems.size(), [&](size_t i, unsigned) { merge(i); });
}

}  // namespace infertune
