#include "kernels/matmul/decode_buffer.h"

namespace infertune {

DecodeBuffer::DecodeBuffer() = default;
DecodeBuffer::~DecodeBuffer() = default;

void DecodeBuffer::reserve(size_t rows, size_t n_cols) {
  if (codes_.size() < rows * n_cols) codes_.resize(rows * n_cols);
  if (d_.size() < rows * n_cols / 16) d_.resize(rows * n_cols / 16);
  if (off_.size() < rows * n_cols / 16) off_.resize(rows * n_cols / 16);
  if (scales_.size() < rows * n_cols / 16) scales_.resize(rows * n_cols / 16);
  if (coefs_.size() < rows * n_cols / 32) coefs_.resize(rows * n_cols / 32);
}

}  // namespace infertune
