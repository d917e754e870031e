#include "sweeps/store/store_records.h"

#include <array>
#include <utility>

namespace infertune {
namespace {

constexpr std::array<std::pair<TrialStatus, std::string_view>, 5> kTrialStatusNames = {{
    {TrialStatus::ok, "ok"},
    {TrialStatus::failed, "failed"},
    {TrialStatus::timeout, "timeout"},
    {TrialStatus::oom, "oom"},
    {TrialStatus::skipped, "skipped"},
}};

constexpr std::array<std::pair<SweepStatus, std::string_view>, 4> kSweepStatusNames = {{
    {SweepStatus::running, "running"},
    {SweepStatus::done, "done"},
    {SweepStatus::interrupted, "interrupted"},
    {SweepStatus::failed, "failed"},
}};

constexpr std::array<std::pair<QualityStatus, std::string_view>, 3> kQualityStatusNames = {{
    {QualityStatus::measured, "measured"},
    {QualityStatus::not_meaningful, "not_meaningful"},
    {QualityStatus::failed, "failed"},
}};

template <class Enum, size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "unknown";
}

template <class Enum, size_t N>
std::optional<Enum> parse(const std::array<std::pair<Enum, std::string_view>, N>& names, std::string_view text) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(TrialStatus status) { return name_of(kTrialStatusNames, status); }
std::string_view to_string(SweepStatus status) { return name_of(kSweepStatusNames, status); }
std::optional<TrialStatus> parse_trial_status(std::string_view text) { return parse(kTrialStatusNames, text); }
std::optional<SweepStatus> parse_sweep_status(std::string_view text) { return parse(kSweepStatusNames, text); }
std::string_view to_string(QualityStatus status) { return name_of(kQualityStatusNames, status); }
std::optional<QualityStatus> parse_quality_status(std::string_view text) { return parse(kQualityStatusNames, text); }

std::optional<double> VariantQualityRecord::ppl_increase_pct() const {
  if (!ppl || !base_ppl || *base_ppl <= 0) return std::nullopt;
  return (*ppl / *base_ppl - 1) * 100;
}

}  // namespace infertune
