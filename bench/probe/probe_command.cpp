// `infertune probe [--json] [--refresh]`: the host's description and its roofline figures (memory
// bandwidth, compute peaks), measured once and cached per host for a week.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "bench/bench_commands.h"
#include "bench/probe/probe_cache.h"
#include "bench/probe/probe_json.h"
#include "bench/probe/probe_text.h"

namespace infertune {
namespace {

struct ProbeOptions {
  bool json = false;
  bool refresh = false;
};

int run_probe(const ProbeOptions& options) {
  auto loaded = load_or_measure_host_probe_default(options.refresh);
  if (!loaded) return report_error("probe", loaded.error().message);
  for (const auto& w : loaded->warnings) fmt::print(stderr, "infertune probe: warning: {}\n", w);
  if (options.json) {
    nlohmann::ordered_json json = host_probe_to_json(loaded->probe);
    json["cached"] = loaded->from_cache;
    fmt::print("{}\n", json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{}", host_probe_report(loaded->probe, loaded->from_cache));
  }
  return 0;
}

}  // namespace

void add_probe_command(Subcommands& commands) {
  auto options = std::make_shared<ProbeOptions>();
  CLI::App* sub = commands.add("probe",
                               "Describe this host and measure its memory bandwidth and compute peak "
                               "(cached per host for 7 days)",
                               [options] { return run_probe(*options); });
  sub->add_flag("--json", options->json, "Print JSON (stable field names) instead of text");
  sub->add_flag("--refresh", options->refresh, "Measure again even when a fresh cached probe exists");
}

}  // namespace infertune
