#pragma once
// A host's identity for caching and for the results store: a hash of what decides its roofline figures
// (CPU model, ISA features, cores and threads, RAM, NUMA layout). The OS, GPUs and cache sizes are left
// out: a kernel update or a different CUDA_VISIBLE_DEVICES does not change CPU bandwidth.
#include <string>

#include "bench/probe/host_info.h"

namespace infertune {

// The canonical text that is hashed (readable, for debugging a cache miss).
std::string host_fingerprint_text(const HostInfo& host);

// 16 lowercase hex digits: FNV-1a 64 of host_fingerprint_text().
std::string host_fingerprint(const HostInfo& host);

}  // namespace infertune
