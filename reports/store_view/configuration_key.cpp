#include "reports/store_view/configuration_key.h"

#include <fmt/format.h>

#include <filesystem>

#include "sweeps/trial/trial_config.h"

namespace infertune {
namespace {

std::string file_name(const nlohmann::json& config) {
  const auto model = config.find("model");
  if (model == config.end() || !model->is_string()) return "";
  return std::filesystem::path(model->get<std::string>()).filename().string();
}

std::string text_of(const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// " -FLAG VALUE" when the config has the field and it differs from the value every sweep starts from.
std::string flag_unless(const nlohmann::json& config, const char* field, const char* flag, const nlohmann::json& usual) {
  const auto it = config.find(field);
  if (it == config.end() || *it == usual) return "";
  return fmt::format(" {} {}", flag, text_of(*it));
}

std::string workload_name(const nlohmann::json& config) {
  const auto it = config.find("workload");
  if (it == config.end()) return "";
  auto workload = parse_workload(*it);
  return workload ? workload->name() : it->dump();
}

}  // namespace

ConfigurationKey configuration_key(const nlohmann::json& config, const std::string& model_hash) {
  nlohmann::json identity = config;
  if (identity.is_object()) identity.erase("model");
  identity["model_identity"] = model_hash.empty() ? "file:" + file_name(config) : model_hash;

  std::string label = file_name(config);
  const std::string workload = workload_name(config);
  if (!workload.empty()) label += (label.empty() ? "" : " ") + workload;
  label += flag_unless(config, "threads", "-t", nullptr);
  label += flag_unless(config, "threads_batch", "-tb", 0);
  label += flag_unless(config, "n_gpu_layers", "-ngl", 0);
  label += flag_unless(config, "n_ctx", "-c", 0);
  label += flag_unless(config, "n_batch", "-b", nullptr);
  label += flag_unless(config, "n_ubatch", "-ub", nullptr);
  label += flag_unless(config, "n_parallel", "-np", 1);
  label += flag_unless(config, "type_k", "-ctk", "f16");
  label += flag_unless(config, "type_v", "-ctv", "f16");
  label += flag_unless(config, "flash_attn", "-fa", "auto");
  label += flag_unless(config, "numa", "--numa", "none");
  label += flag_unless(config, "cpu_mask", "-C", "0x0");
  label += flag_unless(config, "mmap", "--mmap", true);
  // nlohmann::json's default object is ordered by key, so dump() is already canonical.
  return {identity.dump(), label};
}

}  // namespace infertune
