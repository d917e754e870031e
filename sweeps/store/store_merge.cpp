#include "sweeps/store/store_merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <system_error>

#include "sweeps/store/migrations.h"
#include "sweeps/store/schema.h"
#include "sweeps/store/sqlite_transaction.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

// A shard text's slices: "1,3/3" -> {1, 3} of 3. The whole plan: empty set, count 0.
struct Slices {
  std::set<int> indices;
  int count = 0;
};

Result<Slices> parse_slices(const std::string& text) {
  Slices s;
  if (text.empty()) return s;
  const size_t slash = text.find('/');
  const auto number = [](std::string_view t) -> std::optional<int> {
    int v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || v < 1) return std::nullopt;
    return v;
  };
  const auto count = slash == std::string::npos ? std::nullopt : number(std::string_view(text).substr(slash + 1));
  if (!count) return fail("shard '{}': not I/N", text);
  s.count = *count;
  std::string_view list = std::string_view(text).substr(0, slash);
  for (size_t start = 0; start <= list.size();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const auto index = number(list.substr(start, comma - start));
    if (!index || *index > s.count) return fail("shard '{}': not I/N", text);
    s.indices.insert(*index);
    start = comma + 1;
  }
  return s;
}

// RAII: the input attached as `src` for the duration of one merge.
class AttachedInput {
 public:
  static Result<AttachedInput> attach(Database& db, const fs::path& path) {
    auto statement = db.prepare("ATTACH DATABASE ? AS src");
    if (!statement) return statement.error();
    statement->bind(1, path.string());
    if (Status s = statement->run(); !s) return fail("{}: {}", path.string(), s.error().message);
    return AttachedInput(db);
  }
  AttachedInput(AttachedInput&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  AttachedInput& operator=(AttachedInput&&) = delete;
  ~AttachedInput() {
    if (db_) (void)db_->exec("DETACH DATABASE src");
  }

 private:
  explicit AttachedInput(Database& db) : db_(&db) {}
  Database* db_;
};

// The input must be an infertune store at this binary's schema version.
Status check_input(const fs::path& input, const fs::path& out) {
  std::error_code error;
  if (!fs::is_regular_file(input, error)) return fail("{}: no such results store", input.string());
  if (fs::equivalent(input, out, error)) return fail("{}: is the output store itself", input.string());
  auto db = Database::open(input, {.create = false, .read_only = true});
  if (!db) return db.error();
  if (Status s = check_is_infertune_store(*db); !s) return s;
  auto version = schema_version(*db);
  if (!version) return version.error();
  if (*version != store_schema_version()) {
    return fail(
        "{}: results store schema version {}, but this infertune's is {}: merge takes stores of its own schema "
        "version only ({} infertune wrote it; merge with the same version that ran the sweeps)",
        input.string(), *version, store_schema_version(), *version < store_schema_version() ? "an older" : "a newer");
  }
  return {};
}

// Hosts, builds and models of the input in OUT (inserted where OUT lacks them), and each input id's OUT id in
// the temp tables merge_hosts, merge_builds and merge_models.
constexpr std::string_view kMapSharedRows = R"sql(
CREATE TEMP TABLE IF NOT EXISTS merge_hosts (src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS merge_builds (src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS merge_models (src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS merge_trials (src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
DELETE FROM merge_hosts; DELETE FROM merge_builds; DELETE FROM merge_models; DELETE FROM merge_trials;

INSERT INTO main.hosts (fingerprint, cpu_model, cpu_features, physical_cores, hardware_threads, memory_bytes,
                        numa_nodes, gpus, read_bandwidth_gbs, probe, first_seen, last_seen)
SELECT fingerprint, cpu_model, cpu_features, physical_cores, hardware_threads, memory_bytes, numa_nodes, gpus,
       read_bandwidth_gbs, probe, first_seen, last_seen FROM src.hosts WHERE true
ON CONFLICT (fingerprint) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen),
                                       last_seen = max(last_seen, excluded.last_seen);
INSERT INTO merge_hosts SELECT s.id, d.id FROM src.hosts AS s JOIN main.hosts AS d ON d.fingerprint = s.fingerprint;

INSERT OR IGNORE INTO main.builds (version, git_commit, compiler, build_type, flags, backends, kernel_variants,
                                   first_seen)
SELECT version, git_commit, compiler, build_type, flags, backends, kernel_variants, first_seen FROM src.builds;
INSERT INTO merge_builds SELECT s.id, d.id FROM src.builds AS s JOIN main.builds AS d
  ON d.version = s.version AND d.git_commit = s.git_commit AND d.compiler = s.compiler
 AND d.build_type = s.build_type AND d.flags = s.flags AND d.backends = s.backends
 AND d.kernel_variants = s.kernel_variants;

INSERT OR IGNORE INTO main.models (content_hash, path, arch, n_params, file_bytes, type_mix, first_seen)
SELECT content_hash, path, arch, n_params, file_bytes, type_mix, first_seen FROM src.models;
INSERT INTO merge_models SELECT s.id, d.id FROM src.models AS s JOIN main.models AS d
  ON d.content_hash = s.content_hash;
)sql";

struct SourceSweep {
  int64_t id = 0;
  std::string spec, spec_hash, status, started_at, finished_at, shard;
  int64_t host_id = 0, build_id = 0;  // OUT's ids
};

Result<std::vector<SourceSweep>> source_sweeps(Database& db) {
  auto q = db.prepare(
      "SELECT s.id, s.spec, s.spec_hash, s.status, coalesce(s.started_at, ''), coalesce(s.finished_at, ''), "
      "coalesce(s.shard, ''), h.dst, b.dst FROM src.sweeps AS s JOIN merge_hosts AS h ON h.src = s.host_id "
      "JOIN merge_builds AS b ON b.src = s.build_id ORDER BY s.id");
  if (!q) return q.error();
  std::vector<SourceSweep> sweeps;
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) break;
    sweeps.push_back({.id = q->column_int(0),
                      .spec = q->column_text(1),
                      .spec_hash = q->column_text(2),
                      .status = q->column_text(3),
                      .started_at = q->column_text(4),
                      .finished_at = q->column_text(5),
                      .shard = q->column_text(6),
                      .host_id = q->column_int(7),
                      .build_id = q->column_int(8)});
  }
  return sweeps;
}

// Two statuses of the same sweep's parts: equal ones stay; a failed part fails it; else it is not complete.
std::string combined_status(const std::string& a, const std::string& b) {
  if (a == b) return a;
  if (a == "failed" || b == "failed") return "failed";
  return "interrupted";
}

std::optional<std::string> bind_text_or_null(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// The OUT sweep the source sweep goes into, updated with the source's slices, status and times; or a new copy of
// it. A slice joins OUT's sweep of the same spec hash, host, build and number of slices; a whole-plan sweep joins
// only itself (the same run, merged again: same start time), so two runs of one spec — an A/A pair for
// `compare --noise-from` — stay two sweeps.
Result<MergedSweep> target_sweep(Database& db, const SourceSweep& source) {
  MergedSweep merged;
  merged.source_sweep = source.id;
  auto slices = parse_slices(source.shard);
  if (!slices) return fail("sweep {}: {}", source.id, slices.error().message);
  const bool sliced = slices->count > 0;
  auto find = db.prepare(
      "SELECT id, status, coalesce(started_at, ''), coalesce(finished_at, ''), coalesce(shard, '') FROM main.sweeps "
      "WHERE spec_hash = ?1 AND host_id = ?2 AND build_id = ?3 AND "
      "(CASE WHEN ?4 THEN shard LIKE '%/' || ?5 ELSE shard IS NULL AND started_at = ?6 END) ORDER BY id LIMIT 1");
  if (!find) return find.error();
  find->bind(1, source.spec_hash).bind(2, source.host_id).bind(3, source.build_id);
  find->bind(4, int64_t(sliced)).bind(5, std::to_string(slices->count)).bind(6, source.started_at);
  auto row = find->step();
  if (!row) return row.error();
  if (!*row) {
    auto insert = db.prepare(
        "INSERT INTO main.sweeps (spec, spec_hash, status, host_id, build_id, started_at, finished_at, shard) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
    if (!insert) return insert.error();
    insert->bind(1, source.spec).bind(2, source.spec_hash).bind(3, source.status).bind(4, source.host_id);
    insert->bind(5, source.build_id).bind(6, source.started_at).bind(7, bind_text_or_null(source.finished_at));
    insert->bind(8, bind_text_or_null(source.shard));
    auto id = insert->step();
    if (!id) return id.error();
    merged.sweep_id = insert->column_int(0);
    merged.created = true;
    merged.shard = source.shard;
    return merged;
  }
  merged.sweep_id = find->column_int(0);
  const std::string status = find->column_text(1), started = find->column_text(2), finished = find->column_text(3);
  auto shard = union_of_shards(find->column_text(4), source.shard);
  if (!shard) {
    return fail("sweep {} (spec {}) cannot join OUT's sweep {}: {}", source.id, source.spec_hash, merged.sweep_id,
                shard.error().message);
  }
  merged.shard = *shard;
  auto update =
      db.prepare("UPDATE main.sweeps SET status = ?, started_at = ?, finished_at = ?, shard = ? WHERE id = ?");
  if (!update) return update.error();
  const std::string first = std::min(started, source.started_at);
  const std::string last = std::max(finished, source.finished_at);  // "" (still running) sorts first
  update->bind(1, combined_status(status, source.status)).bind(2, first).bind(3, bind_text_or_null(last));
  update->bind(4, bind_text_or_null(merged.shard)).bind(5, merged.sweep_id);
  if (Status s = update->run(); !s) return s.error();
  return merged;
}

// The source sweep's trials OUT's sweep lacks, with their samples and summaries.
Status copy_trials(Database& db, int64_t source_sweep, MergedSweep& merged) {
  if (Status s = db.exec("DELETE FROM merge_trials"); !s) return s;
  auto trials = db.prepare(
      "SELECT t.id, EXISTS (SELECT 1 FROM main.trials AS d WHERE d.sweep_id = ?1 AND d.config_hash = t.config_hash) "
      "FROM src.trials AS t WHERE t.sweep_id = ?2 ORDER BY t.id");
  if (!trials) return trials.error();
  trials->bind(1, merged.sweep_id).bind(2, source_sweep);
  auto insert = db.prepare(
      "INSERT INTO main.trials (sweep_id, config_hash, config, model_id, status, reason, predicted_peak_rss_bytes, "
      "peak_rss_bytes, started_at, finished_at, duration_s) "
      "SELECT ?1, t.config_hash, t.config, m.dst, t.status, t.reason, t.predicted_peak_rss_bytes, t.peak_rss_bytes, "
      "t.started_at, t.finished_at, t.duration_s FROM src.trials AS t LEFT JOIN merge_models AS m ON m.src = "
      "t.model_id "
      "WHERE t.id = ?2 RETURNING id");
  auto map = db.prepare("INSERT INTO merge_trials (src, dst) VALUES (?, ?)");
  if (!insert) return insert.error();
  if (!map) return map.error();
  for (;;) {
    auto row = trials->step();
    if (!row) return row.error();
    if (!*row) break;
    if (trials->column_int(1) != 0) {
      ++merged.trials_present;
      continue;
    }
    insert->reset();
    insert->bind(1, merged.sweep_id).bind(2, trials->column_int(0));
    auto id = insert->step();
    if (!id) return id.error();
    map->reset();
    map->bind(1, trials->column_int(0)).bind(2, insert->column_int(0));
    if (Status s = map->run(); !s) return s;
    ++merged.trials_added;
  }
  return db.exec(R"sql(
INSERT INTO main.samples (trial_id, metric, repetition, value, is_warmup)
SELECT m.dst, s.metric, s.repetition, s.value, s.is_warmup FROM src.samples AS s
JOIN merge_trials AS m ON m.src = s.trial_id ORDER BY s.id;
INSERT INTO main.metrics (trial_id, metric, n, mean, stddev, median, p50, p95, p99, ci95_half_width)
SELECT m.dst, x.metric, x.n, x.mean, x.stddev, x.median, x.p50, x.p95, x.p99, x.ci95_half_width FROM src.metrics AS x
JOIN merge_trials AS m ON m.src = x.trial_id;
)sql");
}

// The source sweep's variant quality rows that OUT's sweep lacks.
Status copy_quality(Database& db, int64_t source_sweep, int64_t sweep_id) {
  auto copy = db.prepare(
      "INSERT OR IGNORE INTO main.variant_quality (sweep_id, model_id, base_model_id, quant, status, reason, corpus, "
      "n_ctx, n_chunks, positions, ppl, ppl_error, base_ppl, kld_mean, kld_error, kld_p99, kld_max, same_top, "
      "measured_at) SELECT ?1, m.dst, b.dst, q.quant, q.status, q.reason, q.corpus, q.n_ctx, q.n_chunks, q.positions, "
      "q.ppl, q.ppl_error, q.base_ppl, q.kld_mean, q.kld_error, q.kld_p99, q.kld_max, q.same_top, q.measured_at "
      "FROM src.variant_quality AS q JOIN merge_models AS m ON m.src = q.model_id "
      "LEFT JOIN merge_models AS b ON b.src = q.base_model_id WHERE q.sweep_id = ?2");
  if (!copy) return copy.error();
  copy->bind(1, sweep_id).bind(2, source_sweep);
  return copy->run();
}

Result<std::vector<MergedSweep>> merge_attached(Database& db) {
  if (Status s = db.exec(kMapSharedRows); !s) return s.error();
  auto sweeps = source_sweeps(db);
  if (!sweeps) return sweeps.error();
  std::vector<MergedSweep> merged;
  for (const SourceSweep& source : *sweeps) {
    auto target = target_sweep(db, source);
    if (!target) return target.error();
    if (Status s = copy_trials(db, source.id, *target); !s) return s.error();
    if (Status s = copy_quality(db, source.id, target->sweep_id); !s) return s.error();
    merged.push_back(*target);
  }
  return merged;
}

}  // namespace

Result<std::string> union_of_shards(const std::string& a, const std::string& b) {
  auto sa = parse_slices(a);
  if (!sa) return sa.error();
  auto sb = parse_slices(b);
  if (!sb) return sb.error();
  if (sa->count == 0 || sb->count == 0) return std::string();  // a whole plan holds every slice
  if (sa->count != sb->count) {
    return fail("slices of {} and of {} parts (shard {} and {}): merge the slices of one split", sa->count, sb->count,
                a, b);
  }
  std::set<int> all = sa->indices;
  all.insert(sb->indices.begin(), sb->indices.end());
  return fmt::format("{}/{}", fmt::join(all, ","), sa->count);
}

bool holds_every_slice(const std::string& shard) {
  auto slices = parse_slices(shard);
  return slices && (slices->count == 0 || static_cast<int>(slices->indices.size()) == slices->count);
}

Result<std::vector<MergedSweep>> merge_store(ResultsStore& out, const fs::path& input) {
  if (Status s = check_input(input, out.database().path()); !s) return s.error();
  Database& db = out.database();
  auto attached = AttachedInput::attach(db, input);
  if (!attached) return attached.error();
  auto transaction = Transaction::begin_immediate(db);
  if (!transaction) return transaction.error();
  auto merged = merge_attached(db);
  if (!merged) return fail("{}: {} (nothing of it was merged)", input.string(), merged.error().message);
  if (Status s = transaction->commit(); !s) return s.error();
  return merged;
}

}  // namespace infertune
