#pragma once
// JSON Schema -> GBNF (llama.cpp's dialect, root rule "root"): the grammar of the JSON texts a schema accepts,
// for llama-server's json_schema field and OpenAI's response_format {"type": "json_schema"}.
//
//   {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}
//   root ::= "{" space age-kv "}" space
//   age-kv ::= "\"age\"" space ":" space age
//   age ::= ("0" | [1-9] [0-9]*) space
//   ...
//
// The grammar never accepts a value the schema forbids, with the exceptions listed here; where it would, the
// conversion fails with an error naming the keyword and its JSON pointer:
//   json_schema: "multipleOf" at /properties/n is not supported
// Several choices make the grammar narrower than the schema, so that a model writes what users mean:
// - Object keys come in the order `properties` lists them: required ones first, then the optional ones (each
//   may be absent), then extra keys where allowed. nlohmann::json sorts keys; pass an ordered_json to keep the
//   schema's order, as llama.cpp does.
// - `additionalProperties` absent from an object with `properties` allows no extra keys (as llama.cpp and
//   OpenAI's strict mode); true or a schema allows extra keys after the listed ones, never one of the listed
//   names, and only extra keys that start with an unescaped character. Without `properties`: any object.
// - A schema without `type` takes the types its keywords imply ({"properties": ...} is an object, {"items":
//   ...} an array, {"maxLength": ...} a string, {"minimum": ...} a number); with no such keyword: any value.
// - `prefixItems` (or draft-7 `items` as an array) asks for the whole tuple (fewer only where maxItems says
//   so); after it come elements of `items` (true or a schema), none when `items` is absent unless minItems
//   asks for more.
// - Numbers are plain JSON syntax with at most 16 digits before the point, 16 after it and 16 in the exponent, as
//   llama.cpp bounds them (so a model cannot write digits forever); an integer is written without fraction or
//   exponent (1.0 is not one here). Integer bounds (minimum, maximum) are exact, whatever their digits.
// - `enum` and `const` accept their values' exact compact JSON text (object keys in the json's order); `type`
//   alongside filters them, any other constraint alongside is refused.
// - `pattern` (a practical regex subset: literals, escapes \d \w \s \D \W \S \t \n \xHH \uHHHH, classes,
//   `.`, groups (also (?: and named), alternation, * + ? {m} {m,} {m,n}, lazy suffixes, ^ and $ at the ends)
//   matches anywhere in the string unless anchored, as JSON Schema says; inside it the grammar takes only the
//   short escapes \" \\ \b \f \n \r \t. Lookaround, backreferences, \b boundaries, \p classes are refused, so is
//   `pattern` with minLength/maxLength or an enforced format.
// Where the grammar is wider than the schema:
// - `oneOf` is read as `anyOf`: a value matching several alternatives is accepted.
// - `format`: date, time, date-time and uuid are enforced (RFC 3339; a date's day is 01-31 whatever its
//   month); other formats are annotations, as JSON Schema 2020-12 makes them: any string.
// - `\uXXXX` escapes are not checked for lone surrogates.
// Refused: minimum/maximum/exclusiveMinimum/exclusiveMaximum on numbers (on integers they are exact ranges),
// minProperties/maxProperties unless the listed properties already satisfy them, multipleOf, uniqueItems: true,
// contains, not, if/then/else, patternProperties, propertyNames, dependentRequired/dependentSchemas,
// unevaluatedProperties/unevaluatedItems, $dynamicRef, references outside the schema, `allOf` parts that
// cannot be merged (differing values of one keyword, an additionalProperties that would refuse another part's
// property), lengths and counts above a million, a `$ref` that refers back to itself before anything is matched
// (left recursion). Recursion through `$ref` is by rule reference, so recursive schemas work. Annotations
// (title, description, examples, default, $schema, $id, $comment, deprecated, readOnly, writeOnly, nullable,
// ...) and keywords JSON Schema does not define are ignored.
//
// Whitespace between tokens is bounded: `space ::= | " " | "\n" [ \t]{0,20}` after each token, none before the
// first, so that a model cannot loop on whitespace.
#include <nlohmann/json.hpp>

#include <string>

#include "kernels/result.h"

namespace infertune {

// The grammar of the JSON texts that `schema` accepts; an error naming the keyword and JSON pointer for what
// cannot be converted. Keeps the key order of `schema`'s objects.
Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema);
// The same, with object keys in nlohmann::json's (sorted) order.
Result<std::string> json_schema_to_gbnf(const nlohmann::json& schema);

// Any JSON object (OpenAI's response_format {"type": "json_object"}).
std::string json_object_gbnf();

}  // namespace infertune
