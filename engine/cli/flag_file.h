#pragma once
// The whole text of a file a flag names (--grammar-file, --json-schema-file, --check-file), with errors that name the
// flag and the path: "--grammar-file g.gbnf: cannot read the file".
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

Result<std::string> read_flag_file(std::string_view flag, const std::string& path);

}  // namespace infertune
