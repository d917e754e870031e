#pragma once
// Test models for the forward-pass tests: the synthesizer's tiny preset in any type, and in-memory
// rewrites of a GGUF file (weights dequantized to f32, keys changed, tensors added or retyped), so that
// two models that must compute the same function can be built from one another.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/model.h"
#include "engine/synth/presets.h"
#include "engine/synth/quant_mix.h"
#include "engine/synth/synthesizer.h"
#include "kernels/quant.h"
#include "kernels/result.h"

namespace infertune::test {

// The tiny preset (dim 256, 4 layers, GQA 8/2, ffn 512, vocab 512) of `arch` in file type `type`, as
// `infertune synth --arch ARCH` makes it (qwen3moe: 16 experts of 128, 4 per token).
inline Result<std::vector<std::byte>> synth_tiny(ModelArch arch, std::string_view type, bool pure = false,
                                                 bool tied = false, uint64_t seed = 1) {
  auto tiny = resolve_synth_model(std::string(model_arch_name(arch)), std::string("tiny"), {});
  if (!tiny) return tiny.error();
  const auto file_type = file_type_from_name(type);
  if (!file_type) return fail("no file type {}", type);
  SynthRequest request{tiny->config, "tiny", *file_type, {pure}, seed, 1};
  request.config.tied_output = tied;
  return synthesize_in_memory(request);
}

// The tiny preset of `arch` in f32, loaded (the forward-pass tests' usual model).
inline Result<std::unique_ptr<Model>> load_tiny(ModelArch arch) {
  auto bytes = synth_tiny(arch, "f32");
  if (!bytes) return bytes.error();
  auto loaded = Model::from_bytes(std::move(*bytes));
  if (!loaded) return loaded.error();
  return std::make_unique<Model>(std::move(*loaded));
}

struct AddedTensor {
  std::string name;
  std::vector<uint64_t> dims;
  GgmlType type = GgmlType::F32;
  std::vector<std::byte> data;  // exactly the tensor's bytes
};

struct GgufEdit {
  bool dequantize = false;                 // every tensor becomes f32 holding its decoded values
  std::vector<GgufKeyValue> set;           // keys added or replaced
  std::vector<AddedTensor> add;            // tensors appended
  std::map<std::string, GgmlType> retype;  // tensors given another type, zero-filled
};

inline Result<std::vector<std::byte>> rewrite_gguf(const GgufFile& source, const GgufEdit& edit) {
  GgufWriter writer;
  for (const GgufKeyValue& kv : source.metadata()) writer.set(kv.key, kv.value);
  for (const GgufKeyValue& kv : edit.set) writer.set(kv.key, kv.value);
  for (const GgufTensorInfo& t : source.tensors()) {
    GgmlType type = edit.dequantize ? GgmlType::F32 : t.type;
    if (auto it = edit.retype.find(t.name); it != edit.retype.end()) type = it->second;
    if (Status s = writer.add_tensor(t.name, t.dims, type); !s) return s.error();
  }
  for (const AddedTensor& t : edit.add) {
    if (Status s = writer.add_tensor(t.name, t.dims, t.type); !s) return s.error();
  }
  const size_t n_source = source.tensors().size();
  return writer.write_memory([&](size_t index, const GgufTensorInfo& info, std::span<std::byte> out) -> Status {
    if (index >= n_source) {
      const AddedTensor& added = edit.add[index - n_source];
      if (added.data.size() != out.size())
        return fail("added tensor {}: {} bytes for {}", added.name, added.data.size(), out.size());
      std::copy(added.data.begin(), added.data.end(), out.begin());
      return {};
    }
    const GgufTensorInfo& src = source.tensors()[index];
    const auto bytes = source.tensor_data(src);
    if (edit.retype.contains(src.name)) {
      std::fill(out.begin(), out.end(), std::byte{0});
    } else if (info.type == src.type) {
      std::copy(bytes.begin(), bytes.end(), out.begin());
    } else {
      std::vector<float> values(src.n_elements);
      if (Status s = dequantize_row(src.type, bytes, values); !s) return s;
      std::memcpy(out.data(), values.data(), out.size());
    }
    return {};
  });
}

template <class T>
std::vector<std::byte> as_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Logits of every position of `tokens`, evaluated as one batch from an empty cache.
inline Result<std::vector<float>> logits_all(const Model& model, std::span<const int32_t> tokens,
                                             ContextParams params = {.n_ctx = 256, .n_threads = 1}) {
  auto ctx = Context::create(model, params);
  if (!ctx) return ctx.error();
  auto logits = ctx->decode(tokens, Logits::All);
  if (!logits) return logits.error();
  return std::vector<float>(logits->begin(), logits->end());
}

struct LogitsDiff {
  double max_over_std = 0;  // max |got - ref| / std(ref)
  double rms_over_std = 0;  // rms(got - ref) / std(ref)
};

inline LogitsDiff logits_diff(std::span<const float> got, std::span<const float> ref) {
  double mean = 0;
  for (float v : ref) mean += v;
  mean /= static_cast<double>(ref.size());
  double var = 0, sum_sq = 0, max_d = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    var += (ref[i] - mean) * (ref[i] - mean);
    const double d = static_cast<double>(got[i]) - ref[i];
    sum_sq += d * d;
    max_d = std::max(max_d, std::fabs(d));
  }
  const double std = std::sqrt(var / static_cast<double>(ref.size()));
  return {max_d / std, std::sqrt(sum_sq / static_cast<double>(ref.size())) / std};
}

// A fixed, deterministic prompt of n ids in [3, n_vocab) (no BOS/EOS, nothing special).
inline std::vector<int32_t> test_tokens(size_t n, uint32_t n_vocab = 512) {
  std::vector<int32_t> tokens(n);
  for (size_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>(3 + (i * 97 + 13) % (n_vocab - 3));
  return tokens;
}

// A gtest parameter name for an architecture: its name with '-' as '_' ("gpt_oss"), the only characters gtest takes.
inline std::string arch_param_name(ModelArch arch) {
  std::string name(model_arch_name(arch));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace infertune::test
