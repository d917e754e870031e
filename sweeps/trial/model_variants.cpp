#include "sweeps/trial/model_variants.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <system_error>

#include "engine/model/model_config.h"
#include "engine/quantize/model_quantizer.h"
#include "sweeps/store/stable_hash.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

Result<FileType> file_type(const std::string& quant) {
  auto type = file_type_from_name(quant);
  if (!type) return fail("quantization type '{}' is unknown (types: {})", quant, file_type_names());
  return *type;
}

// The base's content hash, remembered per (canonical path, size, modification time) for the process: a sweep
// asks for it once per variant, and hashing a large base takes seconds.
Result<std::string> base_content_hash(const std::string& base) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(base, ec);
  if (ec) return fail("base model '{}': {}", base, ec.message());
  const auto size = fs::file_size(canonical, ec);
  if (ec) return fail("base model '{}': {}", base, ec.message());
  const auto mtime = fs::last_write_time(canonical, ec);
  if (ec) return fail("base model '{}': {}", base, ec.message());
  const std::string identity = fmt::format("{}\n{}\n{}", canonical.string(), size, mtime.time_since_epoch().count());
  static std::mutex mutex;
  static std::map<std::string, std::string> hashes;
  {
    std::lock_guard lock(mutex);
    if (auto it = hashes.find(identity); it != hashes.end()) return it->second;
  }
  auto hash = file_content_hash(canonical.string());
  if (!hash) return fail("base model '{}': {}", base, hash.error().message);
  std::lock_guard lock(mutex);
  hashes[identity] = *hash;
  return *hash;
}

struct BaseFacts {
  GgufFile file;
  std::string content_hash;
  bool synthetic = false;
};

Result<BaseFacts> read_base(const std::string& base) {
  auto file = GgufFile::open(base);
  if (!file) return fail("base model '{}': {}", base, file.error().message);
  auto hash = base_content_hash(base);
  if (!hash) return hash.error();
  const bool synthetic = is_synthetic_model(*file);
  return BaseFacts{.file = std::move(*file), .content_hash = std::move(*hash), .synthetic = synthetic};
}

fs::path cache_path(const std::string& base, const BaseFacts& facts, const FileType& type, const fs::path& dir) {
  return dir / fmt::format("{}-{}-{}{}.gguf", fs::path(base).stem().string(), facts.content_hash, type.name,
                           facts.synthetic ? "-synth" : "");
}

// A per-process temporary name beside `path` (the writers add their own PATH.tmp step; this keeps two
// producers apart), renamed into place by finish().
struct PartFile {
  fs::path path, part;
  explicit PartFile(fs::path final_path)
      : path(std::move(final_path)), part(fmt::format("{}.part-{}", path.string(), getpid())) {}
  Status finish(const char* what) const {
    std::error_code ec;
    fs::rename(part, path, ec);
    if (ec) {
      fs::remove(part, ec);
      return fail("renaming the {} model into '{}': {}", what, path.string(), ec.message());
    }
    return {};
  }
};

Status make_dir_for(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fail("model cache '{}': {}", path.parent_path().string(), ec.message());
  return {};
}

bool requantizes(const std::vector<TensorPlan>& plan) {
  for (const TensorPlan& p : plan) {
    if (p.convert() && ggml_type_traits(p.source->type).quantized) return true;
  }
  return false;
}

Result<std::vector<TensorPlan>> quantize_plan_of(const GgufFile& base, const FileType& type) {
  QuantizeOptions options;
  options.file_type = type;
  options.allow_requantize = true;  // the caller says so (ModelVariant::requantized)
  return plan_quantization(base, options);
}

Status quantize_once(const std::string& base, const GgufFile& file, const std::vector<TensorPlan>& plan,
                     const FileType& type, const fs::path& path, const VariantProgressFn& progress) {
  std::error_code ec;
  if (fs::exists(path, ec)) return {};
  if (Status s = make_dir_for(path); !s) return s;
  QuantizeOptions options;
  options.file_type = type;
  options.allow_requantize = true;
  const PartFile part(path);
  const auto each = [&](const TensorPlan&, size_t index, size_t total) {
    if (progress) progress(index + 1, total);
  };
  auto written = quantize_model(file, plan, options, part.part.string(), each);
  if (!written) {
    fs::remove(part.part, ec);
    return fail("quantizing '{}' to {}: {}", base, type.name, written.error().message);
  }
  return part.finish("quantized");
}

Status synthesize_variant(const std::string& base, const GgufFile& file, const FileType& type, const fs::path& path,
                          const VariantProgressFn& progress) {
  auto config = read_model_config(file);
  if (!config) return fail("base model '{}': {}", base, config.error().message);
  SynthRequest request{.config = std::move(*config),
                       .preset = fs::path(base).stem().string(),
                       .file_type = type,
                       .mix = {},
                       .seed = 1,
                       .threads = 0};
  SynthProgressFn each;
  if (progress) each = [&](const SynthProgress& p) { progress(p.bytes_done, p.bytes_total); };
  return synthesize_once(request, path, each);
}

}  // namespace

fs::path default_model_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "infertune" / "models";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "infertune" / "models";
  return fs::temp_directory_path() / "infertune" / "models";
}

bool is_synthetic_model(const GgufFile& file) {
  // synth writes infertune.synth.preset and .seed; the quantizer copies them into anything made from the file.
  if (file.get_string("infertune.synth.preset")) return true;
  // Files from before the provenance keys: synth named them "synthetic-<preset>".
  auto name = file.get_string("general.name");
  return name && name->starts_with("synthetic-");
}

Result<fs::path> variant_cache_path(const std::string& base, const std::string& quant, const fs::path& cache_dir) {
  auto type = file_type(quant);
  if (!type) return type.error();
  auto facts = read_base(base);
  if (!facts) return facts.error();
  return cache_path(base, *facts, *type, cache_dir);
}

Status synthesize_once(const SynthRequest& request, const fs::path& path, const SynthProgressFn& progress) {
  std::error_code ec;
  if (fs::exists(path, ec)) return {};
  if (Status s = make_dir_for(path); !s) return s;
  const PartFile part(path);
  auto written = write_synthetic_model(request, part.part.string(), progress);
  if (!written) return fail("synthesizing '{}': {}", path.string(), written.error().message);
  return part.finish("synthesized");
}

Result<ModelVariant> produce_variant(const std::string& base, const std::string& quant, const fs::path& cache_dir,
                                     const VariantProgressFn& progress) {
  auto type = file_type(quant);
  if (!type) return type.error();
  auto facts = read_base(base);
  if (!facts) return facts.error();
  ModelVariant variant;
  const fs::path path = cache_path(base, *facts, *type, cache_dir);
  variant.path = path.string();
  variant.base_content_hash = facts->content_hash;
  variant.source = facts->synthetic ? VariantSource::synthesized : VariantSource::quantized;
  if (facts->synthetic) {
    if (Status s = synthesize_variant(base, facts->file, *type, path, progress); !s) return s.error();
    return variant;
  }
  auto plan = quantize_plan_of(facts->file, *type);
  if (!plan) return fail("quantizing '{}' to {}: {}", base, type->name, plan.error().message);
  variant.requantized = requantizes(*plan);
  if (Status s = quantize_once(base, facts->file, *plan, *type, path, progress); !s) return s.error();
  return variant;
}

Result<std::string> variant_path(const std::string& base, const std::string& quant, const fs::path& cache_dir,
                                 const VariantProgressFn& progress) {
  if (quant.empty()) return base;
  auto variant = produce_variant(base, quant, cache_dir, progress);
  if (!variant) return variant.error();
  return variant->path;
}

}  // namespace infertune
