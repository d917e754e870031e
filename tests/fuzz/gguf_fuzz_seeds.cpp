// Writes small valid GGUF files into a directory, as seeds for gguf_reader_fuzz: every value type,
// nested arrays, 1- to 4-dimensional tensors of plain and block types, a custom alignment, a v2 header,
// a metadata-only file and an empty one. The fixtures add real-size files (scripts/fuzz copies them).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf_writer.h"

namespace {

using namespace infertune;

template <class T>
GgufValue value(T v) {
  return GgufValue{GgufValue::Storage(std::in_place_type<T>, std::move(v))};
}

GgufValue array(GgufArray::Elements elements) { return value(GgufArray{std::move(elements)}); }

void add_tokenizer(GgufWriter& w) {
  w.set("tokenizer.ggml.model", value(std::string("llama")));
  w.set("tokenizer.ggml.tokens", array(std::vector<std::string>{"<unk>", "<s>", "</s>", "a", "b", "ab"}));
  w.set("tokenizer.ggml.scores", array(std::vector<float>{0, 0, 0, -1, -2, -3}));
  w.set("tokenizer.ggml.token_type", array(std::vector<int32_t>{2, 3, 3, 1, 1, 1}));
  w.set("tokenizer.ggml.merges", array(std::vector<std::string>{"a b"}));
  w.set("tokenizer.ggml.bos_token_id", value<uint32_t>(1));
  w.set("tokenizer.ggml.add_bos_token", value(true));
}

void add_every_type(GgufWriter& w) {
  w.set("custom.u8", value<uint8_t>(1));
  w.set("custom.i8", value<int8_t>(-1));
  w.set("custom.u16", value<uint16_t>(2));
  w.set("custom.i16", value<int16_t>(-2));
  w.set("custom.i32", value<int32_t>(-3));
  w.set("custom.u64", value<uint64_t>(4));
  w.set("custom.i64", value<int64_t>(-4));
  w.set("custom.f64", value(0.5));
  w.set("custom.bools", array(std::vector<GgufBool>{{true}, {false}}));
  w.set("custom.u64s", array(std::vector<uint64_t>{1, 2}));
  w.set("custom.nested",
        array(std::vector<GgufArray>{GgufArray{std::vector<uint16_t>{1}}, GgufArray{std::vector<std::string>{"x"}}}));
}

GgufWriter model(uint32_t alignment) {
  GgufWriter w;
  w.set("general.architecture", value(std::string("llama")));
  if (alignment != 32) w.set("general.alignment", value(alignment));
  w.set("llama.context_length", value<uint32_t>(64));
  w.set("llama.embedding_length", value<uint32_t>(32));
  w.set("llama.block_count", value<uint32_t>(1));
  w.set("llama.attention.head_count", value<uint32_t>(2));
  w.set("llama.rope.freq_base", value(10000.0f));
  w.set("llama.attention.layer_norm_rms_epsilon", value(1e-5f));
  add_tokenizer(w);
  (void)w.add_tensor("token_embd.weight", {32, 6}, GgmlType::F16);
  (void)w.add_tensor("blk.0.attn_q.weight", {32, 32}, GgmlType::Q8_0);
  (void)w.add_tensor("blk.0.attn_k.weight", {32, 2, 2}, GgmlType::Q4_0);
  (void)w.add_tensor("blk.0.ffn_up.weight", {256, 1}, GgmlType::Q4_K);
  (void)w.add_tensor("blk.0.conv", {2, 2, 2, 2}, GgmlType::BF16);
  (void)w.add_tensor("output_norm.weight", {32}, GgmlType::F32);
  (void)w.add_tensor("positions", {3}, GgmlType::I32);
  return w;
}

Status fill(size_t index, const GgufTensorInfo&, std::span<std::byte> data) {
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(index * 31 + i);
  return Status::success();
}

bool save(const std::string& path, std::vector<std::byte> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

bool save(const std::string& path, const GgufWriter& w) {
  auto bytes = w.write_memory(fill);
  if (!bytes.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), bytes.error().message.c_str());
    return false;
  }
  return save(path, std::move(*bytes));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = save(dir + "/seed-model.gguf", model(32));
  ok &= save(dir + "/seed-model-align64.gguf", model(64));

  GgufWriter every = model(32);
  add_every_type(every);
  ok &= save(dir + "/seed-every-type.gguf", every);

  auto v2 = model(32).write_memory(fill);
  if (v2.ok()) (*v2)[4] = std::byte{2};  // the version field; v2 and v3 share the layout
  ok &= v2.ok() && save(dir + "/seed-model-v2.gguf", std::move(*v2));

  GgufWriter vocab;
  vocab.set("general.architecture", value(std::string("gpt2")));
  add_tokenizer(vocab);
  ok &= save(dir + "/seed-vocab-only.gguf", vocab);
  ok &= save(dir + "/seed-empty.gguf", GgufWriter());
  return ok ? 0 : 1;
}
