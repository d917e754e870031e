// ModelArch -> forward pass. A new architecture is a new file with its forward function, plus a line here.
#include "engine/arch/forward.h"

namespace infertune {

ArchForwardFn arch_forward(ModelArch arch) {
  switch (arch) {
    case ModelArch::Llama:
      return forward_llama;
    case ModelArch::Qwen2:
    case ModelArch::Qwen2Moe:
      return forward_qwen2;
    case ModelArch::Gemma3:
      return forward_gemma3;
    case ModelArch::Qwen3:
    case ModelArch::Qwen3Moe:
      return forward_qwen3;
    case ModelArch::GptOss:
      return forward_gpt_oss;
  }
  return nullptr;
}

}  // namespace infertune
