#pragma once
// Accent stripping for the BERT (WordPiece) normalizer: NFD followed by dropping nonspacing marks, for
// the precomposed characters whose decomposition is one base character plus marks. A combining mark
// that is already separate in the input is dropped by the normalizer itself (it is \p{Mn}).
namespace infertune {

// The base character of `cp` (U+00C4 'Ä' -> 'A', U+1EED 'ử' -> 'u'), or `cp` itself.
char32_t strip_accent(char32_t cp);

}  // namespace infertune
