#include "engine/tokenizer/tokenizer_metadata.h"

#include <variant>
#include <vector>

namespace infertune {

bool is_supported_tokenizer_model(std::string_view model) {
  return model == "llama" || model == "gpt2" || model == "bert";
}

Status check_tokenizer_metadata(const GgufFile& file) {
  if (file.find("tokenizer.ggml.model") != nullptr) {
    auto model = file.get_string("tokenizer.ggml.model");
    if (!model) return model.error();
    if (!is_supported_tokenizer_model(*model)) {
      return fail("tokenizer.ggml.model = '{}': unsupported tokenizer (supported: llama, gpt2, bert)", *model);
    }
  }
  if (file.find("tokenizer.ggml.token_type") != nullptr) {
    auto types = file.get_array("tokenizer.ggml.token_type", GgufValueType::I32);
    if (!types) return types.error();
    const auto& values = std::get<std::vector<int32_t>>((*types)->elements);
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < 0 || values[i] > kMaxTokenType) {
        return fail("tokenizer.ggml.token_type[{}] = {}: not a token type (0 undefined .. {} byte)", i, values[i],
                    kMaxTokenType);
      }
    }
  }
  return {};
}

}  // namespace infertune
