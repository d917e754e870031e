#pragma once
// The text of `infertune --version`: version, git commit, build, compiled backends, detected CPU features.
#include <string>

namespace infertune {

std::string version_report();

}  // namespace infertune
