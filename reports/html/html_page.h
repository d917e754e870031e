#pragma once
// The frame of a self-contained HTML page: one file with its style sheet and script inline, no request to
// any network or file (it opens offline, from a CI artifact or an e-mail). The script sorts tables on a
// header click, filters rows, and, when the page is opened with #selftest, exercises both once and writes
// the outcome to <body data-selftest> (what the browser test reads).
#include <string>
#include <string_view>

namespace infertune {

std::string html_page(std::string_view title, std::string_view body);

}  // namespace infertune
