// The corpora `perplexity --corpus` reads (engine/quality/corpus.h): the newest Python version's tutorial sources,
// in name order, joined by blank lines; an error that names the package when they are absent, and one for an unknown
// name. On a directory tree of its own, so the test does not depend on what the machine has installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/quality/corpus.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(Corpus, PythonTutorialIsTheNewestVersionsSourcesInNameOrder) {
  const fs::path root = fs::temp_directory_path() / "infertune-corpus-test";
  fs::remove_all(root);
  write(root / "usr/share/doc/python3.9/html/_sources/tutorial/a.rst.txt", "old");
  write(root / "usr/share/doc/python3.11/html/_sources/tutorial/b.rst.txt", "second");
  write(root / "usr/share/doc/python3.11/html/_sources/tutorial/a.rst.txt", "first");
  write(root / "usr/share/doc/python3.11/html/_sources/tutorial/notes.txt", "not a source");
  auto text = corpus_text("python-tutorial", root.string());
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, "first\n\nsecond");
  fs::remove_all(root);
}

TEST(Corpus, AbsentOrUnknownCorporaAreErrorsThatSayWhatToDo) {
  const fs::path root = fs::temp_directory_path() / "infertune-corpus-empty";
  fs::create_directories(root / "usr/share/doc");
  auto absent = corpus_text("python-tutorial", root.string());
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().message.find("python3-doc"), std::string::npos) << absent.error().message;
  auto unknown = corpus_text("wikitext", root.string());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("python-tutorial"), std::string::npos) << unknown.error().message;
  fs::remove_all(root);
}

}  // namespace
}  // namespace infertune
