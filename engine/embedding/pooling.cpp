#include "engine/embedding/pooling.h"

#include <array>

namespace infertune {
namespace {

constexpr std::array<std::string_view, 4> kNames = {"none", "mean", "cls", "last"};
constexpr uint32_t kRankPooling = 4;  // llama.cpp's LLAMA_POOLING_TYPE_RANK
constexpr std::string_view kNoRank =
    "rank pooling (a reranker's classification head) is not supported: infertune has no such head";

}  // namespace

std::string_view pooling_name(Pooling pooling) { return kNames[static_cast<size_t>(pooling)]; }

Result<Pooling> parse_pooling(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<Pooling>(i);
  }
  if (name == "rank") return fail("--pooling rank: {}", kNoRank);
  return fail("--pooling '{}': expected none, mean, cls or last", name);
}

Result<Pooling> model_pooling(const ModelConfig& config) {
  if (config.pooling_type == kRankPooling) {
    return fail("the model's pooling_type is rank: {} (--pooling chooses another)", kNoRank);
  }
  if (config.pooling_type >= kNames.size()) return fail("the model's pooling_type {} is unknown", config.pooling_type);
  return static_cast<Pooling>(config.pooling_type);
}

}  // namespace infertune
