// `infertune merge OUT.db IN.db [IN.db ...]`: the sweeps of several results stores in one (sweeps/store/store_merge.h)
// — the slices of a sharded sweep, or a fleet's stores — then each merged sweep's recommendation recomputed over
// all of its trials, with the constraints and quality budget its spec asked for.
#include <fmt/format.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sweeps/recommend/recommend.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/store/results_store.h"
#include "sweeps/store/store_merge.h"
#include "sweeps/sweeps_commands.h"

namespace infertune {
namespace {

struct MergeOptions {
  std::string out;
  std::vector<std::string> inputs;
};

std::string slices_text(const std::string& shard) {
  if (shard.empty()) return "the whole plan";
  return holds_every_slice(shard) ? "the whole plan (shards " + shard + ")" : "shards " + shard;
}

std::string trials_text(size_t n) { return fmt::format("{} trial{}", n, n == 1 ? "" : "s"); }

void print_merged(const std::string& input, const MergedSweep& m) {
  fmt::print("{}: sweep {} -> sweep {}{}: {} added", input, m.source_sweep, m.sweep_id, m.created ? " (new)" : "",
             trials_text(m.trials_added));
  if (m.trials_present > 0) fmt::print(", {} already there (kept as they were)", trials_text(m.trials_present));
  fmt::print("; it now holds {}\n", slices_text(m.shard));
}

// The sweep's recommendation over its merged trials, as its spec asked (stored, replacing earlier ones).
Status recommend_merged(ResultsStore& store, int64_t sweep_id) {
  auto sweep = store.find_sweep(sweep_id);
  if (!sweep) return sweep.error();
  if (!*sweep) return fail("no sweep {}", sweep_id);
  auto text = parse_spec_yaml((*sweep)->spec, fmt::format("sweep {} spec", sweep_id));
  if (!text) return text.error();
  auto spec = resolve_spec(*text);
  if (!spec) return spec.error();
  auto report = recommend_sweep(store, sweep_id, recommend_options_for(*spec));
  if (!report) return report.error();
  return {};
}

int run_merge(const MergeOptions& o) {
  auto store = ResultsStore::open(o.out);
  if (!store) return report_error("merge", store.error().message);
  std::set<int64_t> touched;
  size_t failed = 0;
  for (const std::string& input : o.inputs) {
    auto merged = merge_store(*store, input);
    if (!merged) {
      fmt::print(stderr, "infertune merge: {}\n", merged.error().message);
      ++failed;
      continue;
    }
    if (merged->empty()) fmt::print("{}: no sweeps\n", input);
    for (const MergedSweep& m : *merged) {
      print_merged(input, m);
      touched.insert(m.sweep_id);
    }
  }
  for (int64_t id : touched) {
    if (Status s = recommend_merged(*store, id); !s) {
      fmt::print(stderr, "infertune merge: sweep {}: no recommendation: {}\n", id, s.error().message);
    } else {
      fmt::print("  infertune recommend --db {} --sweep {}\n", o.out, id);
    }
  }
  if (failed > 0) {
    return report_error("merge", fmt::format("{} of {} inputs not merged (above); {} holds the others", failed,
                                             o.inputs.size(), o.out));
  }
  return 0;
}

}  // namespace

void add_merge_command(Subcommands& commands) {
  auto options = std::make_shared<MergeOptions>();
  CLI::App* sub = commands.add(
      "merge",
      "Merge results stores into one: hosts, builds and models by identity, the slices of a sharded sweep into "
      "one sweep, each trial once; safe to run again",
      [options] { return run_merge(*options); });
  sub->add_option("out", options->out, "The store to merge into (created when absent)")->required();
  sub->add_option("inputs", options->inputs, "The stores to merge from (each unchanged)")->required();
}

}  // namespace infertune
