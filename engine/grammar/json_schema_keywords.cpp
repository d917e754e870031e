#include "engine/grammar/json_schema_keywords.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>

#include "engine/grammar/json_schema_gbnf.h"

namespace infertune {
namespace {

constexpr std::array<std::string_view, 4> kFormats{"date", "time", "date-time", "uuid"};

// Keywords that only describe; $defs and definitions are reached through $ref.
constexpr std::array<std::string_view, 18> kAnnotations{
    "title",    "description", "examples",    "default",          "$schema",         "$id",
    "$comment", "deprecated",  "readOnly",    "writeOnly",        "$defs",           "definitions",
    "nullable", "$anchor",     "$vocabulary", "contentMediaType", "contentEncoding", "contentSchema"};

// Keywords that constrain values and that the converter does not translate.
// clang-format off
constexpr std::array<std::string_view, 17> kRefused{
    "multipleOf", "patternProperties", "propertyNames", "dependencies", "dependentRequired", "dependentSchemas",
    "unevaluatedProperties", "unevaluatedItems", "contains", "minContains", "maxContains", "not", "if", "then",
    "else", "$dynamicRef", "$recursiveRef"};
// clang-format on

// Keywords the converter translates.
// clang-format off
constexpr std::array<std::string_view, 25> kConstraints{
    "$ref", "allOf", "anyOf", "oneOf", "enum", "const", "type", "properties", "required", "additionalProperties",
    "minProperties", "maxProperties", "items", "prefixItems", "additionalItems", "minItems", "maxItems", "minLength",
    "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
// clang-format on

template <size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

}  // namespace

const SchemaJson* schema_member(const SchemaJson& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string schema_child(const std::string& pointer, std::string_view key) {
  return pointer + "/" + pointer_token(key);
}
std::string schema_child(const std::string& pointer, std::string_view key, size_t index) {
  return fmt::format("{}/{}/{}", pointer, key, index);
}

std::string schema_where(const std::string& pointer) { return pointer.empty() ? "the root" : pointer; }

Error schema_unsupported(std::string_view keyword, const std::string& pointer, std::string_view why) {
  return fail("json_schema: \"{}\" at {} is not supported{}", keyword, schema_where(pointer), why);
}

// The first constraining keyword of `schema` outside `allowed`.
std::optional<std::string> schema_constraint_besides(const SchemaJson& schema,
                                                     std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : schema.items()) {
    if (listed(kConstraints, key) && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) return key;
  }
  return std::nullopt;
}

Status check_schema_keywords(const SchemaJson& schema, const std::string& pointer) {
  for (const auto& [key, value] : schema.items()) {
    if (listed(kRefused, key)) return schema_unsupported(key, pointer);
    if (key == "uniqueItems" && value != false) return schema_unsupported(key, pointer);
  }
  return {};
}

// A non-negative integer keyword (lengths and counts), absent: nullopt.
Result<std::optional<uint64_t>> schema_count(const SchemaJson& schema, std::string_view key,
                                             const std::string& pointer) {
  const SchemaJson* value = schema_member(schema, key);
  if (!value) return std::optional<uint64_t>();
  const bool integral = value->is_number_unsigned() || (value->is_number_integer() && value->get<int64_t>() >= 0) ||
                        (value->is_number_float() && value->get<double>() >= 0 &&
                         value->get<double>() == std::floor(value->get<double>()));
  if (!integral) return fail("json_schema: \"{}\" at {} must be a non-negative integer", key, schema_where(pointer));
  const double count = value->get<double>();
  if (count > static_cast<double>(kMaxCount)) {
    return fail("json_schema: \"{}\" at {} is {}: counts above {} are not supported", key, schema_where(pointer),
                value->dump(), kMaxCount);
  }
  return std::optional<uint64_t>(value->get<uint64_t>());
}

bool json_has_type(const SchemaJson& value, std::string_view type) {
  if (type == "integer") {
    return value.is_number_integer() || (value.is_number_float() && std::isfinite(value.get<double>()) &&
                                         value.get<double>() == std::floor(value.get<double>()));
  }
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "object") return value.is_object();
  return value.is_array();
}

constexpr std::array<std::string_view, 7> kTypes{"object", "array", "string", "number", "integer", "boolean", "null"};

// The types the schema admits: its `type`, else the types its keywords imply; empty: any value.
Result<std::vector<std::string>> schema_types(const SchemaJson& schema, const std::string& pointer) {
  std::vector<std::string> types;
  const SchemaJson* type = schema_member(schema, "type");
  if (!type) {
    const auto implies = [&](std::initializer_list<std::string_view> keys) {
      return std::any_of(keys.begin(), keys.end(), [&](std::string_view k) { return schema.contains(k); });
    };
    if (implies({"properties", "required", "additionalProperties", "minProperties", "maxProperties"}))
      types.push_back("object");
    if (implies({"items", "prefixItems", "additionalItems", "minItems", "maxItems"})) types.push_back("array");
    if (implies({"minLength", "maxLength", "pattern", "format"})) types.push_back("string");
    if (implies({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) types.push_back("number");
    return types;
  }
  const SchemaJson list = type->is_array() ? *type : SchemaJson::array({*type});
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || !listed(kTypes, list[i].get<std::string>())) {
      return fail(
          "json_schema: \"type\" at {} must be one of object, array, string, number, integer, boolean, null "
          "(or an array of them), got {}",
          schema_where(pointer), list[i].dump());
    }
    if (std::find(types.begin(), types.end(), list[i]) == types.end()) types.push_back(list[i].get<std::string>());
  }
  if (types.empty()) return fail("json_schema: \"type\" at {} is an empty array", schema_where(pointer));
  return types;
}

// The object a local $ref points to ("#", "#/$defs/Name", any "#/json/pointer").
Result<const SchemaJson*> resolve_schema_ref(const SchemaJson& root, const SchemaJson& ref,
                                             const std::string& pointer) {
  if (!ref.is_string()) return fail("json_schema: \"$ref\" at {} must be a string", schema_where(pointer));
  const std::string& text = ref.get_ref<const std::string&>();
  if (text != "#" && text.rfind("#/", 0) != 0) {
    return schema_unsupported(
        "$ref", pointer, fmt::format(": \"{}\" is not a reference into this schema (\"#/$defs/Name\", \"#\")", text));
  }
  const SchemaJson* node = &root;
  for (size_t start = 2; start <= text.size() && text != "#";) {
    const size_t end = std::min(text.find('/', start), text.size());
    std::string token;
    for (size_t i = start; i < end; ++i) {
      const bool escape = text[i] == '~' && i + 1 < end && (text[i + 1] == '0' || text[i + 1] == '1');
      token += escape ? (text[++i] == '0' ? '~' : '/') : text[i];
    }
    const SchemaJson* next = nullptr;
    if (node->is_object()) next = schema_member(*node, token);
    const bool index = node->is_array() && !token.empty() && token.size() < 10 &&
                       std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (index && std::stoul(token) < node->size()) next = &(*node)[std::stoul(token)];
    if (!next) return fail("json_schema: \"$ref\" \"{}\" at {} does not resolve", text, schema_where(pointer));
    node = next;
    start = end + 1;
  }
  return node;
}

namespace {

// What allOf parts merge into: one schema with the union of their properties and required names, the
// intersection of their types, and each other keyword where the parts agree.
class AllOfMerger {
 public:
  explicit AllOfMerger(const SchemaJson& root) : root_(root) {}

  Result<SchemaJson> merge(const SchemaJson& schema, const std::string& pointer) {
    if (Status st = add(schema, pointer, 0); !st) return st.error();
    if (Status st = check_closed(); !st) return st.error();
    return std::move(merged_);
  }

 private:
  struct ClosedPart {
    std::string pointer{};
    std::set<std::string> names{};
  };

  Status add(const SchemaJson& part, const std::string& pointer, int depth) {
    if (depth > kMaxSchemaDepth)
      return fail("json_schema: \"allOf\" at {} nests too deeply (a $ref cycle?)", schema_where(pointer));
    if (part.is_boolean()) {
      if (part == true) return {};
      return fail("json_schema: the schema at {} is false: nothing matches it", schema_where(pointer));
    }
    if (!part.is_object())
      return fail("json_schema: the schema at {} must be an object or a boolean", schema_where(pointer));
    if (Status st = check_schema_keywords(part, pointer); !st) return st;
    if (const SchemaJson* ref = schema_member(part, "$ref")) {
      auto target = resolve_schema_ref(root_, *ref, schema_child(pointer, "$ref"));
      if (!target) return target.error();
      if (Status st = add(**target, ref->get<std::string>().substr(1), depth + 1); !st) return st;
    }
    if (const SchemaJson* parts = schema_member(part, "allOf")) {
      if (!parts->is_array() || parts->empty()) {
        return fail("json_schema: \"allOf\" at {} must be a non-empty array", schema_where(pointer));
      }
      for (size_t i = 0; i < parts->size(); ++i) {
        if (Status st = add((*parts)[i], schema_child(pointer, "allOf", i), depth + 1); !st) return st;
      }
    }
    for (const auto& [key, value] : part.items()) {
      if (key == "$ref" || key == "allOf" || listed(kAnnotations, key)) continue;
      if (Status st = add_keyword(key, value, pointer); !st) return st;
    }
    if (const SchemaJson* extra = schema_member(part, "additionalProperties"); extra && *extra != true) {
      ClosedPart closed{.pointer = pointer};
      if (const SchemaJson* properties = schema_member(part, "properties"); properties && properties->is_object()) {
        for (const auto& [name, value] : properties->items()) closed.names.insert(name);
      }
      closed_.push_back(std::move(closed));
    }
    return {};
  }

  Status add_keyword(const std::string& key, const SchemaJson& value, const std::string& pointer) {
    if (key == "properties") {
      if (!value.is_object()) return fail("json_schema: \"properties\" at {} must be an object", schema_where(pointer));
      SchemaJson& properties = merged_["properties"];
      for (const auto& [name, schema] : value.items()) {
        const SchemaJson* before = properties.is_object() ? schema_member(properties, name) : nullptr;
        // Both parts' schemas hold for the property: merged when the property is converted.
        properties[name] = before && *before != schema ? SchemaJson{{"allOf", {*before, schema}}} : schema;
      }
      return {};
    }
    if (key == "required" && value.is_array()) {
      SchemaJson& required = merged_["required"];
      if (!required.is_array()) required = SchemaJson::array();
      for (const SchemaJson& name : value) {
        if (std::find(required.begin(), required.end(), name) == required.end()) required.push_back(name);
      }
      return {};
    }
    if (key == "type" && merged_.contains("type")) return intersect_types(value, pointer);
    if (!merged_.contains(key)) {
      merged_[key] = value;
    } else if (merged_[key] != value) {
      return fail("json_schema: \"allOf\" at {}: its parts' \"{}\" differ and cannot be merged", schema_where(pointer),
                  key);
    }
    return {};
  }

  Status intersect_types(const SchemaJson& type, const std::string& pointer) {
    auto mine = schema_types(SchemaJson{{"type", merged_["type"]}}, pointer);
    auto theirs = schema_types(SchemaJson{{"type", type}}, pointer);
    if (!mine) return mine.error();
    if (!theirs) return theirs.error();
    const auto in = [](const std::vector<std::string>& types, std::string_view t) {
      return std::find(types.begin(), types.end(), t) != types.end();
    };
    SchemaJson both = SchemaJson::array();
    for (const std::string& t : *mine) {
      const bool integer = (t == "integer" && in(*theirs, "number")) || (t == "number" && in(*theirs, "integer"));
      if (in(*theirs, t) || integer) both.push_back(integer ? "integer" : t);
    }
    if (both.empty())
      return fail("json_schema: \"allOf\" at {}: its parts' types have nothing in common", schema_where(pointer));
    merged_["type"] = both;
    return {};
  }

  // A part's additionalProperties applies to the other parts' properties too: refused rather than merged wrong.
  Status check_closed() const {
    const SchemaJson* properties = schema_member(merged_, "properties");
    if (!properties) return {};
    for (const ClosedPart& part : closed_) {
      for (const auto& [name, value] : properties->items()) {
        if (!part.names.contains(name)) {
          return fail(
              "json_schema: \"allOf\": the \"additionalProperties\" at {} would refuse property \"{}\" of "
              "another part; this cannot be merged",
              schema_where(part.pointer), name);
        }
      }
    }
    return {};
  }

  const SchemaJson& root_;
  SchemaJson merged_ = SchemaJson::object();
  std::vector<ClosedPart> closed_;
};

}  // namespace

bool is_schema_annotation(std::string_view key) { return listed(kAnnotations, key); }

bool is_enforced_format(std::string_view format) { return listed(kFormats, format); }

Result<SchemaJson> merge_all_of(const SchemaJson& root, const SchemaJson& schema, const std::string& pointer) {
  return AllOfMerger(root).merge(schema, pointer);
}

}  // namespace infertune
