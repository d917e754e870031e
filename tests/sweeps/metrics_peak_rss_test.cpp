// Peak and current RSS from /proc/self/status, and resetting the peak through /proc/self/clear_refs.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "sanitizer_runtime.h"
#include "sweeps/metrics/peak_rss.h"

namespace infertune {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

TEST(MetricsPeakRss, CurrentNeverExceedsPeak) {
  const auto current = current_rss_bytes();
  const auto peak = peak_rss_bytes();
  ASSERT_TRUE(current && peak) << "/proc/self/status lacks VmRSS or VmHWM";
  EXPECT_GT(*current, 0);
  EXPECT_LE(*current, *peak);
}

TEST(MetricsPeakRss, PeakRisesWithTouchedMemoryAndFallsAfterReset) {
  INFERTUNE_SKIP_UNDER_SANITIZER("adds shadow and quarantine memory to the RSS");
  const Status first_reset = reset_peak_rss();
  if (!first_reset.ok())
    GTEST_SKIP() << "the kernel does not allow resetting the peak: " << first_reset.error().message;
  const int64_t peak_before = *peak_rss_bytes();

  const size_t bytes = 64 * kMiB;
  {
    std::unique_ptr<char[]> block(new char[bytes]);
    std::memset(block.get(), 1, bytes);  // touched, so every page is resident
    // The compiler may not drop the writes: the block is read back.
    volatile char sink = block[bytes / 2];
    (void)sink;
    const int64_t peak_touched = *peak_rss_bytes();
    EXPECT_GE(peak_touched - peak_before, 60 * kMiB) << "before " << peak_before << " after " << peak_touched;
  }
  // 64 MiB is above glibc's mmap threshold, so freeing it returns the pages at once.
  const int64_t current_after_free = *current_rss_bytes();
  ASSERT_TRUE(reset_peak_rss().ok());
  const int64_t peak_after_reset = *peak_rss_bytes();
  EXPECT_LT(peak_after_reset, current_after_free + 8 * kMiB);
  EXPECT_LT(peak_after_reset, peak_before + 32 * kMiB);
}

}  // namespace
}  // namespace infertune
