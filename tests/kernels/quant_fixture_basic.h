#pragma once
// Helpers for the tests of the basic (non-K) codecs: the shared quant fixtures (8 rows x 1024 values
// encoded by ggml, ../shared/fixtures/quant) and whole-buffer encode / decode through the public API.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/ggml_type.h"

namespace infertune::test::quant_basic {

inline constexpr int64_t kFixtureRows = 8;
inline constexpr int64_t kFixtureRowLength = 1024;

// input.f32: [8][1024]
std::vector<float> fixture_input();
// TYPE.quant: the 8 rows as ggml encoded them, [8][row bytes].
std::vector<std::byte> fixture_encoded(std::string_view type_name);
// TYPE.dequant.f32: ggml's decoding of TYPE.quant, [8][1024].
std::vector<float> fixture_decoded(std::string_view type_name);

// Encodes / decodes values.size() / row_length rows one quantize_row / dequantize_row call each. A failed
// call is a test failure (ADD_FAILURE) and leaves the result short.
std::vector<std::byte> encode_rows(GgmlType type, std::span<const float> values, int64_t row_length);
std::vector<float> decode_rows(GgmlType type, std::span<const std::byte> bytes, int64_t row_length);
std::vector<float> round_trip(GgmlType type, std::span<const float> values, int64_t row_length);

// sqrt(sum (x - y)^2 / sum x^2), accumulated in double.
double relative_rmse(std::span<const float> x, std::span<const float> y);

}  // namespace infertune::test::quant_basic
