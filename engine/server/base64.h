#pragma once
// Standard base64 (RFC 4648, with padding): OpenAI's embeddings API sends vectors as base64 of their
// little-endian float32 bytes when a request asks for encoding_format "base64".
#include <cstddef>
#include <span>
#include <string>

namespace infertune {

std::string base64_encode(std::span<const std::byte> bytes);

}  // namespace infertune
