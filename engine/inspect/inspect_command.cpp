// `infertune inspect FILE [--json]`: what a GGUF file holds — header, metadata (long arrays abbreviated),
// tensor table, totals per type with bits per weight, and the architecture summary with the result of
// validating the hyper-parameters against the tensors.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "engine/engine_commands.h"
#include "engine/gguf/gguf_file.h"
#include "engine/inspect/architecture_summary.h"
#include "engine/inspect/tensor_totals.h"
#include "engine/inspect/value_text.h"

namespace infertune {
namespace {

struct InspectOptions {
  std::string path;
  bool json = false;
  size_t max_array_items = 8;
  bool show_tensors = true;
};

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += fmt::format("{}{}", i ? " x " : "", dims[i]);
  return s;
}

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.2f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.2f} MiB", bytes / double(1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:.2f} KiB", bytes / double(1ull << 10));
  return fmt::format("{} B", bytes);
}

void print_text(const GgufFile& file, const InspectOptions& opt) {
  fmt::print("file: {} ({} bytes), GGUF v{}, alignment {}, tensor data at offset {}\n", file.source_name(),
             file.file_size(), file.version(), file.alignment(), file.data_offset());

  fmt::print("\nmetadata ({} keys):\n", file.metadata().size());
  size_t key_width = 0;
  for (const auto& kv : file.metadata()) key_width = std::max(key_width, kv.key.size());
  for (const auto& kv : file.metadata()) {
    fmt::print("  {:<{}}  {:<6}  {}\n", kv.key, key_width, gguf_value_type_name(kv.value.type()),
               value_to_text(kv.value, opt.max_array_items));
  }

  if (opt.show_tensors) {
    fmt::print("\ntensors ({}):\n", file.tensors().size());
    size_t name_width = 4;
    for (const auto& t : file.tensors()) name_width = std::max(name_width, t.name.size());
    fmt::print("  {:<{}}  {:<7}  {:<22}  {:>12}  {:>12}\n", "name", name_width, "type", "shape", "bytes", "offset");
    for (const auto& t : file.tensors()) {
      fmt::print("  {:<{}}  {:<7}  {:<22}  {:>12}  {:>12}\n", t.name, name_width, ggml_type_name(t.type),
                 shape_text(t.dims), t.n_bytes, t.offset);
    }
  }

  const TensorTotals totals = tensor_totals(file.tensors());
  fmt::print("\ntotals: {} tensors, {} parameters ({:.2f} M), {} ({} bytes), {:.2f} bits per weight\n",
             totals.tensors, totals.parameters, totals.parameters / 1e6, bytes_text(totals.bytes), totals.bytes,
             totals.bits_per_weight());
  for (const auto& [type, t] : totals.by_type) {
    fmt::print("  {:<7} {:>5} tensors  {:>14} parameters  {:>12}  {:5.1f}% of bytes\n", ggml_type_name(type),
               t.tensors, t.parameters, bytes_text(t.bytes), totals.bytes ? 100.0 * t.bytes / totals.bytes : 0.0);
  }

  fmt::print("\n{}\n", architecture_summary_text(file));
}

nlohmann::json to_json(const GgufFile& file, const InspectOptions& opt) {
  nlohmann::json metadata = nlohmann::json::array();
  for (const auto& kv : file.metadata()) {
    metadata.push_back({{"key", kv.key},
                        {"type", std::string(gguf_value_type_name(kv.value.type()))},
                        {"value", value_to_json(kv.value, opt.max_array_items)}});
  }
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : file.tensors()) {
    tensors.push_back({{"name", t.name},
                       {"type", std::string(ggml_type_name(t.type))},
                       {"shape", t.dims},
                       {"elements", t.n_elements},
                       {"bytes", t.n_bytes},
                       {"offset", t.offset}});
  }
  const TensorTotals totals = tensor_totals(file.tensors());
  nlohmann::json by_type = nlohmann::json::object();
  for (const auto& [type, t] : totals.by_type) {
    by_type[std::string(ggml_type_name(type))] = {
        {"tensors", t.tensors}, {"parameters", t.parameters}, {"bytes", t.bytes}};
  }
  return {{"file", file.source_name()},
          {"file_bytes", file.file_size()},
          {"gguf_version", file.version()},
          {"alignment", file.alignment()},
          {"data_offset", file.data_offset()},
          {"metadata", std::move(metadata)},
          {"tensors", std::move(tensors)},
          {"totals",
           {{"tensors", totals.tensors},
            {"parameters", totals.parameters},
            {"bytes", totals.bytes},
            {"bits_per_weight", totals.bits_per_weight()},
            {"by_type", std::move(by_type)}}},
          {"architecture", architecture_summary_json(file)}};
}

int run_inspect(const InspectOptions& opt) {
  Result<GgufFile> file = GgufFile::open(opt.path);
  if (!file) return report_error("inspect", file.error().message);
  if (opt.json) {
    fmt::print("{}\n", to_json(*file, opt).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    print_text(*file, opt);
  }
  return 0;
}

}  // namespace

void add_inspect_command(Subcommands& commands) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* sub = commands.add("inspect", "Show a GGUF file's metadata, tensors, totals and architecture",
                               [opt] { return run_inspect(*opt); });
  sub->add_option("file", opt->path, "GGUF file")->required();
  sub->add_flag("--json", opt->json, "Print JSON instead of text");
  sub->add_option("--max-array", opt->max_array_items, "Array elements shown before abbreviating")
      ->capture_default_str();
  sub->add_flag("!--no-tensors", opt->show_tensors, "Leave out the tensor table (text output)");
}

}  // namespace infertune
