#pragma once
// One matmul input x [n_tokens][n_cols], quantized once for every weight matrix that reads it (q/k/v share
// the normed input, gate/up share theirs), in the layouts the integer kernels read:
//
//  - per token rows, for the matrix-vector kernels (one token, or a few):
//      q8:  codes [n_tokens][n_cols] (pair-interleaved, see pair_interleave_q8), per 32-value block
//           [n_tokens][n_cols / 32]: d, d * sum(codes) and the integer sum of the codes
//      q8k: BlockQ8K [n_tokens][n_cols / 256]
//  - token panels, for the tiled kernels of prompt batches (n_tokens >= kMinPanelTokens): tokens in groups
//    of kPanelTokens, each group's codes interleaved 4 values at a time,
//      codes [n_panels][n_cols / 4][kPanelTokens][4]   (token t's values 4g..4g+3 at [t / 16][g][t % 16])
//    so that one vector load gives the same 4 values of 8 or 16 tokens (one token per 32-bit lane), with
//    per-block numbers laid out the same way ([n_panels][n_items][kPanelTokens]):
//      q8:  scales (d), sums (d * sum of the block's codes), isums (that sum as an integer)
//      q8k: scales (d per super-block), pairs16 / pairs32 (the integer code sums of two consecutive 16- /
//           32-value groups as two int16 in one 32-bit lane, low half first: one VPMADDWD with two weight
//           coefficients gives a lane's offset term)
//    Tokens past n_tokens in the last panel are zero, so kernels may compute them and drop the results.
//
// Making one: prepare() sizes the buffers (allocation only when they grow), then quantize() fills token
// ranges, which may run on several threads at once when their boundaries are multiples of kPanelTokens.
// The object is reused from call to call; it keeps a pointer to x, which must outlive the kernels' use.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/matmul/activation_quant.h"
#include "kernels/quant/blocks_k.h"
#include "kernels/result.h"

namespace infertune {

inline constexpr size_t kPanelTokens = 16;
// From this many tokens on, quantize() also builds the panels and the kernels run tiled.
inline constexpr size_t kMinPanelTokens = 8;

// The panel layout of one format, for tokens [16 p, 16 p + 16).
struct ActivationPanel {
  const int8_t* codes = nullptr;     // [n_cols / 4][16][4]
  const float* scales = nullptr;     // q8: [n_cols / 32][16]; q8k: [n_cols / 256][16]
  const float* sums = nullptr;       // q8: [n_cols / 32][16]
  const int32_t* isums = nullptr;    // q8: [n_cols / 32][16]
  const int32_t* pairs16 = nullptr;  // q8k: [n_cols / 32][16]
  const int32_t* pairs32 = nullptr;  // q8k: [n_cols / 64][16]
};

class QuantizedActivations {
 public:
  // Out of line: kernels built for other ISAs use this class, and its vector code must stay baseline.
  QuantizedActivations();
  ~QuantizedActivations();
  QuantizedActivations(QuantizedActivations&&) noexcept;
  QuantizedActivations& operator=(QuantizedActivations&&) noexcept;

  // Binds x [n_tokens][n_cols] and sizes the buffers of the formats the given weight types read (float
  // types need none). Errors when n_cols is not whole blocks of a needed format or memory runs out.
  Status prepare(const float* x, size_t n_tokens, size_t n_cols, std::span<const GgmlType> weight_types);

  // Quantizes tokens [begin, end) into every prepared format. Calls on disjoint ranges may run
  // concurrently; with several threads, keep boundaries on multiples of kPanelTokens (else they share cache
  // lines of the panels: still correct, only slower).
  void quantize(size_t begin, size_t end);

  // prepare() and quantize(0, n_tokens) on the calling thread.
  Status quantize_all(const float* x, size_t n_tokens, size_t n_cols, std::span<const GgmlType> weight_types);

  const float* x() const { return x_; }
  size_t n_tokens() const { return n_tokens_; }
  size_t n_cols() const { return n_cols_; }
  bool has(ActivationFormat f) const { return f == ActivationFormat::f32 || (f == ActivationFormat::q8 ? q8_ : q8k_); }
  bool has_panels() const { return n_tokens_ >= kMinPanelTokens; }
  size_t n_panels() const { return (n_tokens_ + kPanelTokens - 1) / kPanelTokens; }

  // q8 rows of token t: codes [n_cols] pair-interleaved, scales, sums and integer sums [n_cols / 32].
  const int8_t* q8_codes(size_t t) const { return q8_codes_.data() + t * n_cols_; }
  const float* q8_scales(size_t t) const { return q8_scales_.data() + t * (n_cols_ / 32); }
  const float* q8_sums(size_t t) const { return q8_sums_.data() + t * (n_cols_ / 32); }
  const int32_t* q8_isums(size_t t) const { return q8_isums_.data() + t * (n_cols_ / 32); }
  // q8k row of token t: [n_cols / 256].
  const kquant::BlockQ8K* q8k_row(size_t t) const { return q8k_blocks_.data() + t * (n_cols_ / 256); }

  // Panel p (has_panels() only).
  ActivationPanel q8_panel(size_t p) const;
  ActivationPanel q8k_panel(size_t p) const;

 private:
  void quantize_token_q8(size_t t, int8_t* natural);
  void quantize_token_q8k(size_t t);
  void clear_padding(size_t first_pad);

  const float* x_ = nullptr;
  size_t n_tokens_ = 0;
  size_t n_cols_ = 0;
  bool q8_ = false;
  bool q8k_ = false;
  // Rows.
  std::vector<int8_t> q8_codes_;
  std::vector<float> q8_scales_, q8_sums_;
  std::vector<int32_t> q8_isums_;
  std::vector<kquant::BlockQ8K> q8k_blocks_;
  // Panels.
  std::vector<int8_t> q8_panel_codes_, q8k_panel_codes_;
  std::vector<float> q8_panel_scales_, q8_panel_sums_, q8k_panel_scales_;
  std::vector<int32_t> q8_panel_isums_, q8k_panel_pairs16_, q8k_panel_pairs32_;
};

}  // namespace infertune
