#pragma once
// The attention variants compiled into this binary, one translation unit each (attention_registry.cpp
// lists them).
#include "kernels/attention/attention.h"

namespace infertune {

AttentionVariant scalar_attention_variant();  // attention_registry.cpp
AttentionVariant avx2_attention_variant();    // attention_avx2.cpp
AttentionVariant avx512_attention_variant();  // attention_avx512.cpp

}  // namespace infertune
