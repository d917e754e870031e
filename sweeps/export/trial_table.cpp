#include "sweeps/export/trial_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>

namespace infertune {
namespace {

constexpr const char* kColumns[] = {
    "sweep_id",
    "trial_id",
    "status",
    "reason",
    "config_hash",
    "model",
    "config",
    "pp_tps",
    "pp_tps_ci95",
    "tg_tps",
    "tg_tps_ci95",
    "ttft_ms",
    "itl_p50_ms",
    "itl_p95_ms",
    "aggregate_tps",
    "load_ms",
    "predicted_peak_rss_bytes",
    "peak_rss_bytes",
    "started_at",
    "finished_at",
    "duration_s",
    // Schema version 2 (added at the end: the order above is what older readers of the export expect).
    "quant",
    "workload",
    "n_prompt",
    "n_gen",
    "depth",
    "threads",
    "threads_batch",
    "n_gpu_layers",
    "n_ctx",
    "n_batch",
    "n_ubatch",
    "n_parallel",
    "type_k",
    "type_v",
    "flash_attn",
    "mmap",
    "numa",
    "cpu_mask",
    "ttft_p95_ms",
    "itl_p99_ms",
    "e2e_ms",
    "e2e_p95_ms",
    "aggregate_tps_ci95",
    "cpu_busy_share",
    "weight_read_gbs",
    "bandwidth_pct",
    "kv_bytes",
    "instructions",
    "cycles",
    "llc_misses",
    "ipc",
    "model_bytes",
    // Schema version 3.
    "gpu_busy_pct",
    "gpu_vram_peak_bytes",
    "gpu_mem_clock_mhz",
    // Schema version 4: the variant's quality against the sweep's base model (NULL without figures).
    "quality_status",
    "ppl",
    "base_ppl",
    "ppl_increase_pct",
    "kld_mean",
    "same_top",
};

Cell read_cell(const Statement& row, int column) {
  switch (row.column_type(column)) {
    case SQLITE_INTEGER:
      return row.column_int(column);
    case SQLITE_FLOAT:
      return row.column_double(column);
    case SQLITE_NULL:
      return std::monostate{};
    default:
      return row.column_text(column);
  }
}

Status check_sweep_exists(Database& db, int64_t sweep_id) {
  auto query = db.prepare("SELECT 1 FROM sweeps WHERE id = ?");
  if (!query) return query.error();
  query->bind(1, sweep_id);
  auto row = query->step();
  if (!row) return row.error();
  if (!*row) return fail("results store {}: no sweep {}", db.path().string(), sweep_id);
  return {};
}

}  // namespace

std::span<const char* const> trial_table_columns() { return kColumns; }

Result<Table> read_trial_table(Database& db, std::optional<int64_t> sweep_id) {
  if (sweep_id) {
    if (Status s = check_sweep_exists(db, *sweep_id); !s) return s.error();
  }
  const std::string sql =
      fmt::format("SELECT {} FROM trial_summary{}", fmt::join(kColumns, ", "), sweep_id ? " WHERE sweep_id = ?" : "");
  auto query = db.prepare(sql);
  if (!query) return query.error();
  if (sweep_id) query->bind(1, *sweep_id);
  Table table;
  for (const char* c : kColumns) {
    table.columns.emplace_back(c);
    table.json_columns.push_back(std::string_view(c) == "config");
  }
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return table;
    auto& cells = table.rows.emplace_back();
    for (int c = 0; c < static_cast<int>(table.columns.size()); ++c) cells.push_back(read_cell(*query, c));
  }
}

}  // namespace infertune
