#pragma once
// The stages that drop unlikely candidates (llama.cpp's top_k, top_p and min_p). Each keeps at least one
// candidate whenever it was given one, and each breaks ties by ranks_before (lower id first), so which
// candidates survive never depends on the sort algorithm.
#include <cstdint>
#include <string>

#include "engine/sampling/candidates.h"

namespace infertune {

// Keeps the k candidates with the largest logits. k <= 0: off.
class TopKStage {
 public:
  explicit TopKStage(int32_t k) : k_(k) {}
  void apply(Candidates& candidates) const;
  std::string describe() const;

 private:
  int32_t k_;
};

// Nucleus sampling: keeps the smallest prefix of the candidates, by descending probability, whose
// cumulative probability reaches p. p >= 1: off.
class TopPStage {
 public:
  explicit TopPStage(float p) : p_(p) {}
  void apply(Candidates& candidates) const;
  std::string describe() const;

 private:
  float p_;
};

// Keeps the candidates whose probability is at least p times the largest one's. p <= 0: off.
class MinPStage {
 public:
  explicit MinPStage(float p) : p_(p) {}
  void apply(Candidates& candidates) const;
  std::string describe() const;

 private:
  float p_;
};

}  // namespace infertune
