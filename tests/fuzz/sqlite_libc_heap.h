// SQLite's memory from glibc's own allocator, out of AddressSanitizer's sight, for the store fuzz target.
//
// SQLite is the system library, not instrumented: ASan cannot check its accesses, only intercept its mallocs.
// Opening a store parses the schema on every connection -- thousands of small mallocs per input -- and
// through ASan's allocator (redzones, quarantine, libFuzzer's malloc hooks) that was about two thirds of the
// target's time. Handing SQLite __libc_malloc/__libc_free instead loses nothing ASan could see in SQLite
// and keeps every check on infertune's own code. Call before SQLite is first used (sqlite3_config's rule).
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_realloc(void* pointer, size_t size);
void __libc_free(void* pointer);
}

namespace infertune::fuzz {

namespace sqlite_libc_heap_detail {

// Each block starts with its size (SQLite's xSize needs it; glibc's malloc_usable_size is ASan's here).
constexpr size_t kHeader = 16;  // keeps the 8-byte alignment SQLite asks for, and 16 for long double

inline void* block_of(void* user) { return static_cast<char*>(user) - kHeader; }

inline void* allocate(int size) {
  auto* block = static_cast<char*>(__libc_malloc(static_cast<size_t>(size) + kHeader));
  if (block == nullptr) return nullptr;
  const auto n = static_cast<int64_t>(size);
  std::memcpy(block, &n, sizeof n);
  return block + kHeader;
}

inline void release(void* user) {
  if (user != nullptr) __libc_free(block_of(user));
}

inline int size_of(void* user) {
  if (user == nullptr) return 0;
  int64_t n = 0;
  std::memcpy(&n, block_of(user), sizeof n);
  return static_cast<int>(n);
}

inline void* reallocate(void* user, int size) {
  if (user == nullptr) return allocate(size);
  auto* block = static_cast<char*>(__libc_realloc(block_of(user), static_cast<size_t>(size) + kHeader));
  if (block == nullptr) return nullptr;
  const auto n = static_cast<int64_t>(size);
  std::memcpy(block, &n, sizeof n);
  return block + kHeader;
}

inline int round_up(int size) { return (size + 7) & ~7; }
inline int init(void*) { return SQLITE_OK; }
inline void shutdown(void*) {}

}  // namespace sqlite_libc_heap_detail

// Installs the allocator, without SQLite's memory statistics (a global mutex taken on every malloc, and
// nothing here reads them); false when SQLite refuses (it was already initialized).
inline bool use_libc_heap_for_sqlite() {
  namespace d = sqlite_libc_heap_detail;
  static const sqlite3_mem_methods methods = {d::allocate, d::release, d::reallocate, d::size_of,
                                              d::round_up, d::init,    d::shutdown,   nullptr};
  return sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK &&
         sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
}

}  // namespace infertune::fuzz
