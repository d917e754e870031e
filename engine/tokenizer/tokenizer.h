#pragma once
// Text <-> token ids for a GGUF model, compatible with llama.cpp's tokenizers: SentencePiece BPE
// ("llama"), byte-level BPE ("gpt2", pre-tokenizer chosen by tokenizer.ggml.pre) and WordPiece ("bert").
// Loading builds every table once (hash maps, compiled regexes); encoding and decoding are const and
// thread-safe, and copying a Tokenizer is cheap (the loaded state is shared and immutable).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/vocab.h"
#include "kernels/result.h"

namespace infertune {

class Tokenizer {
 public:
  // Reads the tokenizer.ggml.* keys. Errors name the file and the key that is missing or malformed.
  static Result<Tokenizer> from_gguf(const GgufFile& file);

  // add_special: prepend BOS / append EOS as tokenizer.ggml.add_bos_token / add_eos_token say (with the
  // model family's defaults when they are absent; WordPiece appends its separator [SEP] instead of EOS).
  // parse_special: recognise the texts of control tokens (and unknown-type tokens) in `text`; off, they
  // are tokenized as plain text. User-defined tokens are recognised either way (see special_tokens.h).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The text of the tokens. For normal text it round-trips encode: the space SentencePiece and WordPiece
  // put in front of the first word is removed again. Control tokens are rendered as their text; ids
  // outside the vocabulary are skipped.
  std::string decode(std::span<const int32_t> tokens) const;

  // The bytes one token stands for (for streaming output; may be part of a UTF-8 character). An id
  // outside the vocabulary gives "".
  std::string token_to_piece(int32_t token) const;

  int32_t n_vocab() const;
  std::optional<int32_t> bos() const;
  std::optional<int32_t> eos() const;
  bool is_end_of_generation(int32_t token) const;  // EOS, EOT, EOM and the chat end markers (<|im_end|>, ...)

  const Vocab& vocab() const;

 private:
  Tokenizer() = default;  // only from_gguf makes one: every Tokenizer has a loaded state
  struct State;
  std::shared_ptr<const State> state_;
};

}  // namespace infertune
