#pragma once
// WordPiece (tokenizer.ggml.model "bert"): each normalized word is cut greedily into the longest
// vocabulary pieces from left to right; a word with any part that matches no piece becomes the unknown
// token as a whole. GGUF BERT vocabularies mark word starts with "▁" (the converter's rewrite of
// WordPiece's "##" continuation prefix), so the word is looked up with "▁" in front.
#include "engine/tokenizer/bert_normalizer.h"
#include "engine/tokenizer/text_encoder.h"
#include "engine/tokenizer/vocab.h"

namespace infertune {

class WordPieceEncoder final : public TextEncoder {
 public:
  WordPieceEncoder(const Vocab& vocab, BertNormalizer normalizer);
  void encode(std::string_view text, bool starts_word, std::vector<int32_t>& out) const override;

 private:
  const Vocab* vocab_;
  BertNormalizer normalizer_;
};

}  // namespace infertune
