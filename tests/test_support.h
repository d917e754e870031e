#pragma once
// Helpers shared by the test suites: fixture paths and reading whole files.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace infertune::test {

// <fixtures>/<relative>: the directory is $INFERTUNE_FIXTURES_DIR when set, else the one configured at build time
// (CMake's INFERTUNE_FIXTURES_DIR, ../shared/fixtures by default).
std::filesystem::path fixture_path(const std::string& relative);

// "models/NAME.gguf" and "vocab/NAME.gguf" for every GGUF fixture, sorted. Empty when the fixtures directory is
// missing (a checkout not beside shared/): parameterized suites list no cases instead of throwing while gtest
// enumerates the tests, which would stop the build; FixturesDirectory.Exists fails with the path instead.
std::vector<std::string> fixture_gguf_files();

std::vector<std::byte> read_file_bytes(const std::filesystem::path& path);
std::vector<float> read_f32_file(const std::filesystem::path& path);

// A fresh, empty directory under the system temp dir, unique to the calling test.
std::filesystem::path temp_dir();

// Path of the built `infertune` binary (for end-to-end tests of subcommands).
std::string infertune_binary();

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line and captures its output (end-to-end tests of subcommands).
CommandResult run_command(const std::string& command_line);

}  // namespace infertune::test
