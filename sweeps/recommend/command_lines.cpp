#include "sweeps/recommend/command_lines.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "sweeps/recommend/candidates.h"

namespace infertune {
namespace {

// The settings both commands take, resolved.
struct Settings {
  std::string model;
  std::optional<int64_t> threads, threads_batch;  // none: the command's own default (physical cores)
  int64_t n_ctx = 0, n_batch = 0, n_ubatch = 0, n_parallel = 1, n_gpu_layers = 0;
  std::string type_k, type_v, flash_attn, numa, cpu_mask;
  bool mmap = true;
};

Settings settings_of(const Candidate& c, std::optional<int64_t> cores) {
  const nlohmann::json& j = c.config;
  Settings s;
  s.model = c.model_path;
  const int64_t t = config_int(j, "threads", 0), tb = config_int(j, "threads_batch", 0);
  if (t > 0)
    s.threads = t;
  else if (cores && *cores > 0)
    s.threads = cores;
  if (tb > 0)
    s.threads_batch = tb;
  else
    s.threads_batch = s.threads;
  s.n_ctx = config_int(j, "n_ctx", 0);
  s.n_batch = config_int(j, "n_batch", 2048);
  s.n_ubatch = config_int(j, "n_ubatch", 512);
  s.n_parallel = config_int(j, "n_parallel", 1);
  s.n_gpu_layers = config_int(j, "n_gpu_layers", 0);
  s.type_k = config_text(j, "type_k", "f16");
  s.type_v = config_text(j, "type_v", "f16");
  s.flash_attn = config_text(j, "flash_attn", "auto");
  s.numa = config_text(j, "numa", "none");
  s.cpu_mask = config_text(j, "cpu_mask", "0x0");
  auto mmap = j.find("mmap");
  s.mmap = mmap == j.end() || !mmap->is_boolean() || mmap->get<bool>();
  return s;
}

bool numa_given(const Settings& s) { return !s.numa.empty() && s.numa != "none"; }
bool mask_given(const Settings& s) { return !s.cpu_mask.empty() && s.cpu_mask != "0x0" && s.cpu_mask != "0"; }

// The flags both spell alike, in llama.cpp's usual order.
std::vector<std::string> common_flags(const Settings& s) {
  std::vector<std::string> f{"-m", shell_quote(s.model)};
  if (s.threads) f.insert(f.end(), {"-t", std::to_string(*s.threads)});
  if (s.threads_batch) f.insert(f.end(), {"-tb", std::to_string(*s.threads_batch)});
  f.insert(f.end(), {"-c", std::to_string(s.n_ctx), "-b", std::to_string(s.n_batch), "-ub", std::to_string(s.n_ubatch),
                     "-ctk", shell_quote(s.type_k), "-ctv", shell_quote(s.type_v), "-fa", shell_quote(s.flash_attn)});
  if (numa_given(s)) f.insert(f.end(), {"--numa", shell_quote(s.numa)});
  if (mask_given(s)) f.insert(f.end(), {"-C", shell_quote(s.cpu_mask)});
  if (!s.mmap) f.push_back("--no-mmap");
  return f;
}

std::string join(const std::string& program, const std::vector<std::string>& flags) {
  return fmt::format("{} {}", program, fmt::join(flags, " "));
}

}  // namespace

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && std::ranges::all_of(text, [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) ||
           std::string_view("-_./:=+,@%").find(ch) != std::string_view::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

CommandLines command_lines(const Candidate& candidate, std::optional<int64_t> host_physical_cores) {
  const Settings s = settings_of(candidate, host_physical_cores);
  CommandLines out;
  const std::vector<std::string> flags = common_flags(s);
  out.infertune = join("infertune run", flags);

  std::vector<std::string> llama = flags;
  if (s.n_gpu_layers != 0) llama.insert(llama.end(), {"-ngl", std::to_string(s.n_gpu_layers)});
  if (s.n_parallel > 1) llama.insert(llama.end(), {"-np", std::to_string(s.n_parallel)});
  out.llama_cpp = join(s.n_parallel > 1 ? "llama-server" : "llama-cli", llama);

  if (s.n_parallel > 1) {
    out.notes.push_back(
        fmt::format("-np {}: infertune run decodes one sequence and `infertune serve` does not exist yet, so only the "
                    "llama.cpp line (llama-server) serves {} parallel sequences",
                    s.n_parallel, s.n_parallel));
  }
  if (s.n_gpu_layers != 0) {
    out.notes.push_back(
        fmt::format("-ngl {}: infertune run has no GPU offload flag; only llama.cpp takes it", s.n_gpu_layers));
  }
  if (!s.threads) out.notes.push_back("threads: the sweep used the number of physical cores (the commands' default)");
  const std::string quant = config_text(candidate.config, "quant");
  if (!quant.empty() && s.model == config_text(candidate.config, "model")) {
    out.notes.push_back(fmt::format("the trials ran the {} variant of this model file", quant));
  }
  return out;
}

}  // namespace infertune
