#pragma once
// Text placed into HTML and SVG: everything that comes from a store (model paths, reasons, specs) is
// escaped, so a path with '<' or '&' shows as written and can never become markup or script.
#include <string>
#include <string_view>

namespace infertune {

// & < > " ' as entities; valid in element text and in double- or single-quoted attributes.
std::string html_escape(std::string_view text);

}  // namespace infertune
