#include "sweeps/store/time_text.h"

#include <fmt/format.h>

#include <ctime>

namespace infertune {

std::string utc_time_text(std::chrono::system_clock::time_point time) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(time.time_since_epoch()).count();
  // Floor division, so times before 1970 still get milliseconds in [0, 1000).
  const int64_t seconds = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms - seconds * 1000);
}

std::string utc_now_text() { return utc_time_text(std::chrono::system_clock::now()); }

}  // namespace infertune
