// A model file truncated while it is mapped (engine/gguf/mapped_file_guard.h): the read past its new end ends the
// process with a line naming the file and the offset and exit status 74, instead of a bare SIGBUS; a SIGBUS that is
// not a mapped file's keeps its default action.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "engine/gguf/mapped_file.h"
#include "engine/gguf/mapped_file_guard.h"
#include "sanitizer_runtime.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string three_pages(const std::string& name) {
  const auto path = (test::temp_dir() / name).string();
  std::ofstream(path, std::ios::binary) << std::string(3 * 4096, 'x');
  return path;
}

TEST(MappedFileGuardDeathTest, ATruncatedModelFileEndsTheProcessWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = three_pages("truncated.gguf");
  EXPECT_EXIT(
      {
        auto file = MappedFile::open(path);
        if (!file || ::truncate(path.c_str(), 0) != 0) std::exit(1);
        volatile std::byte byte = (*file)->bytes()[8192];
        (void)byte;
        std::exit(0);
      },
      testing::ExitedWithCode(kMappedFileChangedExitCode),
      "truncated.gguf' changed while it was in use .* at offset 8192 failed \\(SIGBUS\\)");
}

TEST(MappedFileGuardDeathTest, AnotherSigbusKeepsItsDefaultAction) {
  INFERTUNE_SKIP_UNDER_SANITIZER("handles SIGBUS itself");
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = three_pages("intact.gguf");
  EXPECT_EXIT(
      {
        auto file = MappedFile::open(path);  // installs the handler
        if (!file) std::exit(1);
        ::raise(SIGBUS);
        std::exit(0);
      },
      testing::KilledBySignal(SIGBUS), "");
}

TEST(MappedFileGuard, AnIntactFileReadsAsBefore) {
  const std::string path = three_pages("readable.gguf");
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ((*file)->bytes().size(), 3u * 4096);
  EXPECT_EQ((*file)->bytes()[8192], std::byte{'x'});
}

}  // namespace
}  // namespace infertune
