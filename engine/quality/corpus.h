#pragma once
// Texts to score that come with the machine, so that perplexity and KL-divergence figures need no download at run
// time and are comparable between hosts: `perplexity --corpus NAME`.
//
//   python-tutorial  the Python tutorial's reStructuredText sources (Debian's python3-doc, installed by
//                    scripts/setup): /usr/share/doc/python3.X/html/_sources/tutorial/*.rst.txt, in name order,
//                    joined by blank lines; English prose with code (about 250 KB in Python 3.11's).
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

// The names --corpus takes.
std::vector<std::string> corpus_names();

// The text of a corpus; an error names what to install when it is absent. `root` replaces "/" (tests).
Result<std::string> corpus_text(std::string_view name, const std::string& root = "");

// What -f FILE or --corpus NAME (exactly one of them non-empty) gives to score.
Result<std::string> text_to_score(const std::string& file, const std::string& corpus);

}  // namespace infertune
