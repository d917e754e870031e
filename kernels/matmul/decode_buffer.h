#pragma once
// Per-thread storage for weight rows decoded by the tiled matmul kernels (x86_tile_kernels.h). Its member
// functions are defined out of line, in a baseline translation unit, so that no std::vector code is
// compiled under an ISA unit's target pragma (an inline copy built for AVX2 could be the one the linker
// keeps for every caller).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace infertune {

class DecodeBuffer {
 public:
  DecodeBuffer();
  ~DecodeBuffer();
  DecodeBuffer(const DecodeBuffer&) = delete;
  DecodeBuffer& operator=(const DecodeBuffer&) = delete;

  // Room for `rows` rows of n_cols values: codes [rows][n_cols], floats and ints [rows][n_cols / 16]. Grows,
  // never shrinks.
  void reserve(size_t rows, size_t n_cols);

  uint8_t* codes() { return codes_.data(); }
  float* d() { return d_.data(); }
  float* off() { return off_.data(); }
  int32_t* scales() { return scales_.data(); }
  int32_t* coefs() { return coefs_.data(); }

 private:
  std::vector<uint8_t> codes_;
  std::vector<float> d_, off_;
  std::vector<int32_t> scales_, coefs_;
};

}  // namespace infertune
