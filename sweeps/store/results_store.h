#pragma once
// The results store: one SQLite file holding hosts, builds, models, sweeps, their trials with every raw
// sample and the per-metric summaries, and recommendations (schema.h). Opening it creates or migrates
// the schema. The sweep runner is its one writer; readers (export, reports, the sqlite3 shell) may read
// while it writes (WAL).
//
// A trial is written by record_trial() in one BEGIN IMMEDIATE transaction with its samples and their
// summaries: after a crash it is there completely or not at all. A trial is recorded once per sweep
// (UNIQUE(sweep, config hash)): recording the same config hash again is an error that writes nothing,
// so a resumed sweep must skip done_config_hashes().
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"
#include "sweeps/store/sqlite_database.h"
#include "sweeps/store/store_records.h"

namespace infertune {

// Errors, naming the file, unless `db` holds an infertune store's tables (schema_version and trials).
Status check_is_infertune_store(Database& db);

class ResultsStore {
 public:
  // options.create = false: the file must exist (readers such as export).
  static Result<ResultsStore> open(const std::filesystem::path& path, const DatabaseOptions& options = {});
  // For commands that only read (export, recommend, report, compare, history): the file is opened
  // read-only and never changed. Refuses, naming the file, a missing or empty file, a file that is not an
  // infertune store (another SQLite database, or not SQLite at all) and a schema newer than this binary's.
  // A store of an older schema is migrated in a private in-memory copy; the file stays as it was.
  static Result<ResultsStore> open_read_only(const std::filesystem::path& path);

  // Insert, or update the row with the same key (host fingerprint, every build field, model content hash);
  // return the row's id.
  Result<int64_t> upsert_host(const HostRecord& host);
  Result<int64_t> upsert_build(const BuildRecord& build);
  Result<int64_t> upsert_model(const ModelRecord& model);

  // A new sweep, status running, started now.
  Result<int64_t> create_sweep(const NewSweep& sweep);
  Result<std::optional<SweepRecord>> find_sweep(int64_t id);
  // The most recent sweep of that spec and slice of its plan ("": the whole plan; what --resume continues when
  // given a spec hash).
  Result<std::optional<SweepRecord>> find_latest_sweep(std::string_view spec_hash, std::string_view shard = "");
  // done / interrupted / failed set finished_at to now; running (a resume) clears it.
  Status set_sweep_status(int64_t id, SweepStatus status);

  // The trial, its samples and one metrics row per metric with non-warmup samples, in one transaction.
  // Returns the trial's id. Errors (writing nothing) on a duplicate config hash, an unknown sweep or model,
  // a non-finite sample, or invalid config JSON.
  Result<int64_t> record_trial(const TrialRecord& trial);
  Result<std::optional<int64_t>> find_trial(int64_t sweep_id, std::string_view config_hash);
  // Config hashes recorded for the sweep, whatever their status.
  Result<std::set<std::string>> done_config_hashes(int64_t sweep_id);
  // The sweep's trials in the order recorded, with their metric summaries (samples left empty).
  Result<std::vector<StoredTrial>> trials(int64_t sweep_id);
  // The trial's raw samples in the order measured.
  Result<std::vector<Sample>> samples(int64_t trial_id);

  // A quantization variant's quality in a sweep (once per variant, not per trial): inserted, or replacing the
  // row of the same sweep and model. Errors (writing nothing) on an unknown sweep or model.
  Status record_variant_quality(const VariantQualityRecord& quality);
  // The sweep's quality rows, in model id order (none in a store written before schema version 4).
  Result<std::vector<VariantQualityRecord>> variant_quality(int64_t sweep_id);

  Result<int64_t> add_recommendation(int64_t sweep_id, std::string_view scenario, std::optional<int64_t> trial_id,
                                     std::string_view details_json);
  // add_recommendation after deleting the sweep's earlier rows of the same scenario, in one transaction
  // (a re-run of `infertune recommend` replaces what it said before).
  Result<int64_t> replace_recommendation(int64_t sweep_id, std::string_view scenario, std::optional<int64_t> trial_id,
                                         std::string_view details_json);
  // The id of the most recently created sweep, none in an empty store.
  Result<std::optional<int64_t>> latest_sweep_id();

  Database& database() { return db_; }

 private:
  explicit ResultsStore(Database db) : db_(std::move(db)) {}
  Result<int64_t> insert_returning_id(Statement& statement);
  Status insert_samples(int64_t trial_id, const std::vector<Sample>& samples);
  Status insert_metrics(int64_t trial_id, const std::vector<MetricRecord>& metrics);
  Result<std::vector<MetricRecord>> read_metrics(int64_t trial_id);

  Database db_;
};

// The summaries record_trial() stores: per metric (sorted by name), the non-warmup samples summarized.
// Errors name the metric with a non-finite value.
Result<std::vector<MetricRecord>> summarize_samples(const std::vector<Sample>& samples);

}  // namespace infertune
