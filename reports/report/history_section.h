#pragma once
// The report's history section: every configuration measured by more than one sweep of a store (usually
// one sweep per build), drawn over time with its change points marked (reports/history), and a table of
// the changes. Empty when no configuration was measured twice.
#include <filesystem>
#include <string>
#include <vector>

namespace infertune {

std::string history_section_html(const std::vector<std::filesystem::path>& stores);

}  // namespace infertune
