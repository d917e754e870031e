#pragma once
// The fields that constrain a reply's text to a grammar, as llama-server reads them: `grammar` (GBNF text),
// `json_schema` (a JSON Schema), and OpenAI's `response_format` ({"type": "json_object"}, optionally with a
// "schema"; {"type": "json_schema", "json_schema": {"schema": ...}}; {"type": "text"}). At most one of them may
// be given. The grammar is compiled here, so a bad one is the request's 400 naming the field and the place.
#include <nlohmann/json.hpp>

#include <memory>
#include <string_view>

#include "engine/grammar/grammar.h"
#include "kernels/result.h"

namespace infertune {

// nullptr when the body has none of the fields (or response_format is {"type": "text"}). `raw_body`, the text
// `body` was parsed from, gives a schema's properties in the order the client wrote them (empty: sorted).
Result<std::shared_ptr<const Grammar>> parse_output_constraint(const nlohmann::json& body,
                                                               std::string_view raw_body = {});

}  // namespace infertune
