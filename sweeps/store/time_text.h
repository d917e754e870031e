#pragma once
// Timestamps as the results store keeps them: UTC ISO 8601 text with milliseconds,
// "2025-06-01T12:00:00.123Z", which sorts as time does and which SQLite's date functions read.
#include <chrono>
#include <string>

namespace infertune {

std::string utc_time_text(std::chrono::system_clock::time_point time);
std::string utc_now_text();

}  // namespace infertune
