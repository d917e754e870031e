#include "sweeps/trial/trial_context_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "engine/settings/settings_table.h"
#include "kernels/cuda/cuda_devices.h"

namespace infertune {
namespace {

bool flag_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// `text` names `flag` as a word: "-C/--cpu-mask '0xF0'", "(use a larger -c)", but not "-t" in "-tb".
bool names_flag(std::string_view text, std::string_view flag) {
  if (flag.empty()) return false;
  for (size_t at = text.find(flag); at != std::string_view::npos; at = text.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    if ((at == 0 || !flag_char(text[at - 1])) && (end == text.size() || !flag_char(text[end]))) return true;
  }
  return false;
}

// The config fields of the sweep settings whose flags `message` names, quoted.
std::vector<std::string> fields_named(std::string_view message) {
  std::vector<std::string> fields;
  for (const Setting* s : settings_of(Command::sweep)) {
    if (names_flag(message, s->short_flag) || names_flag(message, s->long_flag) || names_flag(message, s->llama_flag)) {
      fields.push_back(fmt::format("'{}'", s->config_key));
    }
  }
  return fields;
}

}  // namespace

Result<PlacedContext> start_trial_context(const Model& model, const TrialConfig& config, GpuWeightCache* gpu_weights) {
  // A trial that asks for GPU layers measures the GPU: without one it fails, rather than recording the
  // CPU's numbers under its -ngl (make_context would fall back to the CPU).
  const int ngl = config.settings.n_gpu_layers;
  if (const std::string why = ngl != 0 ? no_cuda_gpu_reason() : ""; !why.empty()) {
    return fail("config field 'n_gpu_layers': -ngl {}: {}", ngl, why);
  }
  EngineSettings settings = config.settings;
  settings.context.gpu_weights = gpu_weights;
  auto placed = make_context(model, settings);
  if (placed) return placed;
  const std::string& message = placed.error().message;
  const std::vector<std::string> fields = fields_named(message);
  if (fields.empty()) return fail("trial context: {}", message);
  return fail("config field{} {}: {}", fields.size() == 1 ? "" : "s", fmt::join(fields, " / "), message);
}

}  // namespace infertune
