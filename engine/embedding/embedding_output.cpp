#include "engine/embedding/embedding_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>

namespace infertune {
namespace {

constexpr std::array<std::pair<std::string_view, EmbeddingFormat>, 5> kFormats = {{
    {"", EmbeddingFormat::plain},
    {"array", EmbeddingFormat::array},
    {"json", EmbeddingFormat::json},
    {"json+", EmbeddingFormat::json_plus},
    {"raw", EmbeddingFormat::raw},
}};

constexpr size_t kPreviewValues = 16;  // of each pooled embedding, in the plain layout, when there are several
constexpr size_t kEndValues = 3;       // of each token's embedding, first and last, in the plain layout

// A value in the plain layout: fixed width, for reading by eye.
void append_shown(std::string& out, float value, bool int16_scaled) {
  if (int16_scaled) {
    fmt::format_to(std::back_inserter(out), "{:6.0f} ", value);
  } else {
    fmt::format_to(std::back_inserter(out), "{:9.6f} ", value);
  }
}

// A value in array, json and raw: the float's shortest round-trip digits, or a whole number when int16-scaled.
void append_exact(std::string& out, float value, bool int16_scaled) {
  if (int16_scaled) {
    fmt::format_to(std::back_inserter(out), "{:.0f}", value);
  } else {
    fmt::format_to(std::back_inserter(out), "{}", value);
  }
}

void append_values(std::string& out, std::span<const float> row, std::string_view separator, bool int16_scaled) {
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) out += separator;
    append_exact(out, row[i], int16_scaled);
  }
}

void append_token_rows(std::string& out, const EmbeddingListing& listing) {
  for (size_t j = 0; j < listing.rows.size(); ++j) {
    const std::span<const float> row = listing.rows[j];
    const size_t head = std::min(kEndValues, row.size());
    fmt::format_to(std::back_inserter(out), "embedding {}: ", j);
    for (size_t i = 0; i < head; ++i) append_shown(out, row[i], listing.int16_scaled);
    out += " ... ";
    for (size_t i = row.size() - head; i < row.size(); ++i) append_shown(out, row[i], listing.int16_scaled);
    out += '\n';
  }
}

// A single prompt's embedding whole; of several, the first values and the similarity of every pair, each row of
// the matrix ending with its prompt's first characters, the columns headed by them.
void append_pooled_rows(std::string& out, const EmbeddingListing& listing) {
  const bool several = listing.prompts.size() > 1;
  for (size_t j = 0; j < listing.rows.size(); ++j) {
    const std::span<const float> row = listing.rows[j];
    const size_t shown = several ? std::min(kPreviewValues, row.size()) : row.size();
    fmt::format_to(std::back_inserter(out), "embedding {}: ", j);
    for (size_t i = 0; i < shown; ++i) append_shown(out, row[i], listing.int16_scaled);
    out += '\n';
  }
  if (!several) return;
  out += "\ncosine similarity matrix:\n\n";
  for (const std::string& prompt : listing.prompts) fmt::format_to(std::back_inserter(out), "{:>6.6} ", prompt);
  out += '\n';
  for (size_t i = 0; i < listing.rows.size(); ++i) {
    for (size_t j = 0; j < listing.rows.size(); ++j) {
      fmt::format_to(std::back_inserter(out), "{:6.2f} ", cosine_similarity(listing.rows[i], listing.rows[j]));
    }
    fmt::format_to(std::back_inserter(out), "{:.10}\n", i < listing.prompts.size() ? listing.prompts[i] : "");
  }
}

void append_plain(std::string& out, const EmbeddingListing& listing) {
  out += '\n';
  if (listing.per_token) {
    append_token_rows(out, listing);
  } else {
    append_pooled_rows(out, listing);
  }
}

// json+: every pair of embeddings (of tokens, too, with --pooling none), as llama-embedding writes them.
void append_similarity_field(std::string& out, const EmbeddingListing& listing) {
  out += ",\n  \"cosineSimilarity\": [\n";
  for (size_t i = 0; i < listing.rows.size(); ++i) {
    if (i > 0) out += ",\n";
    out += "    [";
    for (size_t j = 0; j < listing.rows.size(); ++j) {
      if (j > 0) out += ", ";
      fmt::format_to(std::back_inserter(out), "{:6.2f}", cosine_similarity(listing.rows[i], listing.rows[j]));
    }
    out += " ]";
  }
  out += "\n  ]";
}

void append_json(std::string& out, const EmbeddingListing& listing, EmbeddingFormat format) {
  const bool list_object = format != EmbeddingFormat::array;
  out += list_object ? "{\n  \"object\": \"list\",\n  \"data\": [\n" : "[";
  for (size_t j = 0; j < listing.rows.size(); ++j) {
    if (j > 0) out += list_object ? ",\n" : ",";
    if (list_object) {
      fmt::format_to(std::back_inserter(out),
                     "    {{\n      \"object\": \"embedding\",\n      \"index\": {},\n      \"embedding\": ", j);
    }
    out += '[';
    append_values(out, listing.rows[j], ",", listing.int16_scaled);
    out += list_object ? "]\n    }" : "]";
  }
  out += list_object ? "\n  ]" : "]\n";
  if (format == EmbeddingFormat::json_plus && listing.prompts.size() > 1) append_similarity_field(out, listing);
  if (list_object) out += "\n}\n";
}

void append_raw(std::string& out, const EmbeddingListing& listing) {
  for (const std::span<const float> row : listing.rows) {
    append_values(out, row, " ", listing.int16_scaled);
    out += '\n';
  }
}

}  // namespace

Result<EmbeddingFormat> parse_embedding_format(std::string_view name) {
  for (const auto& [text, format] : kFormats) {
    if (name == text) return format;
  }
  return fail("--embd-output-format '{}': expected '' (the default), array, json, json+ or raw", name);
}

double cosine_similarity(std::span<const float> a, std::span<const float> b) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  if (aa == 0 || bb == 0) return aa == bb ? 1.0 : 0.0;
  return dot / (std::sqrt(aa) * std::sqrt(bb));
}

std::string format_embeddings(const EmbeddingListing& listing, EmbeddingFormat format) {
  std::string out;
  switch (format) {
    case EmbeddingFormat::plain:
      append_plain(out, listing);
      break;
    case EmbeddingFormat::array:
    case EmbeddingFormat::json:
    case EmbeddingFormat::json_plus:
      append_json(out, listing, format);
      break;
    case EmbeddingFormat::raw:
      append_raw(out, listing);
      break;
  }
  out += '\n';  // llama-embedding ends every layout with an empty line
  return out;
}

}  // namespace infertune
