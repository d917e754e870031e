// ModelArch -> forward pass. A new architecture is a line here: the pre-norm decoder when its differences are tensors
// a model has or not (biases, head norms, sinks), a new file with its forward function when its block is shaped
// otherwise.
#include "engine/arch/forward.h"

namespace infertune {

ArchForwardFn arch_forward(ModelArch arch) {
  switch (arch) {
    case ModelArch::Llama:
    case ModelArch::Qwen2:
    case ModelArch::Qwen2Moe:
    case ModelArch::Qwen3:
    case ModelArch::Qwen3Moe:
    case ModelArch::GptOss:
    case ModelArch::Phi3:
      return forward_pre_norm_decoder;
    case ModelArch::Gemma2:
    case ModelArch::Gemma3:
      return forward_gemma;
  }
  return nullptr;
}

}  // namespace infertune
