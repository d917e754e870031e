#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <string_view>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_reference.h"
#include "kernels/attention/attention_variants.h"

namespace infertune {

AttentionVariant scalar_attention_variant() {
  return {"scalar", 0, [] { return true; }, {"scalar", reference_attention, scalar_flash_attention}};
}

std::vector<AttentionVariant> compiled_attention_variants() {
  return {scalar_attention_variant(), avx2_attention_variant(), avx512_attention_variant()};
}

namespace {

struct Override {
  bool active = false;
  std::optional<std::string> forced;
};

Override& scoped_override() {
  static Override o;
  return o;
}

// What the environment forces: INFERTUNE_ATTENTION exactly, or INFERTUNE_KERNEL by prefix.
std::optional<std::string> forced_by_environment(bool& by_prefix) {
  by_prefix = false;
  if (const char* env = std::getenv("INFERTUNE_ATTENTION"); env && *env) return std::string(env);
  if (const char* env = std::getenv("INFERTUNE_KERNEL"); env && *env) {
    by_prefix = true;
    return std::string(env);
  }
  return std::nullopt;
}

// The highest-priority available variant matching `forced` (all match when it is empty). A name from
// INFERTUNE_KERNEL (by_prefix) that matches no attention variant (a matmul-only variant) leaves the best.
Result<AttentionKernels> select(const std::optional<std::string>& forced, bool by_prefix) {
  std::optional<AttentionVariant> best, best_any;
  std::vector<std::string_view> names;
  for (const AttentionVariant& v : compiled_attention_variants()) {
    if (v.available && !v.available()) continue;
    names.push_back(v.name);
    if (!best_any || v.priority > best_any->priority) best_any = v;
    const bool match = !forced || (by_prefix ? std::string_view(*forced).starts_with(v.name) : *forced == v.name);
    if (match && (!best || v.priority > best->priority)) best = v;
  }
  if (!best && by_prefix) best = best_any;
  if (!best) {
    return fail("attention kernel variant '{}' is not available on this CPU (available: {})", forced.value_or(""),
                fmt::join(names, ", "));
  }
  return best->kernels;
}

}  // namespace

Result<AttentionKernels> attention_kernels() {
  const Override& o = scoped_override();
  if (o.active) return select(o.forced, false);
  static const Result<AttentionKernels> from_environment = [] {
    bool by_prefix = false;
    const auto forced = forced_by_environment(by_prefix);
    return select(forced, by_prefix);
  }();
  return from_environment;
}

ScopedAttentionVariant::ScopedAttentionVariant(std::optional<std::string> forced) {
  Override& o = scoped_override();
  saved_ = o.forced;
  saved_active_ = o.active;
  o.active = true;
  o.forced = std::move(forced);
}

ScopedAttentionVariant::~ScopedAttentionVariant() {
  Override& o = scoped_override();
  o.forced = saved_;
  o.active = saved_active_;
}

}  // namespace infertune
