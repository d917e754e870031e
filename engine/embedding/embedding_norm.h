#pragma once
// The scaling of an embedding vector that llama.cpp's --embd-normalize and the server's "embd_normalize"
// choose:
//   -1  none
//    0  max absolute, scaled to int16's range: x * 32760 / max|x|
//    1  taxicab: x / sum|x|
//    2  euclidean (the default): x / sqrt(sum x^2)
//   p>2 p-norm: x / (sum |x|^p)^(1/p)
// A vector of zeros stays zeros.
#include <span>

namespace infertune {

inline constexpr int kEuclideanNorm = 2;

void normalize_embedding(std::span<float> values, int mode);

}  // namespace infertune
