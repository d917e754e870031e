#pragma once
// The host probe as `infertune probe` prints it for people.
#include <string>

#include "bench/probe/host_probe.h"

namespace infertune {

// `from_cache`: say that the figures were reused rather than measured just now.
std::string host_probe_report(const HostProbe& probe, bool from_cache);

}  // namespace infertune
