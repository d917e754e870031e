#pragma once
// Where the host and build rows of the results store come from: the host probe (bench/probe) and the
// running binary itself.
#include "bench/probe/host_probe.h"
#include "sweeps/store/store_records.h"

namespace infertune {

// The probe's host description, its all-core read bandwidth and the whole probe document.
HostRecord host_record(const HostProbe& probe);

// This binary: version, git commit, compiler, build type and flags, compiled backends and matmul variants.
BuildRecord this_build_record();

}  // namespace infertune
