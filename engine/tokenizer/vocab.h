#pragma once
// A tokenizer vocabulary as GGUF stores it (the tokenizer.ggml.* keys, llama.cpp's conventions): token
// texts, scores and types, the special token ids and the flags that steer encoding. Shared by the three
// tokenizer algorithms (SentencePiece BPE, byte-level BPE, WordPiece), which only look tokens up here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "kernels/result.h"

namespace infertune {

// SentencePiece's word-start marker U+2581 "▁", which stands for a space in SentencePiece and (GGUF)
// WordPiece vocabularies.
inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";

enum class TokenizerKind {
  Spm,        // tokenizer.ggml.model "llama": SentencePiece BPE over scores, byte fallback
  Bpe,        // "gpt2": byte-level BPE over merge ranks, regex pre-tokenizer
  WordPiece,  // "bert": greedy longest-match WordPiece
};

// Token attributes (llama.cpp's llama_token_attr bits). tokenizer.ggml.token_type gives one of the first
// six; LSTRIP/RSTRIP are set per model family (they make a special token eat the spaces beside it).
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLStrip = 1u << 7,
  kAttrRStrip = 1u << 8,
};

struct SpecialTokenIds {
  std::optional<int32_t> bos, eos, eot, eom, unk, sep, pad, mask;
};

class Vocab {
 public:
  static Result<Vocab> from_gguf(const GgufFile& file);

  // Move-only: the lookup map holds views of the token texts, which a move keeps in place.
  Vocab(Vocab&&) = default;
  Vocab& operator=(Vocab&&) = default;
  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;

  TokenizerKind kind() const { return kind_; }
  const std::string& model_name() const { return model_; }  // tokenizer.ggml.model
  const std::string& pre() const { return pre_; }           // tokenizer.ggml.pre, "" when absent

  int32_t size() const { return static_cast<int32_t>(texts_.size()); }
  bool contains(int32_t id) const { return id >= 0 && id < size(); }
  const std::string& text(int32_t id) const { return texts_[id]; }
  float score(int32_t id) const { return scores_[id]; }
  uint32_t attrs(int32_t id) const { return attrs_[id]; }
  bool has_attr(int32_t id, uint32_t attr) const { return (attrs_[id] & attr) != 0; }

  std::optional<int32_t> find(std::string_view text) const;  // any token with exactly this text
  // A token that ordinary text may turn into: normal, user-defined or untyped — never a control,
  // unknown, unused or byte token (those come only from special-token parsing or byte fallback).
  std::optional<int32_t> find_plain(std::string_view text) const;
  size_t max_token_bytes() const { return max_token_bytes_; }

  const SpecialTokenIds& special() const { return special_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }  // SentencePiece's leading "▁"
  bool is_end_of_generation(int32_t id) const;
  const std::vector<int32_t>& end_of_generation_ids() const { return eog_ids_; }  // sorted

 private:
  Vocab() = default;
  Status read_tokens(const GgufFile& file);
  Status read_special_ids(const GgufFile& file);
  Status read_flags(const GgufFile& file);
  void find_end_of_generation_tokens();
  void keep_harmony_message_ends();
  void apply_family_attributes(const GgufFile& file);

  TokenizerKind kind_ = TokenizerKind::Spm;
  std::string model_;
  std::string pre_;
  std::vector<std::string> texts_;                     // [n_vocab]
  std::vector<float> scores_;                          // [n_vocab] 0 when the file has no scores
  std::vector<uint32_t> attrs_;                        // [n_vocab] TokenAttr bits
  std::unordered_map<std::string_view, int32_t> ids_;  // text -> id; the last of duplicate texts wins
  size_t max_token_bytes_ = 0;
  SpecialTokenIds special_;
  bool add_bos_ = false;
  bool add_eos_ = false;
  bool add_space_prefix_ = false;
  std::vector<int32_t> eog_ids_;
};

}  // namespace infertune
