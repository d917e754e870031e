#pragma once
// A host's identity for caching and for the results store: a hash of what decides its roofline figures and
// does not drift while the machine runs (CPU vendor, model and ISA features, packages, cores and threads,
// the NUMA nodes and their CPUs). Memory sizes are left out (see host_fingerprint.cpp), as are the OS, GPUs
// and cache sizes: a kernel update or a different CUDA_VISIBLE_DEVICES does not change CPU bandwidth.
//
// The fingerprint names the probe cache file (probe_cache.h) and is the hosts table's key (sweeps/store):
// two reads of the same host, in any two processes, give the same text. A change of this formula makes
// every host look new once: its probe is measured again and the store gains a row for it.
#include <string>

#include "bench/probe/host_info.h"

namespace infertune {

// The canonical text that is hashed (readable, for debugging a cache miss).
std::string host_fingerprint_text(const HostInfo& host);

// 16 lowercase hex digits: FNV-1a 64 of host_fingerprint_text().
std::string host_fingerprint(const HostInfo& host);

}  // namespace infertune
