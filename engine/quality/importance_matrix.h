#pragma once
// The importance matrix of `infertune imatrix`, as llama-imatrix collects it: for every weight matrix of the blocks
// ("blk.*", and output.weight when asked), the sum over every token evaluated of each input column's squared
// activation, and the count of those tokens; the importance-weighted quantizers weigh each column's rounding error by
// it. Written as llama.cpp writes it, so that its llama-quantize reads ours:
//   GGUF (default): general.type = "imatrix", imatrix.datasets (the texts), imatrix.chunk_count,
//     imatrix.chunk_size; per weight, in name order, F32 tensors "<name>.in_sum2" [n_cols, n_mat] and "<name>.counts"
//     [1, n_mat], where n_mat is 1, or n_expert for a stack of experts (one row of sums and one count per expert,
//     collected from the tokens routed to it; the experts' matrices are observed as "<name> (expert E)").
//   .dat (legacy): int32 entry count; per entry in name order: int32 name length, the name, int32 ncall (chunks,
//     rounded up, of the busiest expert), int32 n_cols * n_mat, float[n_cols * n_mat] sum / count * ncall (an expert
//     without tokens: ncall); then int32 chunk count, int32 dataset length and the dataset name.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/arch/activation_observer.h"
#include "kernels/result.h"

namespace infertune {

class ImportanceMatrix : public ActivationObserver {
 public:
  // n_expert: the experts of a mixture-of-experts model (ModelConfig::n_expert), 0 for a dense one.
  explicit ImportanceMatrix(bool include_output = false, uint32_t n_expert = 0)
      : include_output_(include_output), n_expert_(n_expert) {}

  struct Entry {
    std::vector<float> sums;       // [n_mat][n_cols]: sum over tokens of x^2, accumulated in float token by token
    std::vector<uint64_t> counts;  // [n_mat] tokens
  };

  void observe(std::string_view name, std::span<const float> x, size_t n_tokens, size_t n_cols) override;
  const std::map<std::string, Entry>& entries() const { return entries_; }

  struct Provenance {
    std::vector<std::string> datasets;  // the texts it was collected on
    uint32_t chunk_count = 0;
    uint32_t chunk_size = 0;  // tokens per chunk
  };
  Status write_gguf(const std::string& path, const Provenance& provenance) const;
  Status write_dat(const std::string& path, const Provenance& provenance) const;

 private:
  bool include_output_;
  uint32_t n_expert_;
  std::map<std::string, Entry> entries_;
  std::string error_;  // the first inconsistency seen (a weight whose input width changed)
};

}  // namespace infertune
