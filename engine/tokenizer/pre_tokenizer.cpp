#include "engine/tokenizer/pre_tokenizer.h"

namespace infertune {
namespace {

// The GPT-2 word pattern: contractions, letters, digits, other symbols (each optionally after one space),
// and runs of whitespace that do not eat the space in front of the next word.
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Llama 3's pattern: case-insensitive contractions, a letter run may take one leading non-letter, digits
// in groups of up to three, and newlines kept with the symbols before them.
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen2: as Llama 3 but every digit on its own.
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// GPT-4o's o200k pattern (gpt-oss, Llama 4): a word is a run of upper/title-case letters then lower-case ones (or
// the reverse), with one leading non-letter and an optional case-insensitive contraction; digits in groups of up
// to three; symbol runs keep a trailing '/' or newlines. The letter cases are Unicode's, as in the model's
// tokenizer.json; llama.cpp reads them all as \p{L} and splits at ASCII case changes only, so its words differ
// where a lower-case non-ASCII letter runs into an upper-case one ("αβΓΔ": two words here, one there).
constexpr const char* kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// DeepSeek LLM's letter class lists the cased-letter ranges of its HF pre-tokenizer explicitly.
constexpr const char* kDeepseekLlmLetters =
    "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}"
    "\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}"
    "\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}"
    "\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}"
    "\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}"
    "\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}"
    "\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}"
    "\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}"
    "\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}"
    "\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}"
    "\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}"
    "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}"
    "\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}"
    "\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}"
    "\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}"
    "\\x{1E900}-\\x{1E943}]+";

// CJK ideographs, a wide block below them, and Hangul, split from everything else (DeepSeek).
constexpr const char* kDeepseekCjk = "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";

PreTokenizerRules rules(std::vector<std::string> patterns, bool ignore_merges = false, bool add_bos = false) {
  return PreTokenizerRules{std::move(patterns), ignore_merges, add_bos};
}

bool is_one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

Result<PreTokenizerRules> pre_tokenizer_rules(std::string_view pre) {
  if (pre.empty() || pre == "default") {
    // llama.cpp's fallback for BPE vocabularies that name no pre-tokenizer: punctuation runs first, then
    // the GPT-2 pattern, then digit runs and groups of three ASCII digits.
    return rules({R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"});
  }
  if (is_one_of(pre, {"llama3", "llama-v3", "llama-bpe", "falcon3", "dbrx", "smaug-bpe"})) {
    const bool add_bos = !is_one_of(pre, {"dbrx", "smaug-bpe"});
    return rules({kLlama3}, /*ignore_merges=*/!is_one_of(pre, {"dbrx", "smaug-bpe"}), add_bos);
  }
  if (is_one_of(pre, {"qwen2", "stablelm2", "megrez"})) return rules({kQwen2});
  if (is_one_of(pre, {"gpt-4o", "llama4"})) return rules({kGpt4o});
  if (pre == "deepseek-llm") {
    return rules({"[\r\n]", kDeepseekLlmLetters,
                  "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+", "\\s+$",
                  kDeepseekCjk, "\\p{N}+"});
  }
  if (pre == "deepseek-coder") {
    return rules({"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, "\\p{N}"});
  }
  if (pre == "falcon") {
    // HF: Punctuation (ASCII punctuation counts, including the symbols $+<=>^~|`), ByteLevel, digit triples.
    return rules({R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"});
  }
  if (is_one_of(pre, {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"})) {
    return rules({R"(\p{N})", kGpt2});  // every digit is a word of its own
  }
  if (is_one_of(pre, {"gpt-2", "gpt2", "mpt", "olmo", "jais", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en",
                      "jina-v2-es", "jina-v2-de", "jina-v2-code", "roberta-bpe"})) {
    return rules({kGpt2});
  }
  if (is_one_of(pre, {"poro-chat", "bloom", "gpt3-finnish"}))
    return rules({R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{0964}\x{06D4}\x{060C})]+)"});
  if (pre == "viking")
    return rules({R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{0964}\x{06D4}\x{060C})]+)", R"(\p{N})"});
  if (pre == "chatglm-bpe") return rules({kLlama3});
  return fail("unsupported pre-tokenizer '{}' (tokenizer.ggml.pre)", pre);
}

Result<PreTokenizer> PreTokenizer::create(const PreTokenizerRules& rules) {
  PreTokenizer pre;
  for (const std::string& pattern : rules.patterns) {
    auto regex = UnicodeRegex::compile(pattern);
    if (!regex) return regex.error();
    pre.regexes_.push_back(std::move(*regex));
  }
  return pre;
}

std::vector<TextSpan> PreTokenizer::split(std::string_view text) const {
  std::vector<TextSpan> words;
  if (text.empty()) return words;
  words.push_back({0, text.size()});
  for (const UnicodeRegex& regex : regexes_) words = regex.split(text, words);
  return words;
}

}  // namespace infertune
