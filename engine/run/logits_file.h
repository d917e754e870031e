#pragma once
// --logits-out: raw little-endian float32 logits, row-major [n_tokens][n_vocab], no header (the same
// layout as the fixtures' MODEL.seqX.logits.f32).
#include <span>
#include <string>

#include "kernels/result.h"

namespace infertune {

Status write_logits_file(const std::string& path, std::span<const float> logits);

}  // namespace infertune
