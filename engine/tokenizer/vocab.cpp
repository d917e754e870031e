#include "engine/tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/tokenizer_metadata.h"

namespace infertune {
namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";

// tokenizer.ggml.token_type values (gguf-py's TokenType) -> attribute bits.
uint32_t attr_from_token_type(int32_t type) {
  switch (type) {
    case 1:
      return kAttrNormal;
    case 2:
      return kAttrUnknown;
    case 3:
      return kAttrControl;
    case 4:
      return kAttrUserDefined;
    case 5:
      return kAttrUnused;
    case 6:
      return kAttrByte;
    default:
      return kAttrUndefined;
  }
}

TokenizerKind kind_from_model(std::string_view model) {
  if (model == "llama") return TokenizerKind::Spm;
  if (model == "gpt2") return TokenizerKind::Bpe;
  return TokenizerKind::WordPiece;  // bert: check_tokenizer_metadata refused every other model
}

// Texts that mark end-of-generation tokens in vocabularies whose metadata names only the EOS token
// (chat turn ends, end-of-text markers); llama.cpp recognises the same list.
constexpr std::array<std::string_view, 13> kEndOfGenerationTexts = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<|return|>",
    "<|call|>",
    "<｜end▁of▁sentence｜>",
};

// Reads an optional boolean key: absent -> unchanged, present with another type -> error.
Status read_optional_bool(const GgufFile& file, std::string_view key, bool& value) {
  if (file.find(key) == nullptr) return {};
  auto v = file.get_bool(key);
  if (!v) return v.error();
  value = *v;
  return {};
}

}  // namespace

Result<Vocab> Vocab::from_gguf(const GgufFile& file) {
  if (file.find(kModelKey) == nullptr) {
    return fail("{}: the file has no tokenizer ({} is missing)", file.source_name(), kModelKey);
  }
  if (Status s = check_tokenizer_metadata(file); !s) return fail("{}: {}", file.source_name(), s.error().message);
  auto model = file.get_string(kModelKey);
  if (!model) return model.error();

  Vocab vocab;
  vocab.kind_ = kind_from_model(*model);
  vocab.model_ = std::string(*model);
  if (file.find("tokenizer.ggml.pre") != nullptr) {
    auto pre = file.get_string("tokenizer.ggml.pre");
    if (!pre) return pre.error();
    vocab.pre_ = std::string(*pre);
  }
  if (Status s = vocab.read_tokens(file); !s) return s.error();
  if (Status s = vocab.read_special_ids(file); !s) return s.error();
  if (Status s = vocab.read_flags(file); !s) return s.error();
  vocab.find_end_of_generation_tokens();
  vocab.apply_family_attributes(file);
  return vocab;
}

Status Vocab::read_tokens(const GgufFile& file) {
  if (file.find(kTokensKey) == nullptr) return fail("{}: {} is missing", file.source_name(), kTokensKey);
  auto tokens = file.get_array(kTokensKey, GgufValueType::STRING);
  if (!tokens) return tokens.error();
  const auto& texts = std::get<std::vector<std::string>>((*tokens)->elements);
  if (texts.empty()) return fail("{}: {} is empty", file.source_name(), kTokensKey);
  if (texts.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return fail("{}: {} holds {} tokens, more than token ids can address", file.source_name(), kTokensKey,
                texts.size());
  }
  const size_t n = texts.size();

  scores_.assign(n, 0.0f);
  if (file.find("tokenizer.ggml.scores") != nullptr) {
    auto scores = file.get_array("tokenizer.ggml.scores", GgufValueType::F32);
    if (!scores) return scores.error();
    const auto& values = std::get<std::vector<float>>((*scores)->elements);
    if (values.size() != n) {
      return fail("{}: tokenizer.ggml.scores has {} entries for {} tokens", file.source_name(), values.size(), n);
    }
    scores_ = values;
  }

  attrs_.assign(n, kAttrNormal);
  if (file.find("tokenizer.ggml.token_type") != nullptr) {
    auto types = file.get_array("tokenizer.ggml.token_type", GgufValueType::I32);
    if (!types) return types.error();
    const auto& values = std::get<std::vector<int32_t>>((*types)->elements);
    if (values.size() != n) {
      return fail("{}: tokenizer.ggml.token_type has {} entries for {} tokens", file.source_name(), values.size(), n);
    }
    std::transform(values.begin(), values.end(), attrs_.begin(), attr_from_token_type);
  }

  texts_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // An empty text could never be matched and would make every position a match; llama.cpp renames it.
    texts_.push_back(texts[i].empty() ? "[EMPTY_" + std::to_string(i) + "]" : texts[i]);
    max_token_bytes_ = std::max(max_token_bytes_, texts_.back().size());
  }
  ids_.reserve(n);
  for (size_t i = 0; i < n; ++i) ids_.insert_or_assign(std::string_view(texts_[i]), static_cast<int32_t>(i));
  return {};
}

Status Vocab::read_special_ids(const GgufFile& file) {
  const auto valid = [&](int32_t id) { return contains(id) ? std::optional<int32_t>(id) : std::nullopt; };
  switch (kind_) {  // the family defaults llama.cpp assumes when the metadata is silent
    case TokenizerKind::Spm:
      special_.bos = valid(1), special_.eos = valid(2), special_.unk = valid(0);
      break;
    case TokenizerKind::WordPiece:
      special_.bos = valid(101), special_.unk = valid(100), special_.sep = valid(102);
      special_.pad = valid(0), special_.mask = valid(103);
      break;
    case TokenizerKind::Bpe:
      break;
  }
  const std::pair<std::string_view, std::optional<int32_t>*> keys[] = {
      {"tokenizer.ggml.cls_token_id", &special_.bos},  // BERT's [CLS] plays the part of BOS
      {"tokenizer.ggml.bos_token_id", &special_.bos},
      {"tokenizer.ggml.eos_token_id", &special_.eos},
      {"tokenizer.ggml.eot_token_id", &special_.eot},
      {"tokenizer.ggml.eom_token_id", &special_.eom},
      {"tokenizer.ggml.unknown_token_id", &special_.unk},
      {"tokenizer.ggml.seperator_token_id", &special_.sep},  // sic: the key as gguf-py writes it
      {"tokenizer.ggml.separator_token_id", &special_.sep},
      {"tokenizer.ggml.padding_token_id", &special_.pad},
      {"tokenizer.ggml.mask_token_id", &special_.mask},
  };
  for (const auto& [key, slot] : keys) {
    if (file.find(key) == nullptr) continue;
    if (key == "tokenizer.ggml.cls_token_id" && kind_ != TokenizerKind::WordPiece) continue;
    auto id = file.get_uint(key);
    if (!id) return id.error();
    // An id past the vocabulary is ignored (the default stays), as llama.cpp does, so that one stray
    // key does not make an otherwise usable model unloadable.
    if (*id < static_cast<uint64_t>(size())) *slot = static_cast<int32_t>(*id);
  }
  return {};
}

Status Vocab::read_flags(const GgufFile& file) {
  switch (kind_) {
    case TokenizerKind::Spm:
      add_bos_ = true, add_space_prefix_ = true;
      break;
    case TokenizerKind::WordPiece:
      add_bos_ = true;
      break;
    case TokenizerKind::Bpe: {
      auto rules = pre_tokenizer_rules(pre_);
      if (!rules) return fail("{}: {}", file.source_name(), rules.error().message);
      add_bos_ = rules->add_bos;
      break;
    }
  }
  if (Status s = read_optional_bool(file, "tokenizer.ggml.add_bos_token", add_bos_); !s) return s;
  if (Status s = read_optional_bool(file, "tokenizer.ggml.add_eos_token", add_eos_); !s) return s;
  return read_optional_bool(file, "tokenizer.ggml.add_space_prefix", add_space_prefix_);
}

void Vocab::find_end_of_generation_tokens() {
  for (const auto& id : {special_.eos, special_.eot, special_.eom}) {
    if (id) eog_ids_.push_back(*id);
  }
  for (std::string_view text : kEndOfGenerationTexts) {
    if (auto id = find(text)) {
      eog_ids_.push_back(*id);
      // Such a token is a control token whatever the file says, so that plain text cannot produce it.
      attrs_[*id] = (attrs_[*id] & ~(kAttrNormal | kAttrUserDefined)) | kAttrControl;
    }
  }
  std::sort(eog_ids_.begin(), eog_ids_.end());
  eog_ids_.erase(std::unique(eog_ids_.begin(), eog_ids_.end()), eog_ids_.end());
  keep_harmony_message_ends();
}

// gpt-oss's harmony format ends every message with <|end|>, a reply with <|return|> and a tool call with <|call|>:
// there <|end|> closes the reasoning message and the answer follows, so it must not stop generation. As llama.cpp,
// a vocabulary whose end-of-generation tokens include <|return|> and <|call|> (or <|calls|> and <|flush|>) takes
// <|end|> out of them, as a user-defined token.
void Vocab::keep_harmony_message_ends() {
  const auto is_eog = [this](std::string_view text) {
    return std::any_of(eog_ids_.begin(), eog_ids_.end(), [&](int32_t id) { return texts_[id] == text; });
  };
  const bool harmony = (is_eog("<|return|>") && (is_eog("<|call|>") || is_eog("<|calls|>"))) ||
                       ((is_eog("<|call|>") || is_eog("<|calls|>")) && is_eog("<|flush|>"));
  if (!harmony) return;
  const auto is_end = [this](int32_t id) { return texts_[id] == "<|end|>"; };
  for (int32_t id : eog_ids_) {
    if (is_end(id)) attrs_[id] = kAttrUserDefined;
  }
  eog_ids_.erase(std::remove_if(eog_ids_.begin(), eog_ids_.end(), is_end), eog_ids_.end());
}

void Vocab::apply_family_attributes(const GgufFile& file) {
  std::string name;
  if (auto n = file.get_string("general.name")) name = std::string(*n);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto set = [&](std::string_view text, uint32_t attr, bool on) {
    if (auto id = find(text)) attrs_[*id] = on ? (attrs_[*id] | attr) : (attrs_[*id] & ~attr);
  };
  if (pre_.find("jina-v2-") != std::string::npos) {
    set("<mask>", kAttrLStrip, true);
  } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    // Phi-3's chat tokens swallow the whitespace after them (its HF added tokens have rstrip).
    for (uint32_t& a : attrs_) {
      if (a & (kAttrControl | kAttrUserDefined | kAttrUnknown)) a |= kAttrRStrip;
    }
    set("</s>", kAttrRStrip, true);
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) set(text, kAttrRStrip, false);
  }
}

std::optional<int32_t> Vocab::find(std::string_view text) const {
  auto it = ids_.find(text);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<int32_t> Vocab::find_plain(std::string_view text) const {
  auto id = find(text);
  if (id && has_attr(*id, kAttrControl | kAttrUnknown | kAttrUnused | kAttrByte)) return std::nullopt;
  return id;
}

bool Vocab::is_end_of_generation(int32_t id) const { return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id); }

}  // namespace infertune
