#include "bench/llama_bench/bench_progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace infertune {

BenchProgress::BenchProgress(bool lines, size_t n_tests)
    : mode_(lines ? Mode::lines : (isatty(STDERR_FILENO) ? Mode::status : Mode::silent)), n_tests_(n_tests) {}

void BenchProgress::step(size_t index, const std::string& test, const std::string& step) {
  const std::string text = fmt::format("bench: {}/{} {}: {}", index + 1, n_tests_, test, step);
  if (mode_ == Mode::lines) {
    fmt::print(stderr, "{}\n", text);
  } else if (mode_ == Mode::status) {
    fmt::print(stderr, "\r\033[K{}", text);
    status_shown_ = true;
  }
  std::fflush(stderr);
}

void BenchProgress::clear() {
  if (status_shown_) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    status_shown_ = false;
  }
}

void BenchProgress::note(const std::string& text) {
  clear();
  fmt::print(stderr, "bench: {}\n", text);
  std::fflush(stderr);
}

}  // namespace infertune
