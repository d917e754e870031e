#include "sweeps/trial/model_variants.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <system_error>

#include "engine/gguf/gguf_file.h"
#include "engine/model/model_config.h"
#include "sweeps/store/stable_hash.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

Result<FileType> file_type(const std::string& quant) {
  auto type = file_type_from_name(quant);
  if (!type) return fail("quantization type '{}' is unknown (types: {})", quant, file_type_names());
  return *type;
}

// The base file's identity: canonical path, size and modification time.
Result<std::string> base_identity(const std::string& base) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(base, ec);
  if (ec) return fail("base model '{}': {}", base, ec.message());
  const auto size = fs::file_size(canonical, ec);
  if (ec) return fail("base model '{}': {}", base, ec.message());
  const auto mtime = fs::last_write_time(canonical, ec);
  if (ec) return fail("base model '{}': {}", base, ec.message());
  const auto ticks = mtime.time_since_epoch().count();
  return stable_hash(fmt::format("{}\n{}\n{}", canonical.string(), size, ticks));
}

}  // namespace

fs::path default_model_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "infertune" / "models";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "infertune" / "models";
  return fs::temp_directory_path() / "infertune" / "models";
}

Result<fs::path> variant_cache_path(const std::string& base, const std::string& quant, const fs::path& cache_dir) {
  auto type = file_type(quant);
  if (!type) return type.error();
  auto identity = base_identity(base);
  if (!identity) return identity.error();
  return cache_dir / fmt::format("{}-{}-{}.gguf", fs::path(base).stem().string(), *identity, type->name);
}

Status synthesize_once(const SynthRequest& request, const fs::path& path, const SynthProgressFn& progress) {
  std::error_code ec;
  if (fs::exists(path, ec)) return {};
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fail("model cache '{}': {}", path.parent_path().string(), ec.message());
  // The writer itself goes through PATH.tmp; a per-process PATH keeps two producers apart.
  const fs::path part = fmt::format("{}.part-{}", path.string(), getpid());
  auto written = write_synthetic_model(request, part.string(), progress);
  if (!written) return fail("synthesizing '{}': {}", path.string(), written.error().message);
  fs::rename(part, path, ec);
  if (ec) {
    fs::remove(part, ec);
    return fail("renaming the synthesized model into '{}': {}", path.string(), ec.message());
  }
  return {};
}

Result<std::string> variant_path(const std::string& base, const std::string& quant, const fs::path& cache_dir,
                                 const SynthProgressFn& progress) {
  if (quant.empty()) return base;
  auto path = variant_cache_path(base, quant, cache_dir);
  if (!path) return path.error();
  std::error_code ec;
  if (fs::exists(*path, ec)) return path->string();
  auto file = GgufFile::open(base);
  if (!file) return fail("base model '{}': {}", base, file.error().message);
  auto config = read_model_config(*file);
  if (!config) return fail("base model '{}': {}", base, config.error().message);
  SynthRequest request{.config = std::move(*config),
                       .preset = fs::path(base).stem().string(),
                       .file_type = *file_type(quant),
                       .mix = {},
                       .seed = 1,
                       .threads = 0};
  if (Status s = synthesize_once(request, *path, progress); !s) return s.error();
  return path->string();
}

}  // namespace infertune
