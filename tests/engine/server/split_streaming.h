#pragma once
// The property both reply splits (ReasoningSplit's <think> and HarmonySplit's channels) promise: a text streamed in
// pieces, cut anywhere, splits into the same reasoning and content as the whole text.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/server/reasoning_split.h"

namespace infertune::test {

// `text` pushed to `split` in pieces cut at `cuts` (ascending offsets), the pieces' parts joined.
template <class Split>
SplitText streamed(Split split, std::string_view text, const std::vector<size_t>& cuts) {
  SplitText joined;
  size_t from = 0;
  for (size_t cut : cuts) {
    const SplitText part = split.push(text.substr(from, cut - from));
    joined.reasoning += part.reasoning;
    joined.content += part.content;
    from = cut;
  }
  const SplitText last = split.finish(text.substr(from));
  joined.reasoning += last.reasoning;
  joined.content += last.content;
  return joined;
}

// Every cut of `text` into three pieces splits as the whole text does; `make` gives a fresh split.
template <class MakeSplit>
void expect_every_two_cuts_split_as_whole(std::string_view text, MakeSplit make) {
  const SplitText want = make().finish(text);
  for (size_t i = 0; i <= text.size(); ++i) {
    for (size_t j = i; j <= text.size(); ++j) {
      const SplitText got = streamed(make(), text, {i, j});
      ASSERT_EQ(got.reasoning, want.reasoning) << "cut at " << i << ", " << j;
      ASSERT_EQ(got.content, want.content) << "cut at " << i << ", " << j;
    }
  }
}

}  // namespace infertune::test
