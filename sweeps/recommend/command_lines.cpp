#include "sweeps/recommend/command_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "engine/settings/command_line.h"
#include "sweeps/recommend/candidates.h"
#include "sweeps/spec/config_fields.h"

namespace infertune {
namespace {

// The sweep's "as many as physical cores" as the host's count, so that the line runs the measured
// configuration on a machine with another count too; -tb 0 meant "as -t". Unknown cores: left to the
// command (the same default).
void resolve_threads(PlacementOptions& p, std::optional<int64_t> cores) {
  if (p.threads <= 0 && cores && *cores > 0) p.threads = static_cast<int>(*cores);
  if (p.threads_batch <= 0) p.threads_batch = p.threads;
}

std::string command(const std::string& program, const std::string& model, const std::vector<std::string>& flags) {
  std::string line = fmt::format("{} -m {}", program, shell_quote(model));
  for (const std::string& token : flags) {
    line += ' ';
    line += shell_quote(token);
  }
  return line;
}

std::vector<std::string> notes(const Candidate& candidate, const EngineSettings& settings) {
  std::vector<std::string> out;
  if (settings.placement.threads <= 0) {
    out.push_back("threads: the sweep used the number of physical cores (the commands' default)");
  }
  const std::string quant = config_text(candidate.config, "quant");
  if (!quant.empty() && candidate.model_path == config_text(candidate.config, "model")) {
    out.push_back(fmt::format("the trials ran the {} variant of this model file", quant));
  }
  return out;
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

CommandLines command_lines(const Candidate& candidate, std::optional<int64_t> host_physical_cores, bool serving) {
  EngineSettings settings = read_config_fields_or_defaults(candidate.config);
  resolve_threads(settings.placement, host_physical_cores);
  if (candidate.command_ctx > 0) settings.context.n_ctx = uint32_t(candidate.command_ctx);
  CommandLines out;
  // Parallel sequences are slots of a server: infertune serve and llama-server.
  const bool server = serving || settings.context.n_seq_max > 1;
  out.infertune = server ? command("infertune serve", candidate.model_path,
                                   setting_command_flags(settings, Command::serve, Spelling::infertune))
                         : command("infertune run", candidate.model_path,
                                   setting_command_flags(settings, Command::run, Spelling::infertune));
  out.llama_cpp = command(server ? "llama-server" : "llama-cli", candidate.model_path,
                          setting_command_flags(settings, Command::run, Spelling::llama_cpp));
  out.notes = notes(candidate, settings);
  return out;
}

}  // namespace infertune
