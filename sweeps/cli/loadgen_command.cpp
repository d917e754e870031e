// `infertune loadgen`: drives an OpenAI-compatible server (infertune serve, llama.cpp's llama-server, vLLM, ...)
// with streamed requests at load levels and reports latency percentiles, throughput and goodput per level.
//
//   infertune loadgen --url http://127.0.0.1:8080 -c 1,4,8 -n 32 --prompt-tokens 90 --max-tokens 32
//   infertune loadgen --rate 0.5,1,2 --slo-ttft 500ms --slo-itl 100ms -o json
//   infertune loadgen -c 1,4,8 --db results.db          (the levels also recorded as a sweep of the store)
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/loadgen/load_options.h"
#include "bench/loadgen/load_report.h"
#include "bench/loadgen/load_runner.h"
#include "bench/loadgen/load_summary.h"
#include "bench/loadgen/prompt_source.h"
#include "bench/loadgen/stream_request.h"
#include "bench/probe/host_fingerprint.h"
#include "bench/probe/host_info.h"
#include "bench/probe/probe_cache.h"
#include "engine/cli/flag_ranges.h"
#include "sweeps/run/load_level_records.h"
#include "sweeps/store/record_sources.h"
#include "sweeps/store/results_store.h"
#include "sweeps/sweeps_commands.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "loadgen";

struct LoadgenFlags {
  LoadOptions options;
  std::string api = "completions";
  std::string prompt_tokens = "90";
  std::string slo_ttft, slo_itl;
  std::string format = "md";
  bool no_ignore_eos = false;
  std::string db;  // --db: also record the levels in this results store
};

// The first model the server lists, for servers that want a name.
Result<std::string> served_model(const LoadOptions& options) {
  auto client = make_client(options);
  auto res = client->Get("/v1/models");
  if (!res) return fail("cannot reach {}: {}", options.url, httplib::to_string(res.error()));
  if (res->status != 200)
    return fail("{}/v1/models answered {}: {}", options.url, res->status, res->body.substr(0, 200));
  const auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (body.is_discarded() || !body.contains("data") || body["data"].empty() || !body["data"][0].contains("id")) {
    return fail("{}/v1/models lists no model; name one with --model", options.url);
  }
  return body["data"][0]["id"].get<std::string>();
}

// This machine's row of the store (the clients ran here; the server is the config's endpoint): the store's own row
// for its fingerprint when it has one (never overwritten: it may hold a sweep's measured probe), else one made from
// the cached probe, else from the host description alone (loadgen does not spend a probe's time measuring a
// machine it only sends requests from).
Result<int64_t> loadgen_host(ResultsStore& store) {
  auto topology = read_host_topology();
  if (!topology) return topology.error();
  HostProbe probe;
  probe.host = topology->info;
  probe.fingerprint = host_fingerprint(probe.host);
  auto query = store.database().prepare("SELECT id FROM hosts WHERE fingerprint = ?");
  if (!query) return query.error();
  query->bind(1, probe.fingerprint);
  auto row = query->step();
  if (!row) return row.error();
  if (*row) return query->column_int(0);
  if (auto dir = default_probe_cache_dir()) {
    const ProbeCacheOptions cache{.dir = *dir,
                                  .now_unix = std::chrono::duration_cast<std::chrono::seconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count()};
    const MeasureProbe none = [](const HostTopology&) -> Result<HostProbe> { return fail("no cached probe"); };
    if (auto cached = load_or_measure_host_probe(*topology, cache, none)) probe = cached->probe;
  }
  return store.upsert_host(host_record(probe));
}

Status record_in_store(const std::string& path, const LoadOptions& options, const std::vector<LevelRun>& runs,
                       const std::vector<LevelSummary>& summaries) {
  auto store = ResultsStore::open(path);
  if (!store) return store.error();
  auto host = loadgen_host(*store);
  if (!host) return host.error();
  auto build = store->upsert_build(this_build_record());
  if (!build) return build.error();
  auto sweep = record_load_levels(*store, *host, *build, options, runs, summaries);
  if (!sweep) return sweep.error();
  fmt::print(stderr, "loadgen: recorded as sweep {} of {}\n", *sweep, path);
  return {};
}

Result<LoadFormat> parse_format(const std::string& name) {
  if (name == "md") return LoadFormat::md;
  if (name == "csv") return LoadFormat::csv;
  if (name == "json") return LoadFormat::json;
  if (name == "jsonl") return LoadFormat::jsonl;
  return fail("-o: unknown format '{}' (md, csv, json, jsonl)", name);
}

Status finish_options(LoadgenFlags& flags) {
  LoadOptions& o = flags.options;
  auto range = parse_length_range(flags.prompt_tokens);
  if (!range) return fail("--prompt-tokens: {}", range.error().message);
  o.prompt_tokens = *range;
  o.api = flags.api == "chat" ? LoadApi::chat : LoadApi::completions;
  o.ignore_eos = !flags.no_ignore_eos;
  for (auto [text, slo] : {std::pair{&flags.slo_ttft, &o.slo_ttft_s}, std::pair{&flags.slo_itl, &o.slo_itl_s}}) {
    if (text->empty()) continue;
    auto seconds = parse_duration_seconds(*text);
    if (!seconds) return fail("--slo-{}: {}", slo == &o.slo_ttft_s ? "ttft" : "itl", seconds.error().message);
    *slo = *seconds;
  }
  if (o.concurrency.empty() && o.rates.empty()) o.concurrency = {1};
  for (double r : o.rates) {
    if (!(r > 0 && r <= 1e4)) return fail("--rate: {} is not a rate in (0, 10000] requests per second", r);
  }
  return {};
}

int run_loadgen(LoadgenFlags& flags) {
  if (Status s = finish_options(flags); !s) return report_error(kCommand, s.error().message);
  auto format = parse_format(flags.format);
  if (!format) return report_error(kCommand, format.error().message);
  LoadOptions& o = flags.options;
  if (o.model.empty()) {
    auto model = served_model(o);
    if (!model) return report_error(kCommand, model.error().message);
    o.model = *model;
  }
  PromptSource prompts = PromptSource::synthetic(o, 1.3);
  if (!o.prompts_file.empty()) {
    auto from_file = PromptSource::from_jsonl(o.prompts_file, o.api);
    if (!from_file) return report_error(kCommand, from_file.error().message);
    prompts = std::move(*from_file);
  } else {
    prompts = PromptSource::synthetic(o, server_tokens_per_word(o));
  }
  fmt::print(stderr, "loadgen: {} model {} ({}), {} measured requests per level after {} warm-up, {} tokens out\n",
             o.url, o.model, flags.api, o.requests, o.warmup, o.max_tokens);
  std::vector<LevelRun> runs;
  std::vector<LevelSummary> summaries;
  for (const LoadLevel& level : load_levels(o)) {
    runs.push_back(run_level(o, level, prompts));
    const LevelRun& run = runs.back();
    summaries.push_back(summarize(run, o));
    const LevelSummary& s = summaries.back();
    fmt::print(stderr, "loadgen: {}: {} requests in {:.1f} s, {} errors{}\n", level_name(level), s.requests, s.wall_s,
               s.errors, s.errors ? " (first: " + s.first_error + ")" : "");
  }
  fmt::print("{}", format_summaries(summaries, o, *format));
  if (!flags.db.empty()) {
    if (Status s = record_in_store(flags.db, o, runs, summaries); !s) {
      return report_error(kCommand, fmt::format("--db {}: {}", flags.db, s.error().message));
    }
  }
  for (const LevelSummary& s : summaries) {
    if (s.errors < s.requests) return 0;
  }
  return report_error(kCommand, "every request failed");
}

}  // namespace

void add_loadgen_command(Subcommands& commands) {
  auto flags = std::make_shared<LoadgenFlags>();
  CLI::App* app = commands.add("loadgen",
                               "Drive an OpenAI-compatible server with streamed requests at set concurrencies or "
                               "arrival rates; latency percentiles, throughput and goodput per level",
                               [flags] { return run_loadgen(*flags); });
  LoadOptions& o = flags->options;
  app->add_option("--url", o.url, "The server (default http://127.0.0.1:8080)");
  app->add_option("--api-key", o.api_key, "Sent as 'Authorization: Bearer KEY'");
  app->add_option("--model", o.model, "Model name sent in requests (default: the first of /v1/models)");
  app->add_option("--api", flags->api, "completions or chat (default completions)")
      ->check(CLI::IsMember({"completions", "chat"}));
  app->add_option("-c,--concurrency", o.concurrency, "Closed-loop levels: clients sending back to back (list)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app->add_option("--rate", o.rates, "Open-loop levels: Poisson arrivals per second (list)")->delimiter(',');
  app->add_option("-n,--requests", o.requests, "Measured requests per level (default 32)")
      ->check(CLI::Range(1, 1000000));
  app->add_option("--warmup", o.warmup, "Unmeasured requests before each level (default 2)");
  app->add_option("--prompt-tokens", flags->prompt_tokens, "Synthetic prompt length: N or LOW:HIGH (default 90)");
  app->add_option("--max-tokens", o.max_tokens, "Tokens to generate per request (default 32)")
      ->check(CLI::Range(1, 1000000));
  app->add_option("--shared-prefix", o.shared_prefix,
                  "Fraction of each synthetic prompt that all requests share (a system prompt; default 0)")
      ->check(CLI::Range(0.0, 1.0));
  app->add_option("--prompts", o.prompts_file, "JSONL file of prompts ({\"prompt\": ...} or {\"messages\": [...]})");
  app->add_flag("--no-ignore-eos", flags->no_ignore_eos,
                "Let the model stop at its end token (default: ask for exactly --max-tokens with ignore_eos)");
  app->add_option("--slo-ttft", flags->slo_ttft, "SLO on time to first token for goodput (500ms, 1s)");
  app->add_option("--slo-itl", flags->slo_itl, "SLO on time per output token for goodput (100ms)");
  app->add_option("--seed", o.seed, "Seed of prompt draws and arrival times (default 1)");
  app->add_option("--timeout", o.timeout_s, "Per-request read timeout, seconds (default 600)")
      ->check(CLI::Range(1, 86400));
  app->add_option("-o,--output", flags->format, "md, csv, json or jsonl (default md)");
  app->add_option("--db", flags->db, "Also record the levels in this results store (a sweep; report, export)");
}

}  // namespace infertune
