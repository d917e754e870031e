#include "sweeps/metrics/peak_rss.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

namespace infertune {

namespace {

// A "Name:   1234 kB" line of a /proc/.../status file, in bytes.
std::optional<int64_t> status_field_bytes(std::string_view name, const std::string& path = "/proc/self/status") {
  std::ifstream status(path);
  std::string line;
  while (std::getline(status, line)) {
    if (line.size() <= name.size() || line.compare(0, name.size(), name) != 0 || line[name.size()] != ':') {
      continue;
    }
    long long kib = 0;
    if (std::sscanf(line.c_str() + name.size() + 1, "%lld", &kib) != 1) return std::nullopt;
    return static_cast<int64_t>(kib) * 1024;
  }
  return std::nullopt;
}

}  // namespace

Status reset_peak_rss() {
  std::FILE* file = std::fopen("/proc/self/clear_refs", "w");
  if (file == nullptr) return fail("cannot reset the peak RSS: /proc/self/clear_refs: {}", std::strerror(errno));
  // "5" resets only the peak resident set size; it does not touch the pages' referenced/soft-dirty bits.
  const bool written = std::fputs("5", file) >= 0;
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;  // the write reaches the kernel at the flush
  if (!written || !closed) {
    return fail("cannot reset the peak RSS: writing /proc/self/clear_refs: {}",
                std::strerror(written ? errno : write_errno));
  }
  return Status::success();
}

std::optional<int64_t> peak_rss_bytes() { return status_field_bytes("VmHWM"); }

std::optional<int64_t> current_rss_bytes() { return status_field_bytes("VmRSS"); }

std::optional<int64_t> peak_rss_bytes_of(pid_t pid) {
  return status_field_bytes("VmHWM", "/proc/" + std::to_string(pid) + "/status");
}

}  // namespace infertune
