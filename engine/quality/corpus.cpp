#include "engine/quality/corpus.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace infertune {
namespace {

namespace fs = std::filesystem;

// The newest /usr/share/doc/python3.X/html/_sources/tutorial under root.
Result<fs::path> python_tutorial_dir(const std::string& root) {
  const fs::path doc = fs::path(root.empty() ? "/" : root) / "usr/share/doc";
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(doc, ec)) {
    const std::string name = entry.path().filename().string();
    const fs::path tutorial = entry.path() / "html/_sources/tutorial";
    if (name.starts_with("python3.") && fs::is_directory(tutorial, ec)) found.push_back(tutorial);
  }
  if (found.empty()) {
    return fail(
        "--corpus python-tutorial: no {}/python3.X/html/_sources/tutorial (install Debian's python3-doc; "
        "scripts/setup does)",
        doc.string());
  }
  // python3.9 < python3.11: compare the minor version as a number.
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    const auto minor = [](const fs::path& p) {
      const std::string dir = p.parent_path().parent_path().parent_path().filename().string();
      int version = 0;
      std::from_chars(dir.data() + std::string_view("python3.").size(), dir.data() + dir.size(), version);
      return version;
    };
    return minor(a) < minor(b);
  });
  return found.back();
}

Result<std::string> joined_files(const fs::path& dir, std::string_view suffix) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().filename().string().ends_with(suffix)) files.push_back(entry.path());
  }
  if (ec || files.empty()) return fail("{}: no *{} files to read", dir.string(), suffix);
  std::sort(files.begin(), files.end());
  std::string text;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    if (!in && !in.eof()) return fail("{}: cannot read the file", f.string());
    if (!text.empty()) text += "\n\n";
    text += content.str();
  }
  return text;
}

}  // namespace

std::vector<std::string> corpus_names() { return {"python-tutorial"}; }

Result<std::string> corpus_text(std::string_view name, const std::string& root) {
  if (name != "python-tutorial") {
    return fail("--corpus {}: unknown (corpora: python-tutorial)", name);
  }
  auto dir = python_tutorial_dir(root);
  if (!dir) return dir.error();
  return joined_files(*dir, ".rst.txt");
}

Result<std::string> text_to_score(const std::string& file, const std::string& corpus) {
  if (!corpus.empty()) return corpus_text(corpus);
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail("-f {}: cannot open the file", file);
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) return fail("-f {}: the file is empty", file);
  return text.str();
}

}  // namespace infertune
