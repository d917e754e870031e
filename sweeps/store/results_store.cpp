#include "sweeps/store/results_store.h"

#include <cmath>
#include <map>

#include "sweeps/store/migrations.h"
#include "sweeps/store/schema.h"
#include "sweeps/store/sqlite_transaction.h"
#include "sweeps/store/time_text.h"

namespace infertune {
namespace {

std::optional<std::string_view> null_if_empty(std::string_view text) {
  if (text.empty()) return std::nullopt;
  return text;
}

constexpr std::string_view kSweepColumns =
    "SELECT id, spec, spec_hash, status, host_id, build_id, started_at, finished_at, shard FROM sweeps";

SweepRecord read_sweep(const Statement& row) {
  SweepRecord sweep;
  sweep.id = row.column_int(0);
  sweep.spec = row.column_text(1);
  sweep.spec_hash = row.column_text(2);
  sweep.status = parse_sweep_status(row.column_text(3)).value_or(SweepStatus::failed);
  sweep.host_id = row.column_int(4);
  sweep.build_id = row.column_int(5);
  sweep.started_at = row.column_text(6);
  sweep.finished_at = row.column_text(7);
  sweep.shard = row.column_text(8);
  return sweep;
}

Result<std::optional<SweepRecord>> first_sweep(Statement& statement) {
  auto row = statement.step();
  if (!row) return row.error();
  if (!*row) return std::optional<SweepRecord>();
  return std::optional<SweepRecord>(read_sweep(statement));
}

}  // namespace

Result<std::vector<MetricRecord>> summarize_samples(const std::vector<Sample>& samples) {
  std::map<std::string, std::vector<double>> measured;
  for (const Sample& s : samples) {
    if (!std::isfinite(s.value)) {
      return fail("sample of '{}' (repetition {}) is {}", s.metric, s.repetition, s.value);
    }
    if (s.metric.empty()) return fail("a sample without a metric name (repetition {})", s.repetition);
    if (!s.is_warmup) measured[s.metric].push_back(s.value);
  }
  std::vector<MetricRecord> metrics;
  for (const auto& [metric, values] : measured) {
    auto summary = summarize(values);
    if (!summary) return fail("metric '{}': {}", metric, summary.error().message);
    metrics.push_back({metric, *summary});
  }
  return metrics;
}

// An infertune store has the schema_version table and the trials table; an empty file has neither (and is
// no store either: SQLite would turn it into one on the first write).
Status check_is_infertune_store(Database& db) {
  const std::string file = db.path().string();
  auto tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
  if (!tables) return tables.error();
  std::set<std::string> names;
  for (;;) {
    auto row = tables->step();
    if (!row) return fail("{}: not an infertune results store ({})", file, row.error().message);
    if (!*row) break;
    names.insert(tables->column_text(0));
  }
  if (names.empty()) return fail("{}: not an infertune results store (the database is empty)", file);
  if (!names.contains("schema_version") || !names.contains("trials")) {
    std::string listed;
    for (const std::string& n : names) listed += (listed.empty() ? "" : ", ") + n;
    if (listed.size() > 120) listed = listed.substr(0, 117) + "...";
    return fail("{}: not an infertune results store (its tables are {}; a store has schema_version, trials, ...)", file,
                listed);
  }
  return {};
}

Result<ResultsStore> ResultsStore::open_read_only(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return fail("results store {}: no such file", path.string());
  if (std::filesystem::is_regular_file(path, error) && std::filesystem::file_size(path, error) == 0) {
    return fail("{}: not an infertune results store (the file is empty)", path.string());
  }
  auto db = Database::open(path, {.create = false, .read_only = true});
  if (!db) return db.error();
  if (Status s = check_is_infertune_store(*db); !s) return s.error();
  auto version = schema_version(*db);
  if (!version) return version.error();
  const int latest = store_schema_version();
  if (*version > latest) {
    return fail(
        "results store {}: schema version {} is newer than this infertune understands ({}); use a newer "
        "infertune",
        path.string(), *version, latest);
  }
  if (*version == latest) return ResultsStore(std::move(*db));
  auto copy = db->copy_to_memory();
  if (!copy) return copy.error();
  if (Status s = migrate(*copy, store_migrations()); !s) return s.error();
  return ResultsStore(std::move(*copy));
}

Result<ResultsStore> ResultsStore::open(const std::filesystem::path& path, const DatabaseOptions& options) {
  auto db = Database::open(path, options);
  if (!db) return db.error();
  if (Status s = migrate(*db, store_migrations()); !s) return s.error();
  return ResultsStore(std::move(*db));
}

Result<int64_t> ResultsStore::insert_returning_id(Statement& statement) {
  auto row = statement.step();
  if (!row) return row.error();
  if (!*row) return fail("results store {}: no id returned (SQL: {})", db_.path().string(), statement.sql());
  const int64_t id = statement.column_int(0);
  if (Status s = statement.run(); !s) return s.error();
  return id;
}

Result<int64_t> ResultsStore::upsert_host(const HostRecord& host) {
  auto statement = db_.prepare(
      "INSERT INTO hosts (fingerprint, cpu_model, cpu_features, physical_cores, hardware_threads, memory_bytes,"
      " numa_nodes, gpus, read_bandwidth_gbs, probe, first_seen, last_seen)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)"
      " ON CONFLICT (fingerprint) DO UPDATE SET cpu_model = excluded.cpu_model,"
      " cpu_features = excluded.cpu_features, physical_cores = excluded.physical_cores,"
      " hardware_threads = excluded.hardware_threads, memory_bytes = excluded.memory_bytes,"
      " numa_nodes = excluded.numa_nodes, gpus = excluded.gpus,"
      " read_bandwidth_gbs = coalesce(excluded.read_bandwidth_gbs, read_bandwidth_gbs),"
      " probe = excluded.probe, last_seen = excluded.last_seen"
      " RETURNING id");
  if (!statement) return statement.error();
  if (host.fingerprint.empty()) return fail("results store {}: a host without a fingerprint", db_.path().string());
  statement->bind(1, host.fingerprint)
      .bind(2, host.cpu_model)
      .bind(3, host.cpu_features)
      .bind(4, host.physical_cores)
      .bind(5, host.hardware_threads)
      .bind(6, host.memory_bytes)
      .bind(7, host.numa_nodes_json)
      .bind(8, host.gpus_json)
      .bind(9, host.read_bandwidth_gbs)
      .bind(10, host.probe_json)
      .bind(11, utc_now_text());
  return insert_returning_id(*statement);
}

Result<int64_t> ResultsStore::upsert_build(const BuildRecord& build) {
  // The no-op update makes RETURNING give the existing row's id.
  auto statement = db_.prepare(
      "INSERT INTO builds (version, git_commit, compiler, build_type, flags, backends, kernel_variants, first_seen)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (version, git_commit, compiler, build_type, flags, backends, kernel_variants)"
      " DO UPDATE SET version = excluded.version RETURNING id");
  if (!statement) return statement.error();
  statement->bind(1, build.version)
      .bind(2, build.git_commit)
      .bind(3, build.compiler)
      .bind(4, build.build_type)
      .bind(5, build.flags)
      .bind(6, build.backends)
      .bind(7, build.kernel_variants)
      .bind(8, utc_now_text());
  return insert_returning_id(*statement);
}

Result<int64_t> ResultsStore::upsert_model(const ModelRecord& model) {
  auto statement = db_.prepare(
      "INSERT INTO models (content_hash, path, arch, n_params, file_bytes, type_mix, first_seen)"
      " VALUES (?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (content_hash) DO UPDATE SET path = excluded.path, arch = excluded.arch,"
      " n_params = excluded.n_params, file_bytes = excluded.file_bytes, type_mix = excluded.type_mix"
      " RETURNING id");
  if (!statement) return statement.error();
  if (model.content_hash.empty())
    return fail("results store {}: model {} has no content hash", db_.path().string(), model.path);
  statement->bind(1, model.content_hash)
      .bind(2, model.path)
      .bind(3, model.arch)
      .bind(4, model.n_params)
      .bind(5, model.file_bytes)
      .bind(6, model.type_mix_json)
      .bind(7, utc_now_text());
  return insert_returning_id(*statement);
}

Result<int64_t> ResultsStore::create_sweep(const NewSweep& sweep) {
  auto statement = db_.prepare(
      "INSERT INTO sweeps (spec, spec_hash, status, host_id, build_id, started_at, shard)"
      " VALUES (?, ?, 'running', ?, ?, ?, ?) RETURNING id");
  if (!statement) return statement.error();
  statement->bind(1, sweep.spec).bind(2, sweep.spec_hash).bind(3, sweep.host_id).bind(4, sweep.build_id);
  statement->bind(5, utc_now_text());
  if (sweep.shard.empty()) {
    statement->bind(6, std::nullopt);
  } else {
    statement->bind(6, sweep.shard);
  }
  return insert_returning_id(*statement);
}

Result<std::optional<SweepRecord>> ResultsStore::find_sweep(int64_t id) {
  auto statement = db_.prepare(std::string(kSweepColumns) + " WHERE id = ?");
  if (!statement) return statement.error();
  statement->bind(1, id);
  auto sweep = first_sweep(*statement);
  // SQLite answers a lookup in a damaged b-tree with whatever row the search lands on, without an error: a row
  // that is not the one asked for is refused, or a report would show another sweep's trials under this id.
  if (sweep && *sweep && (*sweep)->id != id) {
    return fail(
        "results store {} is damaged: looking up sweep {} found sweep {} (sqlite3 FILE 'PRAGMA integrity_check' "
        "says where)",
        db_.path().string(), id, (*sweep)->id);
  }
  return sweep;
}

Result<std::optional<SweepRecord>> ResultsStore::find_latest_sweep(std::string_view spec_hash, std::string_view shard) {
  auto statement = db_.prepare(std::string(kSweepColumns) +
                               " WHERE spec_hash = ? AND coalesce(shard, '') = ? ORDER BY id DESC LIMIT 1");
  if (!statement) return statement.error();
  statement->bind(1, spec_hash).bind(2, shard);
  return first_sweep(*statement);
}

Status ResultsStore::set_sweep_status(int64_t id, SweepStatus status) {
  auto statement = db_.prepare("UPDATE sweeps SET status = ?, finished_at = ? WHERE id = ?");
  if (!statement) return statement.error();
  const bool finished = status != SweepStatus::running;
  statement->bind(1, to_string(status)).bind(2, finished ? std::optional(utc_now_text()) : std::nullopt).bind(3, id);
  if (Status s = statement->run(); !s) return s;
  if (sqlite3_changes(db_.handle()) == 0) return fail("results store {}: no sweep {}", db_.path().string(), id);
  return {};
}

Result<std::optional<int64_t>> ResultsStore::find_trial(int64_t sweep_id, std::string_view config_hash) {
  auto statement = db_.prepare("SELECT id FROM trials WHERE sweep_id = ? AND config_hash = ?");
  if (!statement) return statement.error();
  statement->bind(1, sweep_id).bind(2, config_hash);
  auto row = statement->step();
  if (!row) return row.error();
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>(statement->column_int(0));
}

Result<int64_t> ResultsStore::record_trial(const TrialRecord& trial) {
  const std::string where =
      fmt::format("results store {}: trial {} of sweep {}", db_.path().string(), trial.config_hash, trial.sweep_id);
  if (trial.config_hash.empty()) return fail("results store {}: a trial without a config hash", db_.path().string());
  // Summaries first: a bad sample is refused before the write lock is taken.
  auto metrics = summarize_samples(trial.samples);
  if (!metrics) return fail("{}: {}", where, metrics.error().message);

  auto transaction = Transaction::begin_immediate(db_);
  if (!transaction) return transaction.error();
  auto existing = find_trial(trial.sweep_id, trial.config_hash);
  if (!existing) return existing.error();
  if (*existing)
    return fail("{}: already recorded (trial id {}); a trial is recorded once per sweep", where, **existing);

  auto insert = db_.prepare(
      "INSERT INTO trials (sweep_id, config_hash, config, model_id, status, reason, predicted_peak_rss_bytes,"
      " peak_rss_bytes, started_at, finished_at, duration_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
  if (!insert) return insert.error();
  insert->bind(1, trial.sweep_id)
      .bind(2, trial.config_hash)
      .bind(3, trial.config_json)
      .bind(4, trial.model_id)
      .bind(5, to_string(trial.status))
      .bind(6, null_if_empty(trial.reason))
      .bind(7, trial.predicted_peak_rss_bytes)
      .bind(8, trial.peak_rss_bytes)
      .bind(9, null_if_empty(trial.started_at))
      .bind(10, null_if_empty(trial.finished_at))
      .bind(11, trial.duration_s);
  auto id = insert_returning_id(*insert);
  if (!id) return id.error();
  if (Status s = insert_samples(*id, trial.samples); !s) return s.error();
  if (Status s = insert_metrics(*id, *metrics); !s) return s.error();
  if (Status s = transaction->commit(); !s) return s.error();
  return *id;
}

Status ResultsStore::insert_samples(int64_t trial_id, const std::vector<Sample>& samples) {
  auto insert =
      db_.prepare("INSERT INTO samples (trial_id, metric, repetition, value, is_warmup) VALUES (?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  for (const Sample& s : samples) {
    insert->reset();
    insert->bind(1, trial_id).bind(2, s.metric).bind(3, s.repetition).bind(4, s.value).bind(5, s.is_warmup);
    if (Status st = insert->run(); !st) return st;
  }
  return {};
}

Status ResultsStore::insert_metrics(int64_t trial_id, const std::vector<MetricRecord>& metrics) {
  auto insert = db_.prepare(
      "INSERT INTO metrics (trial_id, metric, n, mean, stddev, median, p50, p95, p99, ci95_half_width)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  for (const MetricRecord& m : metrics) {
    const SampleSummary& s = m.summary;
    insert->reset();
    insert->bind(1, trial_id).bind(2, m.metric).bind(3, s.n).bind(4, s.mean).bind(5, s.stddev).bind(6, s.median);
    insert->bind(7, s.p50).bind(8, s.p95).bind(9, s.p99).bind(10, s.ci95_half_width);
    if (Status st = insert->run(); !st) return st;
  }
  return {};
}

Result<std::set<std::string>> ResultsStore::done_config_hashes(int64_t sweep_id) {
  auto query = db_.prepare("SELECT config_hash FROM trials WHERE sweep_id = ?");
  if (!query) return query.error();
  query->bind(1, sweep_id);
  std::set<std::string> hashes;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return hashes;
    hashes.insert(query->column_text(0));
  }
}

Result<std::vector<MetricRecord>> ResultsStore::read_metrics(int64_t trial_id) {
  auto query = db_.prepare(
      "SELECT metric, n, mean, stddev, median, p50, p95, p99, ci95_half_width FROM metrics WHERE trial_id = ?"
      " ORDER BY metric");
  if (!query) return query.error();
  query->bind(1, trial_id);
  std::vector<MetricRecord> metrics;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return metrics;
    MetricRecord& m = metrics.emplace_back();
    m.metric = query->column_text(0);
    m.summary.n = static_cast<size_t>(query->column_int(1));
    m.summary.mean = query->column_double(2);
    m.summary.stddev = query->column_optional_double(3);
    m.summary.median = query->column_double(4);
    m.summary.p50 = query->column_double(5);
    m.summary.p95 = query->column_double(6);
    m.summary.p99 = query->column_double(7);
    m.summary.ci95_half_width = query->column_optional_double(8);
  }
}

Result<std::vector<StoredTrial>> ResultsStore::trials(int64_t sweep_id) {
  auto query = db_.prepare(
      "SELECT id, sweep_id, config_hash, config, model_id, status, reason, predicted_peak_rss_bytes,"
      " peak_rss_bytes, started_at, finished_at, duration_s FROM trials WHERE sweep_id = ? ORDER BY id");
  if (!query) return query.error();
  query->bind(1, sweep_id);
  std::vector<StoredTrial> trials;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) break;
    StoredTrial& stored = trials.emplace_back();
    stored.id = query->column_int(0);
    TrialRecord& t = stored.trial;
    t.sweep_id = query->column_int(1);
    t.config_hash = query->column_text(2);
    t.config_json = query->column_text(3);
    t.model_id = query->column_optional_int(4);
    t.status = parse_trial_status(query->column_text(5)).value_or(TrialStatus::failed);
    t.reason = query->column_text(6);
    t.predicted_peak_rss_bytes = query->column_optional_int(7);
    t.peak_rss_bytes = query->column_optional_int(8);
    t.started_at = query->column_text(9);
    t.finished_at = query->column_text(10);
    t.duration_s = query->column_optional_double(11);
  }
  for (StoredTrial& stored : trials) {
    auto metrics = read_metrics(stored.id);
    if (!metrics) return metrics.error();
    stored.metrics = std::move(*metrics);
  }
  return trials;
}

Result<std::vector<Sample>> ResultsStore::samples(int64_t trial_id) {
  auto query = db_.prepare("SELECT metric, repetition, value, is_warmup FROM samples WHERE trial_id = ? ORDER BY id");
  if (!query) return query.error();
  query->bind(1, trial_id);
  std::vector<Sample> samples;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return samples;
    samples.push_back(
        {query->column_text(0), query->column_int(1), query->column_double(2), query->column_int(3) != 0});
  }
}

Status ResultsStore::record_variant_quality(const VariantQualityRecord& q) {
  auto statement = db_.prepare(
      "INSERT INTO variant_quality (sweep_id, model_id, base_model_id, quant, status, reason, corpus, n_ctx, n_chunks,"
      " positions, ppl, ppl_error, base_ppl, kld_mean, kld_error, kld_p99, kld_max, same_top, measured_at)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (sweep_id, model_id) DO UPDATE SET base_model_id = excluded.base_model_id,"
      " quant = excluded.quant, status = excluded.status, reason = excluded.reason, corpus = excluded.corpus,"
      " n_ctx = excluded.n_ctx, n_chunks = excluded.n_chunks, positions = excluded.positions, ppl = excluded.ppl,"
      " ppl_error = excluded.ppl_error, base_ppl = excluded.base_ppl, kld_mean = excluded.kld_mean,"
      " kld_error = excluded.kld_error, kld_p99 = excluded.kld_p99, kld_max = excluded.kld_max,"
      " same_top = excluded.same_top, measured_at = excluded.measured_at");
  if (!statement) return statement.error();
  const auto text_or_null = [](const std::string& t) { return t.empty() ? std::nullopt : std::optional(t); };
  statement->bind(1, q.sweep_id)
      .bind(2, q.model_id)
      .bind(3, q.base_model_id)
      .bind(4, q.quant)
      .bind(5, to_string(q.status))
      .bind(6, text_or_null(q.reason))
      .bind(7, text_or_null(q.corpus))
      .bind(8, q.n_ctx)
      .bind(9, q.n_chunks)
      .bind(10, q.positions)
      .bind(11, q.ppl)
      .bind(12, q.ppl_error)
      .bind(13, q.base_ppl)
      .bind(14, q.kld_mean)
      .bind(15, q.kld_error)
      .bind(16, q.kld_p99)
      .bind(17, q.kld_max)
      .bind(18, q.same_top)
      .bind(19, utc_now_text());
  if (Status s = statement->run(); !s) {
    return fail("results store {}: quality of model {} in sweep {}: {}", db_.path().string(), q.model_id, q.sweep_id,
                s.error().message);
  }
  return {};
}

Result<std::vector<VariantQualityRecord>> ResultsStore::variant_quality(int64_t sweep_id) {
  auto query = db_.prepare(
      "SELECT sweep_id, model_id, base_model_id, quant, status, reason, corpus, n_ctx, n_chunks, positions, ppl,"
      " ppl_error, base_ppl, kld_mean, kld_error, kld_p99, kld_max, same_top FROM variant_quality"
      " WHERE sweep_id = ? ORDER BY model_id");
  if (!query) return query.error();
  query->bind(1, sweep_id);
  std::vector<VariantQualityRecord> rows;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return rows;
    VariantQualityRecord& q = rows.emplace_back();
    q.sweep_id = query->column_int(0);
    q.model_id = query->column_int(1);
    q.base_model_id = query->column_optional_int(2);
    q.quant = query->column_text(3);
    const auto status = parse_quality_status(query->column_text(4));
    if (!status) {
      return fail("results store {}: sweep {}: unknown quality status '{}'", db_.path().string(), sweep_id,
                  query->column_text(4));
    }
    q.status = *status;
    q.reason = query->column_optional_text(5).value_or("");
    q.corpus = query->column_optional_text(6).value_or("");
    q.n_ctx = query->column_optional_int(7);
    q.n_chunks = query->column_optional_int(8);
    q.positions = query->column_optional_int(9);
    q.ppl = query->column_optional_double(10);
    q.ppl_error = query->column_optional_double(11);
    q.base_ppl = query->column_optional_double(12);
    q.kld_mean = query->column_optional_double(13);
    q.kld_error = query->column_optional_double(14);
    q.kld_p99 = query->column_optional_double(15);
    q.kld_max = query->column_optional_double(16);
    q.same_top = query->column_optional_double(17);
  }
}

Result<int64_t> ResultsStore::add_recommendation(int64_t sweep_id, std::string_view scenario,
                                                 std::optional<int64_t> trial_id, std::string_view details_json) {
  auto insert = db_.prepare(
      "INSERT INTO recommendations (sweep_id, scenario, trial_id, details, created_at) VALUES (?, ?, ?, ?, ?)"
      " RETURNING id");
  if (!insert) return insert.error();
  insert->bind(1, sweep_id).bind(2, scenario).bind(3, trial_id).bind(4, details_json).bind(5, utc_now_text());
  return insert_returning_id(*insert);
}

Result<int64_t> ResultsStore::replace_recommendation(int64_t sweep_id, std::string_view scenario,
                                                     std::optional<int64_t> trial_id, std::string_view details_json) {
  auto transaction = Transaction::begin_immediate(db_);
  if (!transaction) return transaction.error();
  auto remove = db_.prepare("DELETE FROM recommendations WHERE sweep_id = ? AND scenario = ?");
  if (!remove) return remove.error();
  remove->bind(1, sweep_id).bind(2, scenario);
  if (Status s = remove->run(); !s) return s.error();
  auto id = add_recommendation(sweep_id, scenario, trial_id, details_json);
  if (!id) return id.error();
  if (Status s = transaction->commit(); !s) return s.error();
  return *id;
}

Result<std::optional<int64_t>> ResultsStore::latest_sweep_id() {
  auto query = db_.prepare("SELECT id FROM sweeps ORDER BY id DESC LIMIT 1");
  if (!query) return query.error();
  auto row = query->step();
  if (!row) return row.error();
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>(query->column_int(0));
}

}  // namespace infertune
