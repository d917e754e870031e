#pragma once
// Reading a JSON Schema for the converter (json_schema_grammar.h): JSON pointers as messages show them, which
// keywords constrain and which are refused, keyword values checked, local $refs resolved, allOf parts merged.
// Errors start "json_schema: " and name the JSON pointer ("at /properties/age", "at the root").
#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

// Ordered, so that a grammar keeps the schema's key order.
using SchemaJson = nlohmann::ordered_json;

// Nested schemas, merged allOf parts and inlined $ref chains: deeper is refused rather than risking the stack.
inline constexpr int kMaxSchemaDepth = 128;

// The member, or nullptr (operator[] on a const json without the key is undefined).
const SchemaJson* schema_member(const SchemaJson& object, std::string_view key);
// The JSON pointer of a member ("/properties/a~1b") or of an element of an array member ("/anyOf/2").
std::string schema_child(const std::string& pointer, std::string_view key);
std::string schema_child(const std::string& pointer, std::string_view key, size_t index);
// The pointer as a message shows it: "the root" for "".
std::string schema_where(const std::string& pointer);
// json_schema: "<keyword>" at <pointer> is not supported<why>
Error schema_unsupported(std::string_view keyword, const std::string& pointer, std::string_view why = "");

bool is_schema_annotation(std::string_view key);
// The formats whose strings the grammar checks; other formats are annotations.
bool is_enforced_format(std::string_view format);
// The first keyword of `schema` that the converter translates, outside `allowed`.
std::optional<std::string> schema_constraint_besides(const SchemaJson& schema,
                                                     std::initializer_list<std::string_view> allowed);
// An error for the first keyword that constrains values and is not translated (multipleOf, not, ...).
Status check_schema_keywords(const SchemaJson& schema, const std::string& pointer);

// A length or count keyword: a non-negative integer up to kMaxCount; absent: nullopt.
Result<std::optional<uint64_t>> schema_count(const SchemaJson& schema, std::string_view key,
                                             const std::string& pointer);
// Whether a JSON value has a JSON Schema type ("integer": a number without a fraction).
bool json_has_type(const SchemaJson& value, std::string_view type);
// The schema's types: its `type`, else the types its keywords imply; empty: any value.
Result<std::vector<std::string>> schema_types(const SchemaJson& schema, const std::string& pointer);

// The schema a local $ref points to ("#", "#/$defs/Name", any "#/json/pointer"); `pointer` is the $ref's.
Result<const SchemaJson*> resolve_schema_ref(const SchemaJson& root, const SchemaJson& ref, const std::string& pointer);
// `schema` with its allOf parts (and the schemas its $ref and theirs point to) merged into one: properties
// and required names united, types intersected, every other keyword where the parts agree; an error where they
// differ, or where a part's additionalProperties would refuse another part's property.
Result<SchemaJson> merge_all_of(const SchemaJson& root, const SchemaJson& schema, const std::string& pointer);

}  // namespace infertune
