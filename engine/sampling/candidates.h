#pragma once
// The working set every sampling stage reads and narrows: one entry per token still in the running, with its
// (possibly adjusted) logit and, after softmax(), its probability. Stages may reorder and truncate it;
// the ids always say which token an entry is.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace infertune {

struct Candidate {
  int32_t id = 0;
  float logit = 0.0f;
  float p = 0.0f;  // meaningful only after Candidates::softmax(), until the next logit change
};

// Descending logit, ties to the lower id: the one order every stage sorts by, so results never depend
// on the sort algorithm. NaN ranks as -inf, which keeps the order strict-weak even on unsanitized input.
bool ranks_before(const Candidate& a, const Candidate& b);

class Candidates {
 public:
  // [n_vocab] logits -> n_vocab candidates in id order. NaN becomes -inf ("impossible"): it can never be
  // chosen, and it keeps NaN out of every later comparison and sum.
  void assign(std::span<const float> logits);

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::span<const Candidate> items() const { return items_; }
  const Candidate& operator[](size_t i) const { return items_[i]; }

  // For stages that change logits: the sorted order is no longer known afterwards.
  std::span<Candidate> mutable_items() {
    sorted_ = false;
    return items_;
  }

  // True while the entries are still exactly the assigned vocabulary in id order (items[i].id == i), so a
  // token's entry can be found by index.
  bool in_id_order() const { return in_id_order_; }
  bool sorted() const { return sorted_; }

  void sort_descending();
  // Keeps only the first n entries (in the current order); n >= size() changes nothing.
  void truncate(size_t n);
  // Keeps the k best by ranks_before, sorted; cheaper than a full sort when k is small.
  void keep_best(size_t k);

  // Fills p with softmax(logit). A +inf logit takes all the mass (shared among the +inf entries); when
  // every logit is -inf all p are 0 and has_possible() is false.
  void softmax();

  // Drops the entries for which keep(c) is false; the rest keep their order (a sorted list stays sorted).
  template <class Keep>
  void keep_if(Keep keep) {
    const size_t before = items_.size();
    std::erase_if(items_, [&](const Candidate& c) { return !keep(c); });
    if (items_.size() != before) in_id_order_ = false;
  }

  float max_logit() const;  // -inf when empty
  bool has_possible() const { return max_logit() > -std::numeric_limits<float>::infinity(); }

 private:
  std::vector<Candidate> items_;  // [n] n <= n_vocab
  bool sorted_ = false;
  bool in_id_order_ = false;
};

}  // namespace infertune
