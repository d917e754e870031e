#pragma once
// The results store's schema (DESIGN.md, "Results store"), as the list of forward migrations that builds
// it. Migration 1 creates every table and the trial_summary view; 2 recreates the view with configuration
// columns and the utilization metrics; 3 adds the GPU utilization metrics to the view; 4 adds variant_quality
// (perplexity and KL divergence of quantization variants) and its figures to the view. Later versions append
// to the list.
#include <span>

#include "sweeps/store/migrations.h"

namespace infertune {

std::span<const Migration> store_migrations();

// The version a database has after store_migrations().
int store_schema_version();

}  // namespace infertune
