#pragma once
// Progress of a bench run on stderr. With --progress: one plain line per step ("bench: 3/8 tg128:
// repetition 2/5"). Without it, on a terminal: one status line rewritten in place and erased before each
// result row; otherwise nothing (stdout carries only the results).
#include <cstddef>
#include <string>

namespace infertune {

class BenchProgress {
 public:
  BenchProgress(bool lines, size_t n_tests);
  // Test `index` (0-based) named `test` is at `step` ("warmup", "repetition 2/5", ...).
  void step(size_t index, const std::string& test, const std::string& step);
  // Erases the status line (before a result row is printed).
  void clear();
  // A warning or error about one test, on its own line.
  void note(const std::string& text);

 private:
  enum class Mode { silent, lines, status };
  Mode mode_;
  size_t n_tests_;
  bool status_shown_ = false;
};

}  // namespace infertune
