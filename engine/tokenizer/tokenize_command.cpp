// `infertune tokenize -m MODEL [-p TEXT | stdin] [--ids] [--no-bos] [--parse-special] [--jsonl]`: the tokens
// of a text under a model's tokenizer — one line `id 'piece'` per token, or with --ids the comma-separated ids
// on one line (the form `run --prompt-tokens` takes). --jsonl tokenizes many texts with one load of the
// vocabulary: one JSON string per input line, one JSON array of ids per output line.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "engine/engine_commands.h"
#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

struct TokenizeOptions {
  std::string model;
  std::string prompt;
  bool has_prompt = false;
  bool ids_only = false;
  bool no_bos = false;
  bool parse_special = false;
  bool json_lines = false;
};

// A piece as printed between quotes: valid UTF-8 is kept, while quotes, backslashes, control characters
// and bytes that are not (complete) UTF-8 are escaped, so that every line stays one readable line.
std::string escape_piece(std::string_view piece) {
  std::string out;
  for (size_t pos = 0; pos < piece.size();) {
    const size_t start = pos;
    const char32_t cp = next_code_point(piece, pos);
    const bool invalid = cp == kReplacementChar && piece.substr(start, pos - start) != "\xEF\xBF\xBD";
    if (invalid) {
      out += fmt::format("\\x{:02x}", static_cast<uint8_t>(piece[start]));
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\'' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else {
      out.append(piece.substr(start, pos - start));
    }
  }
  return out;
}

// --jsonl: each stdin line a JSON string, each answer a JSON array on its own line, flushed as it is written
// so that a caller may feed texts one at a time. Blank lines are skipped.
int tokenize_json_lines(const Tokenizer& tokenizer, const TokenizeOptions& opt) {
  std::string line;
  for (size_t number = 1; std::getline(std::cin, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json text = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!text.is_string()) {
      return report_error("tokenize",
                          fmt::format("stdin line {}: expected a JSON string, such as \"Hello\\n\"", number));
    }
    const std::vector<int32_t> tokens = tokenizer.encode(text.get<std::string>(), !opt.no_bos, opt.parse_special);
    fmt::print("[{}]\n", fmt::join(tokens, ","));
    std::fflush(stdout);
  }
  if (std::cin.bad()) return report_error("tokenize", "could not read the texts from stdin");
  return 0;
}

int run_tokenize(const TokenizeOptions& opt) {
  Result<GgufFile> file = GgufFile::open(opt.model);
  if (!file) return report_error("tokenize", file.error().message);
  Result<Tokenizer> tokenizer = Tokenizer::from_gguf(*file);
  if (!tokenizer) return report_error("tokenize", tokenizer.error().message);
  if (opt.json_lines) {
    if (opt.has_prompt || opt.ids_only)
      return report_error("tokenize", "--jsonl reads stdin; it takes neither -p nor --ids");
    return tokenize_json_lines(*tokenizer, opt);
  }

  std::string text = opt.prompt;
  if (!opt.has_prompt) {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) return report_error("tokenize", "could not read the text from stdin");
  }
  const std::vector<int32_t> tokens = tokenizer->encode(text, !opt.no_bos, opt.parse_special);
  if (opt.ids_only) {
    fmt::print("{}\n", fmt::join(tokens, ","));
  } else {
    for (int32_t token : tokens) fmt::print("{} '{}'\n", token, escape_piece(tokenizer->token_to_piece(token)));
  }
  return 0;
}

}  // namespace

void add_tokenize_command(Subcommands& commands) {
  auto opt = std::make_shared<TokenizeOptions>();
  CLI::App* sub = commands.add("tokenize", "Show the tokens of a text under a model's tokenizer",
                               [opt] { return run_tokenize(*opt); });
  sub->add_option("-m,--model", opt->model, "GGUF model (or vocabulary-only) file")->required();
  sub->add_option_function<std::string>(
      "-p,--prompt",
      [opt](const std::string& text) {
        opt->prompt = text;
        opt->has_prompt = true;
      },
      "Text to tokenize (default: read stdin to its end)");
  sub->add_flag("--ids", opt->ids_only, "Print only the ids, comma-separated on one line");
  sub->add_flag("--no-bos", opt->no_bos, "Add no BOS/EOS tokens (the model's add_bos/add_eos otherwise apply)");
  sub->add_flag("--parse-special", opt->parse_special, "Recognise control-token texts such as <s> in the text");
  sub->add_flag("--jsonl", opt->json_lines,
                "Many texts: each stdin line a JSON string; prints each one's ids as a JSON array on a line");
  sub->footer(
      "Each line is `id 'piece'`; in a piece, quotes, backslashes, control characters and bytes that are not "
      "complete UTF-8 are escaped (\\n, \\t, \\x..).\n");
}

}  // namespace infertune
