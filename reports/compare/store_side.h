#pragma once
// One side of `infertune compare BASELINE CANDIDATE` read from a results store: "runs.db" (its latest
// sweep) or "runs.db:7" (sweep 7; a file whose whole name exists is taken as it is, colon and all).
// The store is opened read-only (ResultsStore::open_read_only), which refuses, naming the file, what is
// not an infertune store or has a newer schema. Every trial becomes a MeasuredConfiguration keyed by
// configuration_key(); measured (non-warmup) samples are grouped by repetition.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"
#include "reports/compare/measured_side.h"
#include "sweeps/store/results_store.h"

namespace infertune {

struct StoreSelection {
  std::filesystem::path path;
  std::optional<int64_t> sweep;  // none: the latest
};

StoreSelection parse_store_selection(std::string_view text);

// The sweep's trials as a side named `name`.
Result<MeasuredSide> load_store_side(const StoreSelection& selection, const std::string& name);

// The same from an open store (tests, the A/A reader): `sweep_id` must exist.
Result<MeasuredSide> read_sweep_side(ResultsStore& store, int64_t sweep_id, const std::string& name);

}  // namespace infertune
