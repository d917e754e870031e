#pragma once
// The settings table as documentation: one Markdown row per setting with its flags, llama.cpp's spelling,
// the values allowed, the default and, per command, whether it takes one value or a list. `infertune
// settings` prints it and the README embeds it (a test keeps the two equal).
#include <string>

namespace infertune {

std::string settings_markdown();

}  // namespace infertune
