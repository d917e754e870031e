#include "engine/cli/flag_file.h"

#include <fstream>
#include <sstream>

namespace infertune {

Result<std::string> read_flag_file(std::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("{} {}: cannot read the file", flag, path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail("{} {}: reading the file failed", flag, path);
  return text.str();
}

}  // namespace infertune
