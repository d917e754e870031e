// libFuzzer target for the sweep spec in YAML: the input is the text of a spec file, read as
// `infertune sweep --spec` reads one (parse_spec_yaml, then resolve_spec). Properties checked on every
// input; a violation prints what failed and traps (libFuzzer: a crash):
//   - no crash, hang, uncaught exception (yaml-cpp's or nlohmann's) or over-allocation;
//   - a refusal names the file ("spec.yaml:LINE...") or, from resolve_spec, is not empty;
//   - a spec that resolves is well-formed: every setting has at least one value and each value is its
//     setting's canonical spelling; every workload's counts are non-negative and a batched or served
//     workload has sequences or clients; its canonical JSON serializes, and the same text resolves to the
//     same spec hash twice.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "engine/settings/settings_table.h"
#include "fuzz_check.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/spec/sweep_spec.h"

namespace {

using namespace infertune;

const std::string kSource = "spec.yaml";

using fuzz::check;

Result<SweepSpec> resolve_yaml(std::string_view yaml) {
  auto text = parse_spec_yaml(yaml, kSource);
  if (!text) {
    check(text.error().message.starts_with(kSource + ":"), "a YAML refusal names the file");
    return text.error();
  }
  auto spec = resolve_spec(*text);
  if (!spec) check(!spec.error().message.empty(), "resolve_spec's refusal has a message");
  return spec;
}

void check_settings(const SweepSpec& spec) {
  for (const auto& [key, values] : spec.settings) {
    const Setting* setting = find_setting(key);
    check(setting != nullptr, "every setting of a spec is in the settings table");
    check(!values.empty(), "every setting of a spec has a value");
    for (const auto& value : values) {
      auto canonical = setting->canonical(value);
      check(canonical.ok() && *canonical == value, "a spec's setting values are canonical");
    }
  }
}

void check_workloads(const SweepSpec& spec) {
  for (const auto& w : spec.workloads) {
    check(w.n_prompt >= 0 && w.n_gen >= 0 && w.depth >= 0, "workload counts are non-negative");
    if (w.kind == WorkloadKind::Batched) check(w.n_parallel >= 1, "a batched workload runs sequences");
    if (w.kind == WorkloadKind::Serve) check(w.clients >= 1, "a served workload has clients");
    check(w.slo_ttft_ms >= 0 && w.slo_itl_ms >= 0, "service-level objectives are non-negative");
    check(!w.name().empty(), "a workload has a name");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  auto spec = resolve_yaml(yaml);
  if (!spec) return 0;
  check_settings(*spec);
  check_workloads(*spec);
  const std::string hash = spec->hash();  // serializes the canonical JSON
  check(!hash.empty(), "a resolved spec has a hash");
  auto again = resolve_yaml(yaml);
  check(again.ok() && again->hash() == hash, "the same text resolves to the same spec hash");
  return 0;
}
