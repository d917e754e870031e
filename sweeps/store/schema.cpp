#include "sweeps/store/schema.h"

namespace infertune {
namespace {

// Times are UTC ISO 8601 text (time_text.h). JSON columns are checked with json_valid, so the sqlite3
// shell's json_extract() works on every row.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE hosts (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,        -- host_fingerprint(): 16 hex digits over CPU, cores, RAM, NUMA
  cpu_model TEXT NOT NULL,
  cpu_features TEXT NOT NULL,              -- space separated, e.g. 'avx2 fma avx512f'
  physical_cores INTEGER NOT NULL,
  hardware_threads INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  numa_nodes TEXT NOT NULL CHECK (json_valid(numa_nodes)),  -- [{"os_index","memory_bytes","cpus"}]
  gpus TEXT NOT NULL CHECK (json_valid(gpus)),              -- [{"index","name","memory_bytes",..}]
  read_bandwidth_gbs REAL,                 -- measured DRAM read, all cores, best of the repetitions
  probe TEXT NOT NULL CHECK (json_valid(probe)),            -- the whole `infertune probe --json` document
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL
);

CREATE TABLE builds (
  id INTEGER PRIMARY KEY,
  version TEXT NOT NULL,
  git_commit TEXT NOT NULL,                -- with '-dirty' when the tree had changes
  compiler TEXT NOT NULL,
  build_type TEXT NOT NULL,
  flags TEXT NOT NULL,
  backends TEXT NOT NULL,                  -- 'cpu', 'cpu cuda'
  kernel_variants TEXT NOT NULL,           -- compiled matmul variants, e.g. 'avx512vnni avx2 scalar'
  first_seen TEXT NOT NULL,
  UNIQUE (version, git_commit, compiler, build_type, flags, backends, kernel_variants)
);

CREATE TABLE models (
  id INTEGER PRIMARY KEY,
  content_hash TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,                      -- where it was last seen
  arch TEXT NOT NULL,
  n_params INTEGER,
  file_bytes INTEGER NOT NULL,
  type_mix TEXT NOT NULL CHECK (json_valid(type_mix)),      -- {"q4_K": bytes, "f32": bytes, ..}
  first_seen TEXT NOT NULL
);

CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  spec TEXT NOT NULL,                      -- the spec as given (YAML, or the flags written as YAML)
  spec_hash TEXT NOT NULL,                 -- what --resume looks a sweep up by
  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  build_id INTEGER NOT NULL REFERENCES builds (id),
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX sweeps_by_spec_hash ON sweeps (spec_hash);

CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  config_hash TEXT NOT NULL,
  config TEXT NOT NULL CHECK (json_valid(config)),          -- the trial's configuration as JSON
  model_id INTEGER REFERENCES models (id),
  status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout', 'oom', 'skipped')),
  reason TEXT,                             -- why it is not ok: signal, exit status, last stderr lines
  predicted_peak_rss_bytes INTEGER,        -- the memory model's prediction
  peak_rss_bytes INTEGER,                  -- measured
  started_at TEXT,
  finished_at TEXT,
  duration_s REAL,
  UNIQUE (sweep_id, config_hash)
);

CREATE TABLE samples (
  id INTEGER PRIMARY KEY,                  -- insertion order: the order the values were measured
  trial_id INTEGER NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  repetition INTEGER NOT NULL,             -- 0-based; warmups count too
  value REAL NOT NULL,
  is_warmup INTEGER NOT NULL CHECK (is_warmup IN (0, 1))
);
CREATE INDEX samples_by_trial ON samples (trial_id, metric);

CREATE TABLE metrics (
  trial_id INTEGER NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  n INTEGER NOT NULL,                      -- samples summarized (warmups excluded)
  mean REAL NOT NULL,
  stddev REAL,                             -- NULL when n = 1
  median REAL NOT NULL,
  p50 REAL NOT NULL,
  p95 REAL NOT NULL,
  p99 REAL NOT NULL,
  ci95_half_width REAL,                    -- Student t; NULL when n = 1
  PRIMARY KEY (trial_id, metric)
);

CREATE TABLE recommendations (
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  scenario TEXT NOT NULL,                  -- 'latency', 'throughput', 'mixed'
  trial_id INTEGER REFERENCES trials (id) ON DELETE CASCADE,
  details TEXT NOT NULL CHECK (json_valid(details)),
  created_at TEXT NOT NULL
);

-- One row per trial with its main metrics: `SELECT * FROM trial_summary` in the sqlite3 shell, and the
-- rows `infertune export` writes. Throughput columns are means over the measured repetitions, ttft_ms is
-- the median, itl_* are percentiles over every measured gap between tokens.
CREATE VIEW trial_summary AS
SELECT
  t.sweep_id AS sweep_id,
  t.id AS trial_id,
  t.status AS status,
  t.reason AS reason,
  t.config_hash AS config_hash,
  m.path AS model,
  t.config AS config,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps_ci95,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps_ci95,
  (SELECT median FROM metrics WHERE trial_id = t.id AND metric = 'ttft_ms') AS ttft_ms,
  (SELECT p50 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p50_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p95_ms,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'aggregate_tps') AS aggregate_tps,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'load_ms') AS load_ms,
  t.predicted_peak_rss_bytes AS predicted_peak_rss_bytes,
  t.peak_rss_bytes AS peak_rss_bytes,
  t.started_at AS started_at,
  t.finished_at AS finished_at,
  t.duration_s AS duration_s
FROM trials AS t
LEFT JOIN models AS m ON m.id = t.model_id
ORDER BY t.sweep_id, t.id;
)sql";

// Version 2: the trial_summary view with the configuration's main fields as columns (so the sqlite3 shell
// and the recommendations need no json_extract), the tail latencies, and the utilization metrics
// (sweeps/metrics). Tables are unchanged: a v1 file keeps every row, and its trials simply have no samples
// of the new metrics (NULL columns). v1's view is what older files contain; its text above stays as it was.
constexpr std::string_view kSchemaV2 = R"sql(
DROP VIEW trial_summary;

-- One row per trial with its main metrics: `SELECT * FROM trial_summary` in the sqlite3 shell, and the
-- rows `infertune export` writes. Throughputs and utilization are means over the measured repetitions,
-- ttft_ms and e2e_ms medians, itl_* percentiles over every measured gap between tokens. Configuration
-- columns come from the trial's config JSON; quant is NULL for a model file used as given.
CREATE VIEW trial_summary AS
SELECT
  t.sweep_id AS sweep_id,
  t.id AS trial_id,
  t.status AS status,
  t.reason AS reason,
  t.config_hash AS config_hash,
  m.path AS model,
  NULLIF(json_extract(t.config, '$.quant'), '') AS quant,
  json_extract(t.config, '$.workload.kind') AS workload,
  json_extract(t.config, '$.workload.n_prompt') AS n_prompt,
  json_extract(t.config, '$.workload.n_gen') AS n_gen,
  json_extract(t.config, '$.workload.depth') AS depth,
  json_extract(t.config, '$.threads') AS threads,
  json_extract(t.config, '$.threads_batch') AS threads_batch,
  json_extract(t.config, '$.n_gpu_layers') AS n_gpu_layers,
  json_extract(t.config, '$.n_ctx') AS n_ctx,
  json_extract(t.config, '$.n_batch') AS n_batch,
  json_extract(t.config, '$.n_ubatch') AS n_ubatch,
  json_extract(t.config, '$.n_parallel') AS n_parallel,
  json_extract(t.config, '$.type_k') AS type_k,
  json_extract(t.config, '$.type_v') AS type_v,
  json_extract(t.config, '$.flash_attn') AS flash_attn,
  json_extract(t.config, '$.mmap') AS mmap,
  json_extract(t.config, '$.numa') AS numa,
  json_extract(t.config, '$.cpu_mask') AS cpu_mask,
  t.config AS config,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps_ci95,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps_ci95,
  (SELECT median FROM metrics WHERE trial_id = t.id AND metric = 'ttft_ms') AS ttft_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'ttft_ms') AS ttft_p95_ms,
  (SELECT p50 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p50_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p95_ms,
  (SELECT p99 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p99_ms,
  (SELECT median FROM metrics WHERE trial_id = t.id AND metric = 'e2e_ms') AS e2e_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'e2e_ms') AS e2e_p95_ms,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'aggregate_tps') AS aggregate_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'aggregate_tps') AS aggregate_tps_ci95,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'load_ms') AS load_ms,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'cpu_busy_share') AS cpu_busy_share,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'weight_read_gbs') AS weight_read_gbs,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'bandwidth_pct') AS bandwidth_pct,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'kv_bytes') AS kv_bytes,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'instructions') AS instructions,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'cycles') AS cycles,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'llc_misses') AS llc_misses,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'ipc') AS ipc,
  m.file_bytes AS model_bytes,
  t.predicted_peak_rss_bytes AS predicted_peak_rss_bytes,
  t.peak_rss_bytes AS peak_rss_bytes,
  t.started_at AS started_at,
  t.finished_at AS finished_at,
  t.duration_s AS duration_s
FROM trials AS t
LEFT JOIN models AS m ON m.id = t.model_id
ORDER BY t.sweep_id, t.id;
)sql";

// Version 3: trial_summary with the GPU utilization metrics (gpu_busy_pct, gpu_vram_peak_bytes,
// gpu_mem_clock_mhz; metric_names.h), appended after ipc. Tables are unchanged; trials of older files and
// CPU-only trials have NULL there.
constexpr std::string_view kSchemaV3 = R"sql(
DROP VIEW trial_summary;

-- One row per trial with its main metrics: `SELECT * FROM trial_summary` in the sqlite3 shell, and the
-- rows `infertune export` writes. Throughputs and utilization are means over the measured repetitions,
-- ttft_ms and e2e_ms medians, itl_* percentiles over every measured gap between tokens (gpu_vram_peak_bytes:
-- the mean of each repetition's peak). Configuration columns come from the trial's config JSON; quant is NULL
-- for a model file used as given.
CREATE VIEW trial_summary AS
SELECT
  t.sweep_id AS sweep_id,
  t.id AS trial_id,
  t.status AS status,
  t.reason AS reason,
  t.config_hash AS config_hash,
  m.path AS model,
  NULLIF(json_extract(t.config, '$.quant'), '') AS quant,
  json_extract(t.config, '$.workload.kind') AS workload,
  json_extract(t.config, '$.workload.n_prompt') AS n_prompt,
  json_extract(t.config, '$.workload.n_gen') AS n_gen,
  json_extract(t.config, '$.workload.depth') AS depth,
  json_extract(t.config, '$.threads') AS threads,
  json_extract(t.config, '$.threads_batch') AS threads_batch,
  json_extract(t.config, '$.n_gpu_layers') AS n_gpu_layers,
  json_extract(t.config, '$.n_ctx') AS n_ctx,
  json_extract(t.config, '$.n_batch') AS n_batch,
  json_extract(t.config, '$.n_ubatch') AS n_ubatch,
  json_extract(t.config, '$.n_parallel') AS n_parallel,
  json_extract(t.config, '$.type_k') AS type_k,
  json_extract(t.config, '$.type_v') AS type_v,
  json_extract(t.config, '$.flash_attn') AS flash_attn,
  json_extract(t.config, '$.mmap') AS mmap,
  json_extract(t.config, '$.numa') AS numa,
  json_extract(t.config, '$.cpu_mask') AS cpu_mask,
  t.config AS config,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps_ci95,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps_ci95,
  (SELECT median FROM metrics WHERE trial_id = t.id AND metric = 'ttft_ms') AS ttft_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'ttft_ms') AS ttft_p95_ms,
  (SELECT p50 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p50_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p95_ms,
  (SELECT p99 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p99_ms,
  (SELECT median FROM metrics WHERE trial_id = t.id AND metric = 'e2e_ms') AS e2e_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'e2e_ms') AS e2e_p95_ms,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'aggregate_tps') AS aggregate_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'aggregate_tps') AS aggregate_tps_ci95,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'load_ms') AS load_ms,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'cpu_busy_share') AS cpu_busy_share,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'weight_read_gbs') AS weight_read_gbs,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'bandwidth_pct') AS bandwidth_pct,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'kv_bytes') AS kv_bytes,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'instructions') AS instructions,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'cycles') AS cycles,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'llc_misses') AS llc_misses,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'ipc') AS ipc,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'gpu_busy_pct') AS gpu_busy_pct,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'gpu_vram_peak_bytes') AS gpu_vram_peak_bytes,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'gpu_mem_clock_mhz') AS gpu_mem_clock_mhz,
  m.file_bytes AS model_bytes,
  t.predicted_peak_rss_bytes AS predicted_peak_rss_bytes,
  t.peak_rss_bytes AS peak_rss_bytes,
  t.started_at AS started_at,
  t.finished_at AS finished_at,
  t.duration_s AS duration_s
FROM trials AS t
LEFT JOIN models AS m ON m.id = t.model_id
ORDER BY t.sweep_id, t.id;
)sql";

// Version 4: the quality of quantization variants against their base (sweeps/quality): one row per sweep and
// variant, measured once per variant, not per trial; trial_summary gains its main figures (quality_status, ppl,
// base_ppl, ppl_increase_pct, kld_mean, same_top). Older files get the empty table; their trials have NULL there.
constexpr std::string_view kSchemaV4 = R"sql(
CREATE TABLE variant_quality (
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  model_id INTEGER NOT NULL REFERENCES models (id),    -- the variant
  base_model_id INTEGER REFERENCES models (id),        -- what it was compared with
  quant TEXT NOT NULL,                     -- the variant's type as the sweep named it
  status TEXT NOT NULL CHECK (status IN ('measured', 'not_meaningful', 'failed')),
  reason TEXT,                             -- why there are no figures: synthetic (random) weights, an error
  corpus TEXT,                             -- engine/quality/corpus.h name
  n_ctx INTEGER,                           -- tokens per chunk
  n_chunks INTEGER,
  positions INTEGER,                       -- tokens scored
  ppl REAL,                                -- the variant's perplexity
  ppl_error REAL,                          -- its standard error
  base_ppl REAL,                           -- the base's, on the same tokens
  kld_mean REAL,                           -- mean KL(base || variant) per position
  kld_error REAL,
  kld_p99 REAL,
  kld_max REAL,
  same_top REAL,                           -- share of positions whose most likely token is the base's
  measured_at TEXT NOT NULL,
  UNIQUE (sweep_id, model_id)
);

DROP VIEW trial_summary;

-- One row per trial with its main metrics: `SELECT * FROM trial_summary` in the sqlite3 shell, and the
-- rows `infertune export` writes. Throughputs and utilization are means over the measured repetitions,
-- ttft_ms and e2e_ms medians, itl_* percentiles over every measured gap between tokens (gpu_vram_peak_bytes:
-- the mean of each repetition's peak). Configuration columns come from the trial's config JSON; quant is NULL
-- for a model file used as given. Quality columns (the variant's, against the sweep's base model) are NULL for
-- model files used as given and for variants without figures (quality_status says why).
CREATE VIEW trial_summary AS
SELECT
  t.sweep_id AS sweep_id,
  t.id AS trial_id,
  t.status AS status,
  t.reason AS reason,
  t.config_hash AS config_hash,
  m.path AS model,
  NULLIF(json_extract(t.config, '$.quant'), '') AS quant,
  json_extract(t.config, '$.workload.kind') AS workload,
  json_extract(t.config, '$.workload.n_prompt') AS n_prompt,
  json_extract(t.config, '$.workload.n_gen') AS n_gen,
  json_extract(t.config, '$.workload.depth') AS depth,
  json_extract(t.config, '$.threads') AS threads,
  json_extract(t.config, '$.threads_batch') AS threads_batch,
  json_extract(t.config, '$.n_gpu_layers') AS n_gpu_layers,
  json_extract(t.config, '$.n_ctx') AS n_ctx,
  json_extract(t.config, '$.n_batch') AS n_batch,
  json_extract(t.config, '$.n_ubatch') AS n_ubatch,
  json_extract(t.config, '$.n_parallel') AS n_parallel,
  json_extract(t.config, '$.type_k') AS type_k,
  json_extract(t.config, '$.type_v') AS type_v,
  json_extract(t.config, '$.flash_attn') AS flash_attn,
  json_extract(t.config, '$.mmap') AS mmap,
  json_extract(t.config, '$.numa') AS numa,
  json_extract(t.config, '$.cpu_mask') AS cpu_mask,
  t.config AS config,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'pp_tps') AS pp_tps_ci95,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'tg_tps') AS tg_tps_ci95,
  (SELECT median FROM metrics WHERE trial_id = t.id AND metric = 'ttft_ms') AS ttft_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'ttft_ms') AS ttft_p95_ms,
  (SELECT p50 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p50_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p95_ms,
  (SELECT p99 FROM metrics WHERE trial_id = t.id AND metric = 'itl_ms') AS itl_p99_ms,
  (SELECT median FROM metrics WHERE trial_id = t.id AND metric = 'e2e_ms') AS e2e_ms,
  (SELECT p95 FROM metrics WHERE trial_id = t.id AND metric = 'e2e_ms') AS e2e_p95_ms,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'aggregate_tps') AS aggregate_tps,
  (SELECT ci95_half_width FROM metrics WHERE trial_id = t.id AND metric = 'aggregate_tps') AS aggregate_tps_ci95,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'load_ms') AS load_ms,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'cpu_busy_share') AS cpu_busy_share,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'weight_read_gbs') AS weight_read_gbs,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'bandwidth_pct') AS bandwidth_pct,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'kv_bytes') AS kv_bytes,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'instructions') AS instructions,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'cycles') AS cycles,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'llc_misses') AS llc_misses,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'ipc') AS ipc,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'gpu_busy_pct') AS gpu_busy_pct,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'gpu_vram_peak_bytes') AS gpu_vram_peak_bytes,
  (SELECT mean FROM metrics WHERE trial_id = t.id AND metric = 'gpu_mem_clock_mhz') AS gpu_mem_clock_mhz,
  m.file_bytes AS model_bytes,
  q.status AS quality_status,
  q.ppl AS ppl,
  q.base_ppl AS base_ppl,
  CASE WHEN q.base_ppl > 0 THEN (q.ppl / q.base_ppl - 1) * 100 END AS ppl_increase_pct,
  q.kld_mean AS kld_mean,
  q.same_top AS same_top,
  t.predicted_peak_rss_bytes AS predicted_peak_rss_bytes,
  t.peak_rss_bytes AS peak_rss_bytes,
  t.started_at AS started_at,
  t.finished_at AS finished_at,
  t.duration_s AS duration_s
FROM trials AS t
LEFT JOIN models AS m ON m.id = t.model_id
LEFT JOIN variant_quality AS q ON q.sweep_id = t.sweep_id AND q.model_id = t.model_id
ORDER BY t.sweep_id, t.id;
)sql";

// Version 5: the slice of the plan a sweep ran (`infertune sweep --shard I/N`, or the slices a merge combined):
// 'I/N', 'I,J/N'; NULL for the whole plan. Older sweeps ran whole plans: NULL.
constexpr std::string_view kSchemaV5 = R"sql(
ALTER TABLE sweeps ADD COLUMN shard TEXT;
)sql";

constexpr Migration kMigrations[] = {
    {1, "hosts, builds, models, sweeps, trials, samples, metrics, recommendations; trial_summary view", kSchemaV1},
    {2, "trial_summary with configuration columns, tail latencies and utilization metrics", kSchemaV2},
    {3, "trial_summary with GPU utilization metrics", kSchemaV3},
    {4, "variant_quality (perplexity, KL divergence of quantization variants); trial_summary with its figures",
     kSchemaV4},
    {5, "sweeps.shard: the slice of the plan a sharded sweep ran", kSchemaV5},
};

}  // namespace

std::span<const Migration> store_migrations() { return kMigrations; }

int store_schema_version() { return static_cast<int>(std::size(kMigrations)); }

}  // namespace infertune
