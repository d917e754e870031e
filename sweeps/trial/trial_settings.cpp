// TrialSettings as JSON: how the sweep runner hands its --min-reps / --max-reps / --ci-target / --cooldown
// and warmup choice to a worker process. Missing keys keep their defaults; a wrong type, an out-of-range
// value or an unknown key is an error naming the key.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "sweeps/trial/trial_executor.h"

namespace infertune {
namespace {

constexpr std::array<std::string_view, 5> kKeys{"warmup", "min_reps", "max_reps", "ci_target", "cooldown_s"};

Status read_int(const nlohmann::json& j, const char* key, int& into) {
  if (!j.contains(key)) return {};
  const auto& v = j.at(key);
  if (!v.is_number_integer()) return fail("trial settings: '{}' must be an integer, got {}", key, v.dump());
  const auto n = v.get<int64_t>();
  if (n < 1 || n > 1000000) return fail("trial settings: '{}' is {}, outside 1..1000000", key, n);
  into = static_cast<int>(n);
  return {};
}

Status read_non_negative(const nlohmann::json& j, const char* key, double& into) {
  if (!j.contains(key)) return {};
  const auto& v = j.at(key);
  if (!v.is_number()) return fail("trial settings: '{}' must be a number, got {}", key, v.dump());
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0) return fail("trial settings: '{}' is {}, must be finite and >= 0", key, x);
  into = x;
  return {};
}

}  // namespace

nlohmann::json TrialSettings::to_json() const {
  return {{"warmup", warmup},
          {"min_reps", min_reps},
          {"max_reps", max_reps},
          {"ci_target", ci_target},
          {"cooldown_s", cooldown_s}};
}

Result<TrialSettings> TrialSettings::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return fail("trial settings: expected a JSON object, got {}", j.dump());
  for (const auto& [key, value] : j.items()) {
    if (std::ranges::find(kKeys, key) == kKeys.end()) {
      return fail("trial settings: unknown key '{}' (known: warmup, min_reps, max_reps, ci_target, cooldown_s)", key);
    }
  }
  TrialSettings s;
  if (j.contains("warmup")) {
    if (!j.at("warmup").is_boolean()) return fail("trial settings: 'warmup' must be true or false");
    s.warmup = j.at("warmup").get<bool>();
  }
  if (Status st = read_int(j, "min_reps", s.min_reps); !st) return st.error();
  if (Status st = read_int(j, "max_reps", s.max_reps); !st) return st.error();
  if (Status st = read_non_negative(j, "ci_target", s.ci_target); !st) return st.error();
  if (Status st = read_non_negative(j, "cooldown_s", s.cooldown_s); !st) return st.error();
  if (s.max_reps < s.min_reps) {
    return fail("trial settings: 'max_reps' {} is below 'min_reps' {}", s.max_reps, s.min_reps);
  }
  return s;
}

}  // namespace infertune
