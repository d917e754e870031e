// libFuzzer target for the tokenizers (SentencePiece BPE, byte-level BPE, WordPiece) over the real
// vocabularies of ../shared/fixtures/vocab. The vocabularies are loaded once at start-up from the folder
// named by INFERTUNE_FUZZ_VOCABS (every *.gguf in it, by file name). An input is one selector byte and a
// text: bits 2..7 of the selector pick the vocabulary (modulo their number), bit 0 is add_special and
// bit 1 parse_special. Properties checked on every input; a violation prints what failed and traps,
// which libFuzzer reports as a crash:
//   - encoding and decoding never crash, hang or over-allocate (ASan/UBSan, -rss_limit_mb, -timeout);
//   - every id is in [0, n_vocab);
//   - add_special puts BOS first / EOS (WordPiece: SEP) last when the vocabulary asks for them;
//   - without parse_special, the text itself yields no control, unknown or unused token other than the
//     vocabulary's UNK (plain text never turns into e.g. "<|endoftext|>");
//   - decode skips ids outside the vocabulary: interleaving invalid ids changes nothing;
//   - byte-level BPE is lossless: decode(encode(text)) == text (less the tokens add_special added) for
//     valid UTF-8 text whose every byte has a token; so is SentencePiece for valid UTF-8 text without a
//     literal "▁" that gives no UNK and no special token (tokens with LSTRIP/RSTRIP, which eat spaces by
//     design, exempt the input). WordPiece normalizes, so it is not checked.
// With INFERTUNE_FUZZ_WRITE_SEEDS=DIR the target instead writes seed inputs into DIR and exits: the test
// strings of every *.gguf.inp next to the vocabularies (split at lines "__ggml_vocab_test__"), each with
// the selector of its own vocabulary (or, for an .inp without one, of a vocabulary in turn), plus texts
// around each vocabulary's BOS/EOS with special-token parsing on.
#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"

namespace {

using namespace infertune;
namespace fs = std::filesystem;

struct FuzzVocab {
  std::string name;  // file name without ".gguf"
  fs::path path;
  Tokenizer tokenizer;
  std::array<bool, 256> byte_has_token{};  // byte-level BPE: the byte's alphabet character is a plain token
};

std::vector<FuzzVocab>& vocabs() {
  static std::vector<FuzzVocab> loaded;
  return loaded;
}

const FuzzVocab* g_current = nullptr;  // for failure messages

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "tokenizer_fuzz: property violated (%s): %s\n", g_current ? g_current->name.c_str() : "?", what);
  __builtin_trap();
}

// GPT-2's byte-to-character table, written out here rather than taken from engine/tokenizer/byte_level
// so that the round-trip condition does not depend on the code under test: printable Latin-1 bytes stand
// for themselves, the 68 others take U+0100 upwards in byte order.
std::array<char32_t, 256> gpt2_byte_chars() {
  std::array<char32_t, 256> chars{};
  char32_t next = 0x100;
  for (unsigned b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    chars[b] = printable ? b : next++;
  }
  return chars;
}

std::string utf8_of(char32_t cp) {  // cp < 0x800 here
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
    const uint8_t lead = byte(i);
    size_t n;
    char32_t cp, min;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      n = 2, cp = lead & 0x1F, min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      n = 3, cp = lead & 0x0F, min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      n = 4, cp = lead & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

std::array<bool, 256> byte_tokens_of(const Vocab& vocab) {
  std::array<bool, 256> has{};
  if (vocab.kind() != TokenizerKind::Bpe) return has;
  const auto chars = gpt2_byte_chars();
  for (unsigned b = 0; b < 256; ++b) {
    auto id = vocab.find(utf8_of(chars[b]));
    has[b] = id && !vocab.has_attr(*id, kAttrControl | kAttrUnknown | kAttrUnused | kAttrByte);
  }
  return has;
}

void load_vocabs(const fs::path& dir) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".gguf") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const fs::path& path : paths) {
    auto file = GgufFile::open(path.string());
    auto tokenizer = file ? Tokenizer::from_gguf(*file) : Result<Tokenizer>(file.error());
    if (!tokenizer) {  // a fixture this engine does not support is left out, not fatal
      std::fprintf(stderr, "tokenizer_fuzz: skipping %s: %s\n", path.c_str(), tokenizer.error().message.c_str());
      continue;
    }
    const auto table = byte_tokens_of(tokenizer->vocab());
    vocabs().push_back({path.stem().string(), path, std::move(*tokenizer), table});
  }
}

// --- seeds -----------------------------------------------------------------------------------------

std::vector<std::string> read_test_strings(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> strings;
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(separator, pos);
    strings.push_back(raw.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) break;
    pos = next + separator.size();
  }
  return strings;
}

bool write_seed(const fs::path& path, size_t vocab_index, unsigned flags, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  const char selector = static_cast<char>((vocab_index << 2) | flags);
  out.write(&selector, 1);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(out);
}

// The .inp files, as (path, index of its vocabulary or -1).
std::vector<std::pair<fs::path, int>> test_string_files(const fs::path& dir) {
  std::vector<std::pair<fs::path, int>> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".gguf.inp")) continue;
    int owner = -1;
    for (size_t i = 0; i < vocabs().size(); ++i) {
      if (vocabs()[i].path.filename().string() + ".inp" == name) owner = static_cast<int>(i);
    }
    files.emplace_back(entry.path(), owner);
  }
  std::sort(files.begin(), files.end());
  return files;
}

int write_seeds(const fs::path& vocab_dir, const fs::path& out_dir) {
  const size_t n = std::min<size_t>(vocabs().size(), 64);  // the selector addresses 64 directly
  size_t written = 0, failed = 0, turn = 0;
  for (const auto& [path, owner] : test_string_files(vocab_dir)) {
    const std::string stem = path.filename().string().substr(0, path.filename().string().size() - 9);
    const auto strings = read_test_strings(path);
    for (size_t k = 0; k < strings.size(); ++k) {
      // A vocabulary's own strings go to it as its test tokenizes them; the others go round all
      // vocabularies, and round the four flag settings once per lap.
      const bool own = owner >= 0 && static_cast<size_t>(owner) < n;
      const size_t vocab = own ? owner : turn % n;
      const unsigned flags = own ? 0 : (turn / n) % 4;
      turn += own ? 0 : 1;
      const bool ok = write_seed(out_dir / ("seed-" + stem + "-" + std::to_string(k)), vocab, flags, strings[k]);
      ok ? ++written : ++failed;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Tokenizer& t = vocabs()[i].tokenizer;
    std::string text = "Hello world";
    if (t.bos()) text = t.vocab().text(*t.bos()) + " " + text;
    if (t.eos()) text += t.vocab().text(*t.eos()) + "\n x";
    const bool ok = write_seed(out_dir / ("seed-special-" + vocabs()[i].name), i, 3, text);
    ok ? ++written : ++failed;
  }
  std::fprintf(stderr, "tokenizer_fuzz: wrote %zu seeds to %s\n", written, out_dir.c_str());
  return failed == 0 && written > 0 ? 0 : 1;
}

// --- properties ------------------------------------------------------------------------------------

void check_special_ends(const Tokenizer& t, const std::vector<int32_t>& ids, bool add_special, size_t& begin,
                        size_t& end) {
  const Vocab& v = t.vocab();
  begin = 0;
  end = ids.size();
  if (!add_special) return;
  if (v.add_bos() && v.special().bos) {
    check(!ids.empty() && ids.front() == *v.special().bos, "add_special: BOS is not first");
    ++begin;
  }
  const auto last = v.kind() == TokenizerKind::WordPiece ? v.special().sep
                    : v.add_eos()                        ? v.special().eos
                                                         : std::nullopt;
  if (last) {
    check(end > begin && ids.back() == *last, "add_special: EOS/SEP is not last");
    --end;
  }
}

void check_plain_text_tokens(const Vocab& v, const std::vector<int32_t>& ids, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    const bool special = v.has_attr(ids[i], kAttrControl | kAttrUnknown | kAttrUnused);
    check(!special || ids[i] == v.special().unk, "without parse_special, plain text gave a control/unknown token");
  }
}

void check_decode_skips_invalid(const Tokenizer& t, const std::vector<int32_t>& ids, const std::string& decoded) {
  const int32_t invalid[] = {-1, t.n_vocab(), INT32_MIN, INT32_MAX};
  std::vector<int32_t> noisy;
  noisy.reserve(ids.size() * 2 + 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    noisy.push_back(invalid[i % 4]);
    noisy.push_back(ids[i]);
  }
  noisy.push_back(-7);
  check(t.decode(noisy) == decoded, "decode did not skip ids outside the vocabulary");
  check(t.token_to_piece(-1).empty() && t.token_to_piece(t.n_vocab()).empty(), "token_to_piece of an invalid id");
}

// Whether decode(encode(text)) must give the text back. `own`: the ids less those add_special added.
bool round_trip_applies(const FuzzVocab& fv, std::string_view text, std::span<const int32_t> own) {
  const Vocab& v = fv.tokenizer.vocab();
  if (!valid_utf8(text)) return false;
  for (int32_t id : own) {
    if (v.has_attr(id, kAttrLStrip | kAttrRStrip)) return false;
  }
  if (v.kind() == TokenizerKind::Bpe) {
    return std::all_of(text.begin(), text.end(), [&](char c) { return fv.byte_has_token[static_cast<uint8_t>(c)]; });
  }
  if (v.kind() == TokenizerKind::Spm) {
    // A literal "▁" decodes as a space, UNK loses its text, and after a special token SentencePiece
    // starts a new word with a space: those inputs are lossy by design.
    if (text.find(kSpaceMarker) != std::string_view::npos) return false;
    return std::none_of(own.begin(), own.end(),
                        [&](int32_t id) { return v.has_attr(id, kAttrControl | kAttrUserDefined | kAttrUnknown); });
  }
  return false;  // WordPiece normalizes (case, accents, spaces)
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* dir = std::getenv("INFERTUNE_FUZZ_VOCABS");
  if (dir == nullptr || *dir == '\0') {
    std::fprintf(stderr, "tokenizer_fuzz: set INFERTUNE_FUZZ_VOCABS to the folder of vocabulary .gguf files\n");
    std::exit(2);
  }
  load_vocabs(dir);
  if (vocabs().empty()) {
    std::fprintf(stderr, "tokenizer_fuzz: no vocabulary could be loaded from %s\n", dir);
    std::exit(2);
  }
  std::fprintf(stderr, "tokenizer_fuzz: %zu vocabularies from %s\n", vocabs().size(), dir);
  if (const char* seeds = std::getenv("INFERTUNE_FUZZ_WRITE_SEEDS"); seeds != nullptr && *seeds != '\0') {
    std::exit(write_seeds(dir, seeds));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const FuzzVocab& fv = vocabs()[(data[0] >> 2) % vocabs().size()];
  g_current = &fv;
  const bool add_special = (data[0] & 1) != 0, parse_special = (data[0] & 2) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const Tokenizer& t = fv.tokenizer;

  const std::vector<int32_t> ids = t.encode(text, add_special, parse_special);
  for (int32_t id : ids) check(id >= 0 && id < t.n_vocab(), "encode gave an id outside [0, n_vocab)");
  size_t begin = 0, end = 0;
  check_special_ends(t, ids, add_special, begin, end);
  if (!parse_special) check_plain_text_tokens(t.vocab(), ids, begin, end);

  const std::string decoded = t.decode(ids);
  check_decode_skips_invalid(t, ids, decoded);
  const std::span<const int32_t> own(ids.data() + begin, end - begin);  // without added BOS/EOS
  if (round_trip_applies(fv, text, own)) {
    check((add_special ? t.decode(own) : decoded) == text, "decode(encode(text)) != text");
  }
  volatile size_t sink = 0;
  for (int32_t id : ids) sink = sink + t.token_to_piece(id).size();
  return 0;
}
