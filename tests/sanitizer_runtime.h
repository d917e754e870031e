#pragma once
// Which sanitizer runtime this test build runs under, for the tests whose checks it takes over.
#include <gtest/gtest.h>

namespace infertune::test {

// "AddressSanitizer" or "ThreadSanitizer" when this build runs under one (the asan-ubsan and tsan presets), else
// empty. Their runtimes take over what some tests check: they handle SIGSEGV and SIGBUS themselves, reserve
// terabytes of address space at start (so a process under an RLIMIT_AS limit cannot start), and add shadow and
// quarantine memory to the RSS. Those tests skip under them, saying why.
constexpr const char* sanitizer_runtime() {
#if defined(__SANITIZE_ADDRESS__)
  return "AddressSanitizer";
#elif defined(__SANITIZE_THREAD__)
  return "ThreadSanitizer";
#else
  return "";
#endif
}

#define INFERTUNE_SKIP_UNDER_SANITIZER(why)    \
  if (*::infertune::test::sanitizer_runtime()) \
  GTEST_SKIP() << "under " << ::infertune::test::sanitizer_runtime() << ", which " << (why)

}  // namespace infertune::test
