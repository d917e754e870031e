#pragma once
// The importance matrix that `infertune quantize --imatrix FILE` reads, as llama-quantize reads it: either
// layout that `infertune imatrix` and llama-imatrix write (engine/quality/importance_matrix.h), GGUF (per weight
// "<name>.in_sum2" and "<name>.counts", plus imatrix.* metadata) or the legacy .dat. What the quantizers get per
// weight is the mean squared activation of each input column: the sums divided by the token count (per expert
// for a 3-D expert tensor; 1 where an expert saw no token), or for .dat the stored values divided by ncall.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/result.h"

namespace infertune {

struct ImportanceFile {
  std::string path;
  // weight name -> [n_experts][n_cols] column importances
  std::map<std::string, std::vector<float>> entries;
  std::vector<std::string> datasets;  // the texts it was computed on
  int64_t chunk_count = 0;            // chunks evaluated (0 when the file does not say)
};

// Reads FILE. Errors name the file and what is wrong: unreadable, truncated, no entries, a GGUF matrix without
// its imatrix.* metadata, sums without counts, a wrong tensor type, counts that do not divide the sums.
Result<ImportanceFile> load_importance_file(const std::string& path);

// llama-quantize's --exclude-weights / --include-weights: drops every entry whose name contains one of
// `exclude`, then (when `include` is not empty) keeps only those whose name contains one of `include`. Then
// refuses a non-finite value among what is left, naming the entry.
Status select_importance(ImportanceFile& file, const std::vector<std::string>& include,
                         const std::vector<std::string>& exclude);

}  // namespace infertune
