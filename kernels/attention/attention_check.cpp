#include <algorithm>
#include <cmath>

#include "kernels/attention/attention.h"

namespace infertune {

bool is_attention_kv_type(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
      return true;
    default:
      return false;
  }
}

namespace {

Status check_rows(const KvHeadRows& rows, const char* what) {
  if (!is_attention_kv_type(rows.type)) {
    return fail("attention: {} type {} is not one of f32, f16, bf16, q8_0, q4_0", what, ggml_type_name(rows.type));
  }
  if (rows.data == nullptr || rows.dim == 0) return fail("attention: {} rows are missing", what);
  const auto bytes = ggml_row_bytes(rows.type, rows.dim);
  if (!bytes) {
    return fail("attention: {} head size {} is not a multiple of the {} block size {}", what, rows.dim,
                ggml_type_name(rows.type), ggml_type_traits(rows.type).block_elements);
  }
  if (rows.stride < *bytes) return fail("attention: {} stride {} < row bytes {}", what, rows.stride, *bytes);
  return {};
}

}  // namespace

Status check_attention_problem(const AttentionProblem& p) {
  if (Status s = check_rows(p.k, "key"); !s) return s;
  if (Status s = check_rows(p.v, "value"); !s) return s;
  if (p.q == nullptr || p.out == nullptr) return fail("attention: missing query or output");
  if (p.n_heads == 0) return fail("attention: no heads");
  if (!(p.softcap >= 0.0f) || !std::isfinite(p.softcap)) {
    return fail("attention: soft cap {} is not a finite value of at least 0", p.softcap);
  }
  if (p.rows.size() != p.n_keys.size()) {
    return fail("attention: {} rows but {} key counts", p.rows.size(), p.n_keys.size());
  }
  for (size_t r = 0; r < p.n_keys.size(); ++r) {
    if (p.n_keys[r] == 0 || p.n_keys[r] > p.cells.size()) {
      return fail("attention: row {} sees {} keys, not within 1..{}", r, p.n_keys[r], p.cells.size());
    }
  }
  if (p.key_begin >= p.key_end) return fail("attention: empty key range {}..{}", p.key_begin, p.key_end);
  if (p.partial) {
    if (!p.partial->max || !p.partial->sum || !p.partial->acc) return fail("attention: partial outputs are missing");
  } else if (p.key_begin != 0 ||
             (!p.n_keys.empty() && p.key_end < *std::max_element(p.n_keys.begin(), p.n_keys.end()))) {
    return fail("attention: keys {}..{} are only a part of the rows' keys, and there is no partial output", p.key_begin,
                p.key_end);
  }
  return {};
}

}  // namespace infertune
