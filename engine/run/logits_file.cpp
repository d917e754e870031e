#include "engine/run/logits_file.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace infertune {

static_assert(std::endian::native == std::endian::little, "logits files are little-endian; add a byte swap");

Status write_logits_file(const std::string& path, std::span<const float> logits) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!out) return fail("--logits-out {}: cannot open for writing: {}", path, std::strerror(errno));
  if (std::fwrite(logits.data(), sizeof(float), logits.size(), out.get()) != logits.size()) {
    return fail("--logits-out {}: write failed: {}", path, std::strerror(errno));
  }
  if (std::fclose(out.release()) != 0) return fail("--logits-out {}: close failed: {}", path, std::strerror(errno));
  return {};
}

}  // namespace infertune
