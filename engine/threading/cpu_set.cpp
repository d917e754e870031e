#include "engine/threading/cpu_set.h"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace infertune {
namespace {

constexpr const char* kFlag = "-C/--cpu-mask";

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The rightmost digit holds CPUs 0-3, the one left of it CPUs 4-7, and so on.
Result<CpuSet> parse_hex_mask(std::string_view text, std::string_view digits) {
  if (digits.empty()) return fail("{} '{}': no hex digits", kFlag, text);
  std::vector<unsigned> cpus;
  for (size_t i = 0; i < digits.size(); ++i) {
    const char c = digits[digits.size() - 1 - i];
    const int value = hex_digit_value(c);
    if (value < 0) return fail("{} '{}': '{}' is not a hex digit", kFlag, text, c);
    for (unsigned bit = 0; bit < 4; ++bit) {
      if ((value & (1 << bit)) == 0) continue;
      const size_t cpu = i * 4 + bit;
      if (cpu > kMaxCpuIndex)
        return fail("{} '{}': selects CPU {}, above the limit {}", kFlag, text, cpu, kMaxCpuIndex);
      cpus.push_back(static_cast<unsigned>(cpu));
    }
  }
  return CpuSet(std::move(cpus));
}

Result<unsigned> parse_cpu_index(std::string_view text, std::string_view number) {
  unsigned value = 0;
  const char* end = number.data() + number.size();
  auto [ptr, ec] = std::from_chars(number.data(), end, value);
  if (number.empty() || ec != std::errc() || ptr != end) {
    return fail("{} '{}': '{}' is not a CPU number", kFlag, text, number);
  }
  if (value > kMaxCpuIndex) return fail("{} '{}': CPU {} is above the limit {}", kFlag, text, value, kMaxCpuIndex);
  return value;
}

// "0-3,8,10-11"
Result<CpuSet> parse_range_list(std::string_view text) {
  std::vector<unsigned> cpus;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    const size_t dash = item.find('-');
    auto first = parse_cpu_index(text, item.substr(0, dash));
    if (!first) return first.error();
    unsigned last = *first;
    if (dash != std::string_view::npos) {
      auto parsed_last = parse_cpu_index(text, item.substr(dash + 1));
      if (!parsed_last) return parsed_last.error();
      last = *parsed_last;
      if (last < *first) return fail("{} '{}': range '{}' runs backwards", kFlag, text, item);
    }
    for (unsigned cpu = *first; cpu <= last; ++cpu) cpus.push_back(cpu);
    start = comma + 1;
  }
  return CpuSet(std::move(cpus));
}

}  // namespace

CpuSet::CpuSet(std::vector<unsigned> cpus) : cpus_(std::move(cpus)) {
  std::sort(cpus_.begin(), cpus_.end());
  cpus_.erase(std::unique(cpus_.begin(), cpus_.end()), cpus_.end());
}

CpuSet CpuSet::range(unsigned first, unsigned last) {
  std::vector<unsigned> cpus;
  for (unsigned cpu = first; cpu <= last && cpu >= first; ++cpu) cpus.push_back(cpu);
  return CpuSet(std::move(cpus));
}

bool CpuSet::contains(unsigned cpu) const { return std::binary_search(cpus_.begin(), cpus_.end(), cpu); }

CpuSet CpuSet::intersect(const CpuSet& other) const {
  std::vector<unsigned> out;
  std::set_intersection(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(), std::back_inserter(out));
  return CpuSet(std::move(out));
}

CpuSet CpuSet::unite(const CpuSet& other) const {
  std::vector<unsigned> out;
  std::set_union(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(), std::back_inserter(out));
  return CpuSet(std::move(out));
}

CpuSet CpuSet::minus(const CpuSet& other) const {
  std::vector<unsigned> out;
  std::set_difference(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(), std::back_inserter(out));
  return CpuSet(std::move(out));
}

std::string CpuSet::to_string() const {
  if (cpus_.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < cpus_.size();) {
    size_t j = i;
    while (j + 1 < cpus_.size() && cpus_[j + 1] == cpus_[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus_[i]);
    if (j > i) out += '-' + std::to_string(cpus_[j]);
    i = j + 1;
  }
  return out;
}

Result<CpuSet> parse_cpu_mask(std::string_view text) {
  if (text.empty()) return fail("{}: empty mask", kFlag);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    return parse_hex_mask(text, text.substr(2));
  if (text.find_first_of(",-") != std::string_view::npos) return parse_range_list(text);
  return parse_hex_mask(text, text);
}

}  // namespace infertune
