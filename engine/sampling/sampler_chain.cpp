#include "engine/sampling/sampler_chain.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

namespace infertune {
namespace {

enum class StageKind { Penalties, TopK, TopP, MinP, Temperature, Dist, Greedy };

struct StageName {
  std::string_view name;
  StageKind kind;
};

constexpr std::array<StageName, 8> kStageNames{{
    {"penalties", StageKind::Penalties},
    {"top_k", StageKind::TopK},
    {"top_p", StageKind::TopP},
    {"min_p", StageKind::MinP},
    {"temperature", StageKind::Temperature},
    {"temp", StageKind::Temperature},
    {"dist", StageKind::Dist},
    {"greedy", StageKind::Greedy},
}};

constexpr std::string_view kKnownNames = "penalties, top_k, top_p, min_p, temperature (temp), dist, greedy";

bool is_selection(StageKind kind) { return kind == StageKind::Dist || kind == StageKind::Greedy; }

std::optional<StageKind> stage_kind(std::string_view name) {
  for (const StageName& entry : kStageNames) {
    if (entry.name == name) return entry.kind;
  }
  return std::nullopt;
}

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// "a, b;c" -> [a, b, c]; checks each name, duplicates, and that a selection stage comes only last.
Result<std::vector<StageKind>> parse_order(std::string_view order) {
  if (trim(order).empty()) return fail("sampler order is empty (known stages: {})", kKnownNames);
  std::vector<StageKind> kinds;
  std::vector<std::string_view> names;
  size_t position = 0;
  while (true) {
    const size_t end = order.find_first_of(",;");
    const std::string_view name = trim(order.substr(0, end));
    ++position;
    if (name.empty()) return fail("sampler order: stage {} is empty", position);
    const std::optional<StageKind> kind = stage_kind(name);
    if (!kind) return fail("sampler order: unknown stage '{}' at position {} (known: {})", name, position, kKnownNames);
    if (std::find(kinds.begin(), kinds.end(), *kind) != kinds.end()) {
      return fail("sampler order: stage '{}' at position {} is already listed", name, position);
    }
    if (!kinds.empty() && is_selection(kinds.back())) {
      return fail("sampler order: '{}' at position {} follows '{}', which must be the last stage", name, position,
                  names.back());
    }
    kinds.push_back(*kind);
    names.push_back(name);
    if (end == std::string_view::npos) break;
    order.remove_prefix(end + 1);
  }
  return kinds;
}

FilterStage make_filter(StageKind kind, const SamplingParams& p) {
  switch (kind) {
    case StageKind::Penalties:
      return PenaltiesStage(p.repeat_penalty, p.repeat_last_n, p.frequency_penalty, p.presence_penalty);
    case StageKind::TopK:
      return TopKStage(p.top_k);
    case StageKind::TopP:
      return TopPStage(p.top_p);
    case StageKind::MinP:
      return MinPStage(p.min_p);
    default:
      return TemperatureStage(p.temperature);
  }
}

std::vector<FilterStage> make_filters(std::span<const StageKind> kinds, const SamplingParams& params) {
  std::vector<FilterStage> filters;
  for (StageKind kind : kinds) {
    if (!is_selection(kind)) filters.push_back(make_filter(kind, params));
  }
  return filters;
}

SelectionStage make_selection(StageKind kind, uint64_t seed) {
  if (kind == StageKind::Greedy) return GreedyStage{};
  return DistStage(seed);
}

StageKind default_selection(const SamplingParams& params) {
  return params.temperature <= 0.0f ? StageKind::Greedy : StageKind::Dist;
}

std::vector<StageKind> default_order(const SamplingParams& params) {
  if (params.temperature <= 0.0f) return {StageKind::Penalties, StageKind::Greedy};
  return {StageKind::Penalties, StageKind::TopK,        StageKind::TopP,
          StageKind::MinP,      StageKind::Temperature, StageKind::Dist};
}

}  // namespace

SamplerChain::SamplerChain(std::vector<FilterStage> filters, SelectionStage selection, uint64_t seed)
    : filters_(std::move(filters)), selection_(std::move(selection)), seed_(seed) {}

SamplerChain::SamplerChain(const SamplingParams& params) : selection_(GreedyStage{}), seed_(0) {
  const std::vector<StageKind> kinds = default_order(params);
  seed_ = resolve_seed(params.seed);
  filters_ = make_filters(kinds, params);
  selection_ = make_selection(kinds.back(), seed_);
}

Result<SamplerChain> SamplerChain::create(const SamplingParams& params) {
  if (Status valid = validate(params); !valid) return valid.error();
  return SamplerChain(params);
}

Result<SamplerChain> SamplerChain::from_spec(const SamplingParams& params, std::string_view order) {
  if (Status valid = validate(params); !valid) return valid.error();
  Result<std::vector<StageKind>> kinds = parse_order(order);
  if (!kinds) return kinds.error();
  if (!is_selection(kinds->back())) kinds->push_back(default_selection(params));
  const uint64_t seed = resolve_seed(params.seed);
  return SamplerChain(make_filters(*kinds, params), make_selection(kinds->back(), seed), seed);
}

int32_t SamplerChain::sample(std::span<const float> logits) {
  candidates_.assign(logits);
  for (FilterStage& filter : filters_) {
    std::visit([this](auto& stage) { stage.apply(candidates_); }, filter);
  }
  return std::visit([this](auto& stage) { return stage.select(candidates_); }, selection_);
}

Result<int32_t> SamplerChain::try_sample(std::span<const float> logits) {
  const int32_t token = sample(logits);
  if (token != kNoToken) return token;
  if (logits.empty()) return fail("sampling: the logits are empty (n_vocab = 0)");
  return fail("sampling: every one of the {} logits is NaN or -inf; no token can be chosen", logits.size());
}

void SamplerChain::accept(int32_t token) {
  for (FilterStage& filter : filters_) {
    if (auto* penalties = std::get_if<PenaltiesStage>(&filter)) penalties->accept(token);
  }
}

void SamplerChain::reset() {
  for (FilterStage& filter : filters_) {
    if (auto* penalties = std::get_if<PenaltiesStage>(&filter)) penalties->reset();
  }
  if (auto* dist = std::get_if<DistStage>(&selection_)) dist->reset();
}

std::string SamplerChain::describe() const {
  std::string text;
  for (const FilterStage& filter : filters_) {
    text += std::visit([](const auto& stage) { return stage.describe(); }, filter);
    text += " -> ";
  }
  return text + std::visit([](const auto& stage) { return stage.describe(); }, selection_);
}

}  // namespace infertune
