// The pre-tokenizers' PCRE2 splits against a second regex engine: Python's `regex` module (the
// Unicode-property engine closest to the Oniguruma regexes HF tokenizers run). Every test string of every
// fixture .inp file is split by each pre-tokenizer here and by the same pattern sequence in Python
// (Llama 3 and Qwen2 with the original case-insensitive patterns of their tokenizer.json), and the words
// must agree. This covers the pre-tokenizers whose vocabularies are not in the fixtures (llama-bpe,
// qwen2, ...). Skipped, with a message, when python3 or its `regex` module is missing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "engine/tokenizer/pre_tokenizer.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChecker = R"PY(
import json, re, sys
try:
    import regex
except ImportError:
    print("python3 has no 'regex' module"); sys.exit(77)

def to_python(p):  # PCRE2's \x{H} escapes and end-only $ in Python's spelling
    p = re.sub(r'\\x\{([0-9A-Fa-f]+)\}', lambda m: '\\U%08X' % int(m.group(1), 16), p)
    return p[:-1] + r'\Z' if p.endswith('$') else p

def split(patterns, text):
    words = [text] if text else []
    for p in patterns:
        r, out = regex.compile(to_python(p)), []
        for w in words:
            last = 0
            for m in r.finditer(w):
                if m.end() == m.start(): continue
                if m.start() > last: out.append(w[last:m.start()])
                out.append(m.group()); last = m.end()
            if last < len(w): out.append(w[last:])
        words = out
    return words

data = json.load(open(sys.argv[1], encoding='utf-8'))
bad = 0
for case in data['cases']:
    text = bytes.fromhex(case['text']).decode('utf-8')
    want = [w.encode('utf-8').hex() for w in split(data['patterns'][case['pre']], text)]
    if want != case['words']:
        bad += 1
        if bad <= 5: print('%s: %r\n  python: %s\n  pcre2:  %s' % (case['pre'], text, want, case['words']))
print('%d of %d splits differ' % (bad, len(data['cases'])))
sys.exit(1 if bad else 0)
)PY";

std::string hex(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) out += {digits[c >> 4], digits[c & 15]};
  return out;
}

bool valid_utf8(const std::string& s) {  // Python strings cannot hold the rest
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = s[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

std::set<std::string> fixture_strings() {
  std::set<std::string> strings = {
      "Hello WORLD's 2024 I'M  \t\n x\r\n", "abc\n\n\ndef   ", "ΑΒΓ αβγ ﬁne Ｆｕｌｌ　ｗｉｄｔｈ！",
      "한국어 텍스트, 日本語のテキスト。",  "x=1+2^3|y~z`",    "  \n  "};
  const std::string separator = "\n__ggml_vocab_test__\n";
  for (const auto& entry : fs::directory_iterator(test::fixture_path("vocab"))) {
    if (entry.path().extension() != ".inp") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (size_t pos = 0; pos < raw.size();) {
      const size_t next = raw.find(separator, pos);
      strings.insert(raw.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
      if (next == std::string::npos) break;
      pos = next + separator.size();
    }
  }
  return strings;
}

TEST(PreTokenizerCrosscheck, Pcre2SplitsAgreeWithPythonRegex) {
  if (test::run_command("python3 -c 'import regex'").exit_code != 0) {
    GTEST_SKIP() << "python3 with the 'regex' module is not available (pip install regex)";
  }
  const std::vector<std::string> pres = {"default",      "gpt-2",          "llama-bpe",   "qwen2",
                                         "deepseek-llm", "deepseek-coder", "falcon",      "starcoder",
                                         "bloom",        "viking",         "chatglm-bpe", "gpt-4o"};
  nlohmann::json data;
  for (const std::string& pre : pres) {
    auto rules = pre_tokenizer_rules(pre);
    ASSERT_TRUE(rules) << rules.error().message;
    data["patterns"][pre] = rules->patterns;
  }
  // The patterns as the models' tokenizer.json write them (PCRE2 gets a case-folding-free spelling).
  const std::string hf_llama3 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
                                R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const std::string hf_qwen2 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
                               R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  data["patterns"]["llama-bpe"] = {hf_llama3};
  data["patterns"]["chatglm-bpe"] = {hf_llama3};
  data["patterns"]["qwen2"] = {hf_qwen2};

  size_t n_cases = 0;
  for (const std::string& pre : pres) {
    auto rules = pre_tokenizer_rules(pre);
    auto splitter = PreTokenizer::create(*rules);
    ASSERT_TRUE(splitter) << splitter.error().message;
    for (const std::string& text : fixture_strings()) {
      if (!valid_utf8(text)) continue;
      std::vector<std::string> words;
      for (const TextSpan& w : splitter->split(text))
        words.push_back(hex(std::string_view(text).substr(w.offset, w.length)));
      data["cases"].push_back({{"pre", pre}, {"text", hex(text)}, {"words", words}});
      ++n_cases;
    }
  }
  ASSERT_GT(n_cases, 500u);
  const fs::path dir = test::temp_dir();
  std::ofstream(dir / "splits.json") << data.dump();
  std::ofstream(dir / "check.py") << kChecker;
  const auto r = test::run_command("python3 " + (dir / "check.py").string() + " " + (dir / "splits.json").string());
  if (r.exit_code == 77) GTEST_SKIP() << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 of " + std::to_string(n_cases) + " splits differ"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace infertune
