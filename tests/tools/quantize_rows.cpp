// A test helper for tests/kernels/weighted_quant_crosscheck.py: encodes rows of floats with kernels/quant.h,
// with or without an importance matrix, so that a script can compare the bytes with ggml's own quantizer.
//
// usage: quantize_rows GGML_TYPE N_PER_ROW ROWS.f32 IMPORTANCE.f32|- OUT
//   ROWS.f32: whole rows of N_PER_ROW little-endian floats; IMPORTANCE.f32: N_PER_ROW floats, or - for none.
//   OUT: the encoded rows, one after another.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/quant.h"

namespace {

std::optional<std::vector<char>> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> as_floats(const std::vector<char>& bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(out.size() * sizeof(float)),
            reinterpret_cast<char*>(out.data()));
  return out;
}

int usage(const char* why) {
  std::fprintf(stderr, "quantize_rows: %s\nusage: quantize_rows GGML_TYPE N_PER_ROW ROWS.f32 IMPORTANCE.f32|- OUT\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace infertune;
  if (argc != 6) return usage("expected 5 arguments");
  const auto type = static_cast<GgmlType>(std::atoi(argv[1]));
  const size_t n_per_row = std::strtoull(argv[2], nullptr, 10);
  const auto row_bytes = ggml_row_bytes(type, n_per_row);
  if (n_per_row == 0 || !row_bytes) return usage("bad type or row length");
  const auto rows_file = read_file(argv[3]);
  if (!rows_file) return usage("cannot read the rows");
  const std::vector<float> rows = as_floats(*rows_file);
  std::vector<float> importance;
  if (std::string(argv[4]) != "-") {
    const auto file = read_file(argv[4]);
    if (!file) return usage("cannot read the importance matrix");
    importance = as_floats(*file);
  }
  const size_t n_rows = rows.size() / n_per_row;
  std::vector<std::byte> out(n_rows * *row_bytes);
  for (size_t r = 0; r < n_rows; ++r) {
    const std::span<const float> row(rows.data() + r * n_per_row, n_per_row);
    const std::span<std::byte> dst(out.data() + r * *row_bytes, *row_bytes);
    const Status s =
        importance.empty() ? quantize_row(type, row, dst) : quantize_row_weighted(type, row, importance, dst);
    if (!s) {
      std::fprintf(stderr, "quantize_rows: row %zu: %s\n", r, s.error().message.c_str());
      return 1;
    }
  }
  std::ofstream(argv[5], std::ios::binary)
      .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  return 0;
}
