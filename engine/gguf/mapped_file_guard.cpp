#include "engine/gguf/mapped_file_guard.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace infertune {
namespace {

struct Mapping {
  std::atomic<uintptr_t> base{0};  // 0: a free slot; published last, so the handler sees size and path complete
  size_t size = 0;
  char path[512] = {};
};

std::array<Mapping, 256> g_mappings;
struct sigaction g_previous {};

// Async-signal-safe output: write(2) of a text and of a number.
void put(const char* text) {
  for (size_t n = std::strlen(text); n > 0;) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= size_t(w);
  }
}

void put_number(uint64_t value) {
  char digits[24];
  size_t i = sizeof digits;
  digits[--i] = '\0';
  do {
    digits[--i] = char('0' + value % 10);
    value /= 10;
  } while (value != 0 && i > 0);
  put(digits + i);
}

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const Mapping& m : g_mappings) {
    const uintptr_t base = m.base.load(std::memory_order_acquire);
    if (base == 0 || address < base || address - base >= m.size) continue;
    put("infertune: the model file '");
    put(m.path);
    put("' changed while it was in use (truncated or rewritten in place): reading it at offset ");
    put_number(address - base);
    put(" failed (SIGBUS). Replace a model file by writing a new one and renaming it over the old, never in place.\n");
    ::_exit(kMappedFileChangedExitCode);
  }
  // Not a model file's page: the fault is someone else's. Put the earlier action back; returning re-runs the
  // faulting access, which then meets it (the default: the process ends by SIGBUS).
  // A SIGBUS sent by a process (kill, raise) re-runs nothing: send it again.
  ::sigaction(SIGBUS, &g_previous, nullptr);
  if (info->si_code <= 0) ::raise(signal);
  (void)context;
}

void install_handler() {
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &g_previous);
}

}  // namespace

void register_mapped_file(const void* base, size_t size, const std::string& path) {
  static std::once_flag installed;
  std::call_once(installed, install_handler);
  for (Mapping& m : g_mappings) {
    uintptr_t expected = 0;
    // Claim the slot with a sentinel, fill it, then publish the real base.
    if (!m.base.compare_exchange_strong(expected, UINTPTR_MAX, std::memory_order_acq_rel)) continue;
    m.size = size;
    const size_t n = std::min(path.size(), sizeof m.path - 1);
    std::memcpy(m.path, path.data(), n);
    m.path[n] = '\0';
    m.base.store(reinterpret_cast<uintptr_t>(base), std::memory_order_release);
    return;
  }
}

void unregister_mapped_file(const void* base) {
  const auto key = reinterpret_cast<uintptr_t>(base);
  for (Mapping& m : g_mappings) {
    uintptr_t expected = key;
    if (m.base.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
  }
}

}  // namespace infertune
