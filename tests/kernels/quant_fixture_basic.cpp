#include "quant_fixture_basic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/quant.h"
#include "test_support.h"

namespace infertune::test::quant_basic {

std::vector<float> fixture_input() { return read_f32_file(fixture_path("quant/input.f32")); }

std::vector<std::byte> fixture_encoded(std::string_view type_name) {
  return read_file_bytes(fixture_path("quant/" + std::string(type_name) + ".quant"));
}

std::vector<float> fixture_decoded(std::string_view type_name) {
  return read_f32_file(fixture_path("quant/" + std::string(type_name) + ".dequant.f32"));
}

std::vector<std::byte> encode_rows(GgmlType type, std::span<const float> values, int64_t row_length) {
  const auto row_bytes = ggml_row_bytes(type, static_cast<uint64_t>(row_length));
  if (!row_bytes) {
    ADD_FAILURE() << "bad row length " << row_length << " for " << ggml_type_name(type);
    return {};
  }
  const size_t rows = values.size() / static_cast<size_t>(row_length);
  std::vector<std::byte> bytes(rows * *row_bytes);
  for (size_t r = 0; r < rows; ++r) {
    const Status s = quantize_row(type, values.subspan(r * row_length, row_length),
                                  std::span(bytes).subspan(r * *row_bytes, *row_bytes));
    if (!s) {
      ADD_FAILURE() << s.error().message;
      return {};
    }
  }
  return bytes;
}

std::vector<float> decode_rows(GgmlType type, std::span<const std::byte> bytes, int64_t row_length) {
  const auto row_bytes = ggml_row_bytes(type, static_cast<uint64_t>(row_length));
  if (!row_bytes) {
    ADD_FAILURE() << "bad row length " << row_length << " for " << ggml_type_name(type);
    return {};
  }
  const size_t rows = bytes.size() / *row_bytes;
  std::vector<float> values(rows * row_length);
  for (size_t r = 0; r < rows; ++r) {
    const Status s = dequantize_row(type, bytes.subspan(r * *row_bytes, *row_bytes),
                                    std::span(values).subspan(r * row_length, row_length));
    if (!s) {
      ADD_FAILURE() << s.error().message;
      return {};
    }
  }
  return values;
}

std::vector<float> round_trip(GgmlType type, std::span<const float> values, int64_t row_length) {
  return decode_rows(type, encode_rows(type, values, row_length), row_length);
}

double relative_rmse(std::span<const float> x, std::span<const float> y) {
  double err = 0.0;
  double energy = 0.0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(y[i]);
    err += d * d;
    energy += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  }
  return std::sqrt(err / energy);
}

}  // namespace infertune::test::quant_basic
