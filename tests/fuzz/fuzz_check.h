#pragma once
// The fuzz targets' property check: a violated property prints what failed, under the target's name, and traps,
// which libFuzzer reports as a crash with the input that caused it.
#include <errno.h>  // program_invocation_short_name

#include <cstdio>

namespace infertune::fuzz {

inline void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "%s: property violated: %s\n", program_invocation_short_name, what);
  __builtin_trap();
}

}  // namespace infertune::fuzz
