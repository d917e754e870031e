#include "test_support.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace infertune::test {

std::filesystem::path fixture_path(const std::string& relative) {
  const char* override_dir = std::getenv("INFERTUNE_FIXTURES_DIR");
  const char* dir = override_dir && *override_dir ? override_dir : INFERTUNE_FIXTURES_DIR;
  return std::filesystem::path(dir) / relative;
}

std::vector<std::string> fixture_gguf_files() {
  std::vector<std::string> names;
  for (const char* dir : {"models", "vocab"}) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(fixture_path(dir), ec)) {
      if (entry.path().extension() == ".gguf")
        names.push_back(std::string(dir) + "/" + entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::byte> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  in.seekg(0, std::ios::end);
  std::vector<std::byte> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

std::vector<float> read_f32_file(const std::filesystem::path& path) {
  const auto bytes = read_file_bytes(path);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

std::filesystem::path temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "infertune-test";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  auto dir = std::filesystem::temp_directory_path() / ("infertune-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string infertune_binary() { return INFERTUNE_BINARY; }

CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace infertune::test
