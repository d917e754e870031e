// `infertune sweep [SPEC.yaml] [dimension flags] --dry-run`: reads the spec, expands it into trials and
// prints the plan (groups, configurations, predicted memory, skipped ones and why). Running the trials
// is not implemented yet: without --dry-run the command says so and fails.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "sweeps/plan/plan_table.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/spec/spec_flags.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/sweeps_commands.h"

namespace infertune {

namespace {

struct SweepOptions {
  std::string spec_file;
  SpecFlagText flags;
  bool dry_run = false;
  bool json = false;
};

int run_sweep(const SweepOptions& o) {
  SpecText text;
  if (!o.spec_file.empty()) {
    auto yaml = read_spec_yaml(o.spec_file);
    if (!yaml) return report_error("sweep", yaml.error().message);
    text = std::move(*yaml);
  }
  auto spec = resolve_spec(merge_spec_flags(std::move(text), o.flags));
  if (!spec) return report_error("sweep", spec.error().message);
  if (!o.dry_run) {
    return report_error("sweep", "running the trials is not implemented yet; --dry-run prints the expanded plan");
  }
  auto plan = plan_sweep(*spec, gguf_model_shapes());
  if (!plan) return report_error("sweep", plan.error().message);
  if (o.json) {
    fmt::print("{}\n", plan_to_json(*plan).dump(2));
  } else {
    fmt::print("{}", format_plan(*spec, *plan));
  }
  return 0;
}

}  // namespace

void add_sweep_command(Subcommands& commands) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* sub =
      commands.add("sweep", "Expand a sweep spec (YAML and/or flags) into trials; --dry-run prints the plan",
                   [options] { return run_sweep(*options); });
  sub->add_option("spec", options->spec_file, "The sweep spec (YAML); flags replace its keys");
  sub->add_flag("--dry-run", options->dry_run, "Print the expanded trials, grouped, with predicted memory");
  sub->add_flag("--json", options->json, "With --dry-run: the plan as JSON");
  add_sweep_spec_flags(*sub, options->flags);
}

}  // namespace infertune
