#pragma once
// The architecture part of `inspect`: the hyper-parameters as the engine reads them, and whether they
// agree with the tensor table (the same validation a model load performs).
#include <nlohmann/json.hpp>

#include <string>

#include "engine/gguf/gguf_file.h"

namespace infertune {

std::string architecture_summary_text(const GgufFile& file);
nlohmann::json architecture_summary_json(const GgufFile& file);

}  // namespace infertune
