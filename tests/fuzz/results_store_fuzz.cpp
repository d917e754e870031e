// libFuzzer target for the results store as the read-only commands (export, report, compare, history,
// recommend) meet a user's file: ResultsStore::open_read_only, then every read method over the sweeps and
// trials the store reports. Each input becomes the bytes of one database file, written to a work file of
// this process (under /dev/shm, else $TMPDIR, else /tmp; overwritten per input, its -wal/-shm/-journal
// siblings removed first). Input encoding, by the first byte:
//   - byte 0 % 4 == 0, "raw": the rest of the input is the whole file;
//   - otherwise, "patch": byte 1 picks one of the seed stores built at start-up (modulo their number), and
//     the rest is a list of patches applied to a copy of it, in order: a 16-bit little-endian offset (taken
//     modulo the file's current size), a count n, then n bytes written there (cut at the end of the file);
//     n = 0 truncates the file at the offset. An incomplete last patch is ignored. Raw bytes seldom make a
//     valid b-tree; patches reach the schema text, the cells, the page pointers and the rows behind it.
// The seed stores (page size 512) are written with the store's own writer, or at an older schema with the
// store's migrations and plain SQL, so that open_read_only migrates them in memory: the latest schema with a
// rollback journal, the same in WAL mode, version 1 and version 4. Their timestamps are fixed afterwards, so
// an input means the same file in every run.
// Properties checked on every input; a violation prints what failed and traps (libFuzzer: a crash):
//   - no crash, hang, uncaught exception or over-allocation (ASan/UBSan, -timeout, -rss_limit_mb);
//   - open_read_only returns a store or a refusal whose message names the file;
//   - it never modifies the file: the bytes are the same after opening, and after every read and close;
//     a file whose header does not ask for WAL gets no -wal, -shm or -journal beside it, and a WAL file
//     gets at most an empty -wal (SQLite's read-only WAL access), never a written one;
//   - an opened store is at this binary's schema version (migrated in memory when older) unless SQLite
//     finds the file damaged (PRAGMA integrity_check: a damaged b-tree may give any max(version)), and the
//     file's own highest recorded version, read independently, is not newer than this binary's;
//   - every read (latest_sweep_id, find_sweep, find_latest_sweep, trials, samples, find_trial,
//     done_config_hashes, variant_quality) returns a value or an error whose message names the file;
//   - values read back are well-formed where the store promises it: sweep, trial and quality statuses are
//     in their enums, find_sweep(id) gives the sweep with that id, trials() leaves samples empty.
// Sweeps visited: the latest, ids 1..4 and those trials name, at most 8; samples and find_trial for at
// most 16 trials of each. The outcome of each step (its row count, the class of its error) also feeds
// libFuzzer's extra counters, since SQLite itself is not instrumented.
// With INFERTUNE_FUZZ_WRITE_SEEDS=DIR the target instead writes seed inputs into DIR and exits: each seed
// store unpatched, two of them also whole (raw), and patches aimed at a status, a schema version, the
// schema text, the header and the end of the file. INFERTUNE_FUZZ_VERBOSE=1 prints every refusal and read
// error; INFERTUNE_FUZZ_SAVE_FILE=PATH also writes each input's database file to PATH (for the sqlite3 shell).
#include <fmt/format.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.h"
#include "sqlite_libc_heap.h"
#include "sweeps/store/migrations.h"
#include "sweeps/store/results_store.h"
#include "sweeps/store/schema.h"

namespace {

using namespace infertune;
namespace fs = std::filesystem;

constexpr size_t kMaxSweeps = 8;
constexpr size_t kMaxTrialsPerSweep = 16;

fs::path g_dir;          // this process's work folder
fs::path g_file;         // the database file each input becomes
bool g_verbose = false;  // INFERTUNE_FUZZ_VERBOSE=1: print every refusal and read error
fs::path g_save;         // INFERTUNE_FUZZ_SAVE_FILE=PATH: also write each input's file there (for the sqlite3 shell)

struct SeedStore {
  std::string name;
  std::string bytes;
};

std::vector<SeedStore>& seed_stores() {
  static std::vector<SeedStore> stores;
  return stores;
}

using fuzz::check;

void check_error(const Error& error, const char* what) {
  if (!error.message.empty() && error.message.find(g_file.string()) != std::string::npos) return;
  std::fprintf(stderr, "results_store_fuzz: property violated: %s: an error names the file; got '%s'\n", what,
               error.message.c_str());
  __builtin_trap();
}

// --- extra counters: feedback from what SQLite did -------------------------------------------------

constexpr size_t kCounters = 4096;
__attribute__((used, section("__libfuzzer_extra_counters"))) uint8_t g_counters[kCounters];

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

void feature(uint64_t stage, uint64_t value) {
  uint8_t& c = g_counters[mix(mix(0xcbf29ce484222325ull, stage), value) % kCounters];
  if (c < 255) ++c;
}

unsigned log2_bucket(size_t n) {
  unsigned b = 0;
  while (n > 0) ++b, n >>= 1;
  return b;
}

// The kind of an error without the parts an input controls: the file's name removed, cut before the SQL,
// the first bracket or quote and the second colon, digits left out.
uint64_t error_class(const std::string& message) {
  std::string m = message;
  for (size_t at; (at = m.find(g_file.string())) != std::string::npos;) m.erase(at, g_file.string().size());
  uint64_t h = 0xcbf29ce484222325ull;
  int colons = 0;
  for (char c : m) {
    if (c == '(' || c == '"' || c == '\'' || (c == ':' && ++colons == 2)) break;
    if (c >= '0' && c <= '9') continue;
    h = mix(h, static_cast<uint8_t>(c));
  }
  return h;
}

template <class T>
bool outcome(const Result<T>& result, uint64_t stage, const char* what) {
  if (result) return true;
  if (g_verbose) std::fprintf(stderr, "results_store_fuzz: %s: %s\n", what, result.error().message.c_str());
  check_error(result.error(), what);
  feature(stage, error_class(result.error().message));
  return false;
}

// --- files -----------------------------------------------------------------------------------------

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::string bytes(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

bool write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

fs::path sibling(const fs::path& path, const char* suffix) { return fs::path(path.string() + suffix); }

void remove_with_siblings(const fs::path& path, bool main_too) {
  std::error_code ec;
  if (main_too) fs::remove(path, ec);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) fs::remove(sibling(path, suffix), ec);
}

// Plain SQL on a file through the C API (the seeds need pragmas the store's own connection never runs).
bool raw_exec(const fs::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK;
  char* message = nullptr;
  if (ok && sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::fprintf(stderr, "results_store_fuzz: seed SQL failed: %s\n", message ? message : sqlite3_errmsg(db));
    ok = false;
  }
  sqlite3_free(message);
  sqlite3_close_v2(db);
  return ok;
}

// The highest version the file records, read without the store's code; none when unreadable or not an
// integer.
std::optional<int64_t> recorded_version(const fs::path& path) {
  sqlite3* db = nullptr;
  std::optional<int64_t> version;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT max(version) FROM schema_version", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_type(stmt, 0) == SQLITE_INTEGER) {
      version = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db);
  return version;
}

// Whether SQLite finds the file intact (PRAGMA integrity_check): on a damaged b-tree it may give any rows,
// e.g. a max(version) that is not the largest, so properties of what was read hold for intact files only.
bool file_intact(const fs::path& path) {
  sqlite3* db = nullptr;
  bool ok = false;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      ok = text != nullptr && std::string_view(text) == "ok";
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db);
  return ok;
}

// --- seed stores -----------------------------------------------------------------------------------

constexpr const char* kFixedTime = "2025-01-02T03:04:05.678Z";

// A new file with 512-byte pages (the store's connection keeps the size once the file has a page).
bool create_small_page_file(const fs::path& path) {
  remove_with_siblings(path, true);
  return raw_exec(
      path, "PRAGMA page_size=512; PRAGMA journal_mode=DELETE; CREATE TABLE fuzz_page (x); DROP TABLE fuzz_page;");
}

Status write_latest_rows(const fs::path& path) {
  auto store = ResultsStore::open(path);
  if (!store) return store.error();
  HostRecord host;
  host.fingerprint = "0123456789abcdef";
  host.cpu_model = "Fuzz CPU";
  host.cpu_features = "avx2 fma";
  host.physical_cores = 4;
  host.hardware_threads = 8;
  host.memory_bytes = 16ll << 30;
  host.read_bandwidth_gbs = 30.25;
  auto host_id = store->upsert_host(host);
  auto build_id = store->upsert_build({"0.1.0", "abcdef012345", "Clang 14", "Release", "-O2", "cpu", "avx2 scalar"});
  auto base = store->upsert_model({"basehash", "/models/base.gguf", "llama", 1000000, 4096, R"({"f16":4096})"});
  auto variant = store->upsert_model({"varhash", "/models/base-q4_0.gguf", "llama", 1000000, 1024, R"({"q4_0":1024})"});
  if (!host_id || !build_id || !base || !variant) return fail("seed: host, build or model not written");
  auto whole = store->create_sweep({"threads: [1, 2]\n", "spechash-a", *host_id, *build_id, ""});
  auto shard = store->create_sweep({"threads: [4]\n", "spechash-a", *host_id, *build_id, "1/2"});
  if (!whole || !shard) return fail("seed: sweep not written");

  TrialRecord ok;
  ok.sweep_id = *whole;
  ok.config_hash = "cfg-ok";
  ok.config_json = R"({"quant":"q4_0","threads":2,"workload":{"kind":"tg","n_gen":16}})";
  ok.model_id = *variant;
  ok.peak_rss_bytes = 2048;
  ok.predicted_peak_rss_bytes = 2000;
  ok.started_at = kFixedTime;
  ok.finished_at = kFixedTime;
  ok.duration_s = 0.5;
  ok.samples = {{"pp_tps", 0, 90.0, true},   {"pp_tps", 1, 100.0, false}, {"pp_tps", 2, 104.5, false},
                {"tg_tps", 1, 20.0, false},  {"tg_tps", 2, 21.5, false},  {"itl_ms", 1, 48.0, false},
                {"itl_ms", 1, 52.25, false}, {"itl_ms", 2, 50.0, false}};
  TrialRecord failed;
  failed.sweep_id = *whole;
  failed.config_hash = "cfg-failed";
  failed.config_json = R"({"threads":1})";
  failed.model_id = *base;
  failed.status = TrialStatus::failed;
  failed.reason = "exit status 1";
  TrialRecord single;
  single.sweep_id = *shard;
  single.config_hash = "cfg-single";
  single.config_json = R"({"threads":4})";
  single.status = TrialStatus::timeout;
  single.samples = {{"ttft_ms", 1, 12.5, false}};
  auto ok_id = store->record_trial(ok);
  if (!ok_id) return ok_id.error();
  for (const TrialRecord* t : {&failed, &single}) {
    if (auto id = store->record_trial(*t); !id) return id.error();
  }

  VariantQualityRecord measured;
  measured.sweep_id = *whole;
  measured.model_id = *variant;
  measured.base_model_id = *base;
  measured.quant = "q4_0";
  measured.corpus = "wiki";
  measured.n_ctx = 128, measured.n_chunks = 2, measured.positions = 254;
  measured.ppl = 6.5, measured.ppl_error = 0.1, measured.base_ppl = 6.25;
  measured.kld_mean = 0.02, measured.kld_error = 0.001, measured.kld_p99 = 0.2, measured.kld_max = 0.9;
  measured.same_top = 0.95;
  VariantQualityRecord not_meaningful;
  not_meaningful.sweep_id = *whole;
  not_meaningful.model_id = *base;
  not_meaningful.quant = "f16";
  not_meaningful.status = QualityStatus::not_meaningful;
  not_meaningful.reason = "synthetic weights";
  for (const auto* q : {&measured, &not_meaningful}) {
    if (Status s = store->record_variant_quality(*q); !s) return s;
  }
  if (auto r = store->add_recommendation(*whole, "latency", *ok_id, R"({"why":"fastest"})"); !r) return r.error();
  if (Status s = store->set_sweep_status(*whole, SweepStatus::done); !s) return s;
  return store->set_sweep_status(*shard, SweepStatus::interrupted);
}

// The latest schema's timestamps, each set to kFixedTime.
std::string fix_latest_times() {
  return fmt::format(
      "UPDATE hosts SET first_seen = '{0}', last_seen = '{0}';"
      "UPDATE builds SET first_seen = '{0}';"
      "UPDATE models SET first_seen = '{0}';"
      "UPDATE sweeps SET started_at = '{0}', finished_at = '{0}';"
      "UPDATE variant_quality SET measured_at = '{0}';"
      "UPDATE recommendations SET created_at = '{0}';",
      kFixedTime);
}

// Rows as an older infertune wrote them, with plain SQL: one sweep, an ok trial with samples and summaries
// (one of them from a single sample), a failed trial, a recommendation.
constexpr const char* kOldRows = R"sql(
INSERT INTO hosts VALUES (1, 'fedcba9876543210', 'Old CPU', 'sse4_2', 2, 2, 4294967296, '[]', '[]', NULL, '{}',
  '2024-05-06T07:08:09.010Z', '2024-05-06T07:08:09.010Z');
INSERT INTO builds VALUES (1, '0.0.9', '0011223344', 'GNU 11', 'Debug', '-O0', 'cpu', 'scalar',
  '2024-05-06T07:08:09.010Z');
INSERT INTO models VALUES (1, 'oldhash', '/m/old.gguf', 'gpt2', NULL, 777, '{}', '2024-05-06T07:08:09.010Z');
INSERT INTO sweeps VALUES (1, 'threads: [2]', 'spechash-old', 'done', 1, 1, '2024-05-06T07:08:09.010Z',
  '2024-05-06T07:09:09.010Z');
INSERT INTO trials VALUES (1, 1, 'old-ok', '{"threads":2,"workload":{"kind":"pp","n_prompt":64}}', 1, 'ok', NULL,
  NULL, 3000, '2024-05-06T07:08:10.000Z', '2024-05-06T07:08:11.000Z', 1.0);
INSERT INTO trials VALUES (2, 1, 'old-oom', '{"threads":1}', 1, 'oom', 'killed', 9000, NULL, NULL, NULL, NULL);
INSERT INTO samples (trial_id, metric, repetition, value, is_warmup) VALUES
  (1, 'pp_tps', 0, 40, 1), (1, 'pp_tps', 1, 50, 0), (1, 'pp_tps', 2, 54, 0), (1, 'load_ms', 1, 300, 0);
INSERT INTO metrics VALUES (1, 'pp_tps', 2, 52, 2.8284, 52, 52, 53.8, 53.96, 25.41),
  (1, 'load_ms', 1, 300, NULL, 300, 300, 300, 300, NULL);
INSERT INTO recommendations VALUES (1, 1, 'throughput', 1, '{"rank":1}', '2024-05-06T07:10:00.000Z');
)sql";

constexpr const char* kVersion4QualityRow = R"sql(
INSERT INTO variant_quality VALUES (1, 1, 1, NULL, 'q8_0', 'failed', 'no base model', NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2024-05-06T07:10:00.000Z');
)sql";

Status write_old_rows(const fs::path& path, int version) {
  auto db = Database::open(path);
  if (!db) return db.error();
  if (Status s = migrate(*db, store_migrations().first(static_cast<size_t>(version))); !s) return s;
  if (Status s = db->exec(kOldRows); !s) return s;
  if (version >= 4) return db->exec(kVersion4QualityRow);
  return {};
}

// The file as one image: fixed timestamps, packed, with a rollback journal or in WAL mode.
std::optional<std::string> finish_seed(const fs::path& path, const std::string& fix_times, bool wal) {
  const std::string sql = fix_times + fmt::format("UPDATE schema_version SET applied_at = '{}';", kFixedTime) +
                          "PRAGMA journal_mode=DELETE; VACUUM;" + (wal ? "PRAGMA journal_mode=WAL;" : "");
  if (!raw_exec(path, sql)) return std::nullopt;
  std::string bytes = read_file(path);
  remove_with_siblings(path, true);
  return bytes;
}

bool build_seed_stores() {
  const fs::path path = g_dir / "seed.db";
  struct Plan {
    const char* name;
    int version;  // 0: the latest, through ResultsStore
    bool wal;
  };
  for (const Plan& plan :
       {Plan{"latest", 0, false}, Plan{"latest-wal", 0, true}, Plan{"v1", 1, false}, Plan{"v4", 4, false}}) {
    if (!create_small_page_file(path)) return false;
    Status s = plan.version == 0 ? write_latest_rows(path) : write_old_rows(path, plan.version);
    if (!s) {
      std::fprintf(stderr, "results_store_fuzz: seed %s: %s\n", plan.name, s.error().message.c_str());
      return false;
    }
    auto bytes = finish_seed(path, plan.version == 0 ? fix_latest_times() : "", plan.wal);
    if (!bytes || bytes->size() > 65535) {
      std::fprintf(stderr, "results_store_fuzz: seed %s not written or over 64 KiB\n", plan.name);
      return false;
    }
    seed_stores().push_back({plan.name, std::move(*bytes)});
  }
  return true;
}

// --- inputs ----------------------------------------------------------------------------------------

std::string file_of(const uint8_t* data, size_t size) {
  if (data[0] % 4 == 0) return std::string(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t seed = size > 1 ? data[1] % seed_stores().size() : 0;
  std::string file = seed_stores()[seed].bytes;
  for (size_t i = 2; i + 3 <= size;) {
    const size_t offset = data[i] | (size_t{data[i + 1]} << 8);
    const size_t n = data[i + 2];
    i += 3;
    if (file.empty()) break;
    const size_t at = offset % file.size();
    if (n == 0) {
      file.resize(at);
      continue;
    }
    if (i + n > size) break;
    const size_t fit = std::min(n, file.size() - at);
    file.replace(at, fit, reinterpret_cast<const char*>(data + i), fit);
    i += n;
  }
  return file;
}

// Seed inputs: (name, bytes).
std::vector<std::pair<std::string, std::string>> seed_inputs() {
  std::vector<std::pair<std::string, std::string>> inputs;
  const auto patched = [](size_t seed, std::initializer_list<std::pair<size_t, std::string>> patches) {
    std::string input{'\x01', static_cast<char>(seed)};
    for (const auto& [offset, bytes] : patches) {
      input += static_cast<char>(offset & 0xff);
      input += static_cast<char>(offset >> 8);
      input += static_cast<char>(bytes.size());
      input += bytes;
    }
    return input;
  };
  for (size_t k = 0; k < seed_stores().size(); ++k) {
    inputs.emplace_back("patch-" + seed_stores()[k].name, patched(k, {}));
  }
  inputs.emplace_back("raw-latest", '\0' + seed_stores()[0].bytes);
  inputs.emplace_back("raw-v1", '\0' + seed_stores()[2].bytes);
  // Aimed patches: the first place a text occurs in a seed gets other bytes.
  const auto at = [](size_t seed, std::string_view text) { return seed_stores()[seed].bytes.find(text); };
  const auto aimed = [&](const char* name, size_t seed, std::string_view text, std::string bytes) {
    const size_t offset = at(seed, text);
    if (offset != std::string::npos) inputs.emplace_back(name, patched(seed, {{offset, std::move(bytes)}}));
  };
  aimed("status-sweep", 0, "interrupted", "Interrupted");
  aimed("status-trial", 0, "timeout", "timeouX");
  aimed("status-quality", 0, "not_meaningful", "not_meaningfuL");
  aimed("schema-text", 0, "CREATE TABLE trials", "CREATE TABLE trialz");
  // A version 4 file whose sweeps table already has the column that migration 5 adds.
  aimed("schema-shard-v4", 3, "finished_at TEXT\n)", "shard       TEXT\n)");
  // The latest seed's highest schema version, 5, made 6: the rowid of its schema_version row, five bytes
  // before the row's description (payload size, rowid, a record header of 4 bytes with 1-byte serial types).
  if (size_t d = at(0, "sweeps.shard: the slice");
      d != std::string::npos && d >= 5 && seed_stores()[0].bytes[d - 5] == store_schema_version()) {
    inputs.emplace_back("version-newer",
                        patched(0, {{d - 5, std::string(1, static_cast<char>(store_schema_version() + 1))}}));
  }
  // The header: page size 1024 for a file of 512-byte pages; WAL read/write versions on a rollback file.
  inputs.emplace_back("header-page-size", patched(0, {{16, std::string("\x04\x00", 2)}}));
  inputs.emplace_back("header-wal", patched(2, {{18, std::string("\x02\x02", 2)}}));
  inputs.emplace_back("truncated", patched(0, {{static_cast<size_t>(seed_stores()[0].bytes.size() / 2), ""}}));
  return inputs;
}

int write_seeds(const fs::path& dir) {
  size_t written = 0, failed = 0;
  for (const auto& [name, bytes] : seed_inputs()) write_file(dir / ("seed-" + name), bytes) ? ++written : ++failed;
  std::fprintf(stderr, "results_store_fuzz: wrote %zu seeds to %s\n", written, dir.c_str());
  return failed == 0 && written > 0 ? 0 : 1;
}

// --- properties ------------------------------------------------------------------------------------

void check_sweep(const SweepRecord& sweep) {
  check(to_string(sweep.status) != "unknown", "a sweep's status is in SweepStatus");
}

void visit_trials(ResultsStore& store, int64_t sweep_id, std::set<int64_t>& more_sweeps) {
  auto trials = store.trials(sweep_id);
  if (!outcome(trials, 20, "trials")) return;
  feature(21, log2_bucket(trials->size()));
  size_t visited = 0;
  for (const StoredTrial& stored : *trials) {
    check(to_string(stored.trial.status) != "unknown", "a trial's status is in TrialStatus");
    check(stored.trial.samples.empty(), "trials() leaves samples empty");
    feature(22, log2_bucket(stored.metrics.size()));
    more_sweeps.insert(stored.trial.sweep_id);
    if (++visited > kMaxTrialsPerSweep) continue;
    auto samples = store.samples(stored.id);
    if (outcome(samples, 23, "samples")) feature(24, log2_bucket(samples->size()));
    auto found = store.find_trial(sweep_id, stored.trial.config_hash);
    if (outcome(found, 25, "find_trial")) feature(26, found->has_value());
  }
}

void visit_sweep(ResultsStore& store, int64_t id, std::set<int64_t>& more_sweeps) {
  auto sweep = store.find_sweep(id);
  if (outcome(sweep, 10, "find_sweep") && *sweep) {
    check((*sweep)->id == id, "find_sweep(id) gives the sweep with that id");
    check_sweep(**sweep);
    feature(11, static_cast<uint64_t>((*sweep)->status));
    auto latest = store.find_latest_sweep((*sweep)->spec_hash, (*sweep)->shard);
    if (outcome(latest, 12, "find_latest_sweep") && *latest) check_sweep(**latest);
  }
  visit_trials(store, id, more_sweeps);
  auto hashes = store.done_config_hashes(id);
  if (outcome(hashes, 30, "done_config_hashes")) feature(31, log2_bucket(hashes->size()));
  auto quality = store.variant_quality(id);
  if (outcome(quality, 32, "variant_quality")) {
    feature(33, log2_bucket(quality->size()));
    for (const VariantQualityRecord& q : *quality) {
      check(to_string(q.status) != "unknown", "a quality status is in QualityStatus");
      (void)q.ppl_increase_pct();
    }
  }
}

void check_siblings(std::string_view file) {
  const bool wal_header = file.size() > 19 && file[19] == 2;
  std::error_code ec;
  if (!wal_header) {
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      check(!fs::exists(sibling(g_file, suffix), ec), "a reader leaves no -wal, -shm or -journal beside the file");
    }
    return;
  }
  check(!fs::exists(sibling(g_file, "-journal"), ec), "a reader leaves no -journal beside the file");
  const auto wal_size = fs::file_size(sibling(g_file, "-wal"), ec);
  check(ec || wal_size == 0, "a reader writes nothing into the -wal");
}

void exercise(std::string_view file) {
  {
    auto store = ResultsStore::open_read_only(g_file);
    if (!store) {
      if (g_verbose) std::fprintf(stderr, "results_store_fuzz: refused: %s\n", store.error().message.c_str());
      check_error(store.error(), "open_read_only");
      feature(1, error_class(store.error().message));
    } else {
      check(store->database().path() == g_file, "the store names the file it opened");
      check(read_file(g_file) == file, "open_read_only leaves the file's bytes as they were");
      auto version = schema_version(store->database());
      if (outcome(version, 2, "schema_version")) {
        check(*version == store_schema_version() || !file_intact(g_file),
              "an opened store is at this binary's schema version");
      }
      const auto recorded = recorded_version(g_file);
      check(!recorded || *recorded <= store_schema_version(), "a store newer than this binary's is refused");
      feature(3, recorded ? static_cast<uint64_t>(*recorded) : 999);

      std::set<int64_t> ids = {1, 2, 3, 4};
      auto latest = store->latest_sweep_id();
      if (outcome(latest, 4, "latest_sweep_id") && *latest) ids.insert(**latest);
      auto spec = store->find_latest_sweep("spechash-a");
      if (outcome(spec, 5, "find_latest_sweep") && *spec) check_sweep(**spec);
      std::set<int64_t> visited;
      while (visited.size() < kMaxSweeps) {
        auto next = std::find_if(ids.begin(), ids.end(), [&](int64_t id) { return !visited.contains(id); });
        if (next == ids.end()) break;
        visited.insert(*next);
        visit_sweep(*store, *next, ids);
      }
    }
  }
  check(read_file(g_file) == file, "reading a store leaves the file's bytes as they were");
  check_siblings(file);
}

fs::path work_dir() {
  std::error_code ec;
  fs::path base = "/dev/shm";
  if (!fs::is_directory(base, ec) || access(base.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp && *tmp ? tmp : "/tmp";
  }
  // A run that crashed (a trap skips atexit) left its folder: those of processes gone are removed.
  const std::string prefix = "infertune-store-fuzz-";
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
  }
  fs::path dir = base / (prefix + std::to_string(getpid()));
  fs::create_directories(dir, ec);
  return fs::canonical(dir, ec);
}

void remove_work_dir() {
  std::error_code ec;
  if (!g_dir.empty()) fs::remove_all(g_dir, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  if (!infertune::fuzz::use_libc_heap_for_sqlite()) {
    std::fprintf(stderr, "results_store_fuzz: SQLite refused the allocator (initialized already?)\n");
    std::exit(2);
  }
  g_dir = work_dir();
  if (g_dir.empty()) {
    std::fprintf(stderr, "results_store_fuzz: cannot create a work folder\n");
    std::exit(2);
  }
  std::atexit(remove_work_dir);
  g_file = g_dir / "store.db";
  const char* verbose = std::getenv("INFERTUNE_FUZZ_VERBOSE");
  g_verbose = verbose != nullptr && *verbose != '\0' && *verbose != '0';
  if (const char* save = std::getenv("INFERTUNE_FUZZ_SAVE_FILE"); save != nullptr) g_save = save;
  if (!build_seed_stores()) std::exit(2);
  if (const char* seeds = std::getenv("INFERTUNE_FUZZ_WRITE_SEEDS"); seeds != nullptr && *seeds != '\0') {
    std::exit(write_seeds(seeds));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string file = file_of(data, size);
  remove_with_siblings(g_file, false);
  check(write_file(g_file, file), "the work file could be written");
  if (!g_save.empty()) write_file(g_save, file);
  try {
    exercise(file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "results_store_fuzz: uncaught exception: %s\n", e.what());
    __builtin_trap();
  } catch (...) {
    std::fprintf(stderr, "results_store_fuzz: uncaught exception of an unknown type\n");
    __builtin_trap();
  }
  return 0;
}
