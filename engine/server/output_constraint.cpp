#include "engine/server/output_constraint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/server/json_fields.h"

namespace infertune {
namespace {

using json = nlohmann::json;

bool present(const json& body, const char* name) {
  const auto it = body.find(name);
  return it != body.end() && !it->is_null();
}

// The message with the field in front, unless it already starts with it ("grammar line 2, column 9: ...").
Error in_field(std::string_view field, const std::string& message) {
  if (message.starts_with(field)) return Error{message};
  return fail("{}: {}", field, message);
}

Result<std::shared_ptr<const Grammar>> compiled(const std::string& gbnf, std::string_view field) {
  auto grammar = compile_grammar(gbnf);
  if (!grammar) return in_field(field, grammar.error().message);
  return std::move(*grammar);
}

// The value at `path`, or nullptr where a step is missing or not an object.
template <class Json>
const Json* value_at(const Json& root, std::initializer_list<const char*> path) {
  const Json* at = &root;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

// The grammar of the schema at `path` in the body. JSON Schema's properties have an order, which the grammar keeps
// (a model writes the keys in the order the user listed them, as llama-server's does), and `json` sorts object
// keys: so the schema is read again from the raw body with its order, when there is one. (A body with duplicate keys
// may hold another value there; the caller checked `body`'s, so the sorted one is the fallback.)
Result<std::string> schema_gbnf(const json& body, std::string_view raw_body, std::initializer_list<const char*> path) {
  if (!raw_body.empty()) {
    // The body was parsed once already (depth-checked): parsing it again cannot fail or recurse deeper.
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(raw_body, nullptr, false);
    if (const nlohmann::ordered_json* schema = value_at(ordered, path)) return json_schema_to_gbnf(*schema);
  }
  const json* schema = value_at(body, path);
  if (!schema) return fail("no schema at {}", fmt::join(path, "."));
  return json_schema_to_gbnf(*schema);
}

Result<std::shared_ptr<const Grammar>> from_schema(const json& body, std::string_view raw_body,
                                                   std::initializer_list<const char*> path, std::string_view field) {
  auto gbnf = schema_gbnf(body, raw_body, path);
  if (!gbnf) return in_field(field, gbnf.error().message);
  return compiled(*gbnf, field);
}

Result<std::shared_ptr<const Grammar>> from_response_format(const json& body, std::string_view raw_body) {
  const json& format = body["response_format"];
  if (!format.is_object()) return fail("response_format must be an object, got {}", shown(format));
  const auto type = format.find("type");
  if (type == format.end() || !type->is_string()) {
    return fail("response_format.type must be \"text\", \"json_object\" or \"json_schema\"");
  }
  const std::string kind = type->get<std::string>();
  if (kind == "text") return std::shared_ptr<const Grammar>();
  if (kind == "json_object") {
    // llama-server takes a schema beside the type too.
    if (present(format, "schema")) {
      return from_schema(body, raw_body, {"response_format", "schema"}, "response_format.schema");
    }
    return compiled(json_object_gbnf(), "response_format");
  }
  if (kind == "json_schema") {
    const auto spec = format.find("json_schema");
    if (spec == format.end() || !spec->is_object() || !present(*spec, "schema")) {
      return fail("response_format {{\"type\": \"json_schema\"}} needs json_schema.schema (the JSON Schema)");
    }
    return from_schema(body, raw_body, {"response_format", "json_schema", "schema"},
                       "response_format.json_schema.schema");
  }
  return fail("response_format.type must be \"text\", \"json_object\" or \"json_schema\", got {}", shown(*type));
}

}  // namespace

Result<std::shared_ptr<const Grammar>> parse_output_constraint(const json& body, std::string_view raw_body) {
  std::vector<const char*> given;
  for (const char* name : {"grammar", "json_schema", "response_format"}) {
    if (present(body, name)) given.push_back(name);
  }
  if (given.empty()) return std::shared_ptr<const Grammar>();
  if (given.size() > 1) {
    return fail("{} and {} cannot both be given: each constrains the reply on its own", given[0], given[1]);
  }
  const json& value = body[given[0]];
  if (given[0] == std::string_view("grammar")) {
    if (!value.is_string()) return fail("grammar must be a string of GBNF rules, got {}", shown(value));
    if (value.get_ref<const std::string&>().empty()) return std::shared_ptr<const Grammar>();  // llama-server: none
    return compiled(value.get<std::string>(), "grammar");
  }
  if (given[0] == std::string_view("json_schema")) return from_schema(body, raw_body, {"json_schema"}, "json_schema");
  return from_response_format(body, raw_body);
}

}  // namespace infertune
