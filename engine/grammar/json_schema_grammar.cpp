#include "engine/grammar/json_schema_grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/grammar/json_schema_gbnf.h"
#include "engine/grammar/json_schema_keywords.h"
#include "engine/grammar/json_schema_pattern.h"

namespace infertune {
namespace {

// Integer bounds beyond +-1e18 are refused: their magnitudes must fit uint64 with a digit to spare.
constexpr int64_t kMaxBound = 1'000'000'000'000'000'000;

struct Primitive {
  std::string_view name;
  std::string_view body;
  std::array<std::string_view, 6> uses;
};

// The rules every grammar may share; only those used are written out.
constexpr std::array<Primitive, 20> kPrimitives{{
    {"value",
     "object | array | string | number | boolean | null",
     {"object", "array", "string", "number", "boolean", "null"}},
    {"object",
     R"("{" space (string ":" space value ("," space string ":" space value)*)? "}" space)",
     {"space", "string", "value"}},
    {"array", R"("[" space (value ("," space value)*)? "]" space)", {"space", "value"}},
    {"string", R"("\"" char* "\"" space)", {"char", "space"}},
    {"char", R"([^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))", {}},
    // Digits are bounded as llama.cpp bounds them (16 before the point, 16 after, 16 in the exponent), so that a
    // model cannot write a number forever: past 16 digits a double has nothing left to say. The exponent may have
    // leading zeros, as JSON allows ("1e-08", as printf writes it).
    {"number", R"("-"? integral-part ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,16})? space)", {"integral-part", "space"}},
    {"integer", R"("-"? integral-part space)", {"integral-part", "space"}},
    {"integral-part", R"("0" | [1-9] [0-9]{0,15})", {}},
    {"boolean", R"(("true" | "false") space)", {"space"}},
    {"null", R"("null" space)", {"space"}},
    {"date-string", R"("\"" date "\"" space)", {"date", "space"}},
    {"time-string", R"("\"" time "\"" space)", {"time", "space"}},
    {"date-time-string", R"("\"" date-time "\"" space)", {"date-time", "space"}},
    {"uuid-string", R"("\"" uuid "\"" space)", {"uuid", "space"}},
    {"date", R"([0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]))", {}},
    {"time", R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]+)? time-offset)", {"time-offset"}},
    {"time-offset", R"("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])", {}},
    {"date-time", R"(date "T" time)", {"date", "time"}},
    {"uuid", R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})", {}},
    // One space, or a newline and an indentation: enough for compact and pretty-printed JSON, and bounded.
    {"space", R"(| " " | "\n" [ \t]{0,20})", {}},
}};

// Converts one schema: each referenced definition, object member and constrained value becomes a rule; rules
// with the same body are shared.
class SchemaConverter {
 public:
  explicit SchemaConverter(const SchemaJson& root) : root_(root) {
    for (const Primitive& primitive : kPrimitives) taken_.insert(std::string(primitive.name));
    taken_.insert("root");
    rules_.push_back({"root", ""});
    ref_rules_["#"] = "root";
  }

  Result<std::string> convert() {
    auto root = body(root_, "", "root");
    if (!root) return root.error();
    rules_[0].body = *root;
    if (Status st = check_left_recursion(); !st) return st.error();
    std::string out;
    for (const Rule& rule : rules_) out += fmt::format("{} ::= {}\n", rule.name, rule.body);
    for (const Primitive& primitive : kPrimitives) {
      if (used_.contains(primitive.name)) out += fmt::format("{} ::= {}\n", primitive.name, primitive.body);
    }
    return out;
  }

 private:
  struct Rule {
    std::string name;
    std::string body;
  };

  // A $ref met before anything is matched: `from`'s rule can begin with `to`'s.
  struct LeadingRef {
    std::string from;
    std::string to;
    std::string pointer;
  };

  // Counts the nesting of body() calls.
  class DepthGuard {
   public:
    explicit DepthGuard(int& depth) : depth_(++depth) {}
    ~DepthGuard() { --depth_; }
    bool too_deep() const { return depth_ > kMaxSchemaDepth; }

   private:
    int& depth_;
  };

  // The rule body (alternatives) that matches the schema's values, each followed by `space`.
  Result<std::string> body(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    const DepthGuard guard(depth_);
    if (guard.too_deep()) return fail("json_schema: the schema at {} nests too deeply", schema_where(pointer));
    if (schema.is_boolean()) {
      if (schema == true) return use("value");
      return fail("json_schema: the schema at {} is false: nothing matches it", schema_where(pointer));
    }
    if (!schema.is_object()) {
      return fail("json_schema: the schema at {} must be an object or a boolean, got {}", schema_where(pointer),
                  schema.type_name());
    }
    if (Status st = check_schema_keywords(schema, pointer); !st) return st.error();
    if (const SchemaJson* ref = schema_member(schema, "$ref")) {
      if (!schema_constraint_besides(schema, {"$ref"})) return ref_rule(*ref, schema_child(pointer, "$ref"));
      SchemaJson parts = schema;  // the reference and its sibling keywords all hold
      parts.erase("$ref");
      if (!parts.contains("allOf")) parts["allOf"] = SchemaJson::array();
      if (parts["allOf"].is_array()) parts["allOf"].push_back(SchemaJson{{"$ref", *ref}});
      return merged_body(parts, pointer, hint);
    }
    if (schema.contains("allOf")) return merged_body(schema, pointer, hint);
    if (schema.contains("anyOf") || schema.contains("oneOf")) return alternatives_body(schema, pointer, hint);
    if (schema.contains("enum") || schema.contains("const")) return enum_body(schema, pointer);
    return typed_body(schema, pointer, hint);
  }

  // A rule name for the schema's values: a primitive's, or a new rule's.
  Result<std::string> value_rule(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    auto text = body(schema, pointer, hint);
    if (!text) return text;
    const bool name = std::all_of(text->begin(), text->end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    });
    return name ? *text : add_rule(hint, *text);
  }

  // value_rule() for a value that follows a token (a key, "[" or ","): a $ref there cannot recurse leftward.
  Result<std::string> value_after_token(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    const bool was = after_token_;
    after_token_ = true;
    auto rule = value_rule(schema, pointer, hint);
    after_token_ = was;
    return rule;
  }

  Result<std::string> ref_rule(const SchemaJson& ref, const std::string& pointer) {
    auto target = resolve_schema_ref(root_, ref, pointer);
    if (!target) return target.error();
    const std::string& text = ref.get_ref<const std::string&>();
    if (!after_token_) leading_refs_.push_back({owner_, text, pointer});
    if (const auto it = ref_rules_.find(text); it != ref_rules_.end()) return it->second;
    // Named before its body is converted, so that a recursive reference finds it.
    const std::string name = unique_name(text.substr(text.rfind('/') + 1));
    ref_rules_[text] = name;
    const size_t index = rules_.size();
    rules_.push_back({name, ""});
    const std::string owner = std::exchange(owner_, text);
    const bool after_token = std::exchange(after_token_, false);
    auto rule_body = body(**target, text.substr(1), name);
    owner_ = owner;
    after_token_ = after_token;
    if (!rule_body) return rule_body.error();
    rules_[index].body = *rule_body;
    return name;
  }

  Result<std::string> merged_body(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    auto merged = merge_all_of(root_, schema, pointer);
    if (!merged) return merged.error();
    return body(*merged, pointer, hint);
  }

  // anyOf / oneOf: the alternatives, each with the sibling keywords merged in (they hold for every one).
  Result<std::string> alternatives_body(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    if (schema.contains("anyOf") && schema.contains("oneOf"))
      return schema_unsupported("oneOf", pointer, " with \"anyOf\"");
    const std::string key = schema.contains("anyOf") ? "anyOf" : "oneOf";
    const SchemaJson& alternatives = schema[key];
    if (!alternatives.is_array() || alternatives.empty()) {
      return fail("json_schema: \"{}\" at {} must be a non-empty array", key, schema_where(pointer));
    }
    const bool siblings = schema_constraint_besides(schema, {"anyOf", "oneOf"}).has_value();
    std::vector<std::string> bodies;
    for (size_t i = 0; i < alternatives.size(); ++i) {
      const std::string at = schema_child(pointer, key, i);
      const std::string alternative_hint = sub_hint(hint, fmt::format("{}{}", key == "anyOf" ? "any" : "one", i));
      Result<std::string> text = std::string();
      if (siblings) {
        SchemaJson parts = schema;
        parts.erase(key);
        parts["allOf"] = SchemaJson::array({alternatives[i]});
        text = merged_body(parts, at, alternative_hint);
      } else {
        text = body(alternatives[i], at, alternative_hint);
      }
      if (!text) return text;
      if (std::find(bodies.begin(), bodies.end(), *text) == bodies.end()) bodies.push_back(*text);
    }
    return join_nonempty(bodies, " | ");
  }

  Result<std::string> enum_body(const SchemaJson& schema, const std::string& pointer) {
    if (const auto other = schema_constraint_besides(schema, {"enum", "const", "type"})) {
      return schema_unsupported(*other, pointer, " alongside \"enum\" or \"const\"");
    }
    std::vector<SchemaJson> values;
    if (const SchemaJson* list = schema_member(schema, "enum")) {
      if (!list->is_array() || list->empty()) {
        return fail("json_schema: \"enum\" at {} must be a non-empty array", schema_where(pointer));
      }
      values.assign(list->begin(), list->end());
    }
    if (const SchemaJson* value = schema_member(schema, "const")) {
      if (!schema.contains("enum")) values.push_back(*value);
      std::erase_if(values, [&](const SchemaJson& v) { return v != *value; });
    }
    auto types = schema_types(schema, pointer);
    if (!types) return types.error();
    if (schema.contains("type")) {
      std::erase_if(values, [&](const SchemaJson& v) {
        return std::none_of(types->begin(), types->end(), [&](const std::string& t) { return json_has_type(v, t); });
      });
    }
    if (values.empty())
      return fail("json_schema: no value of \"enum\"/\"const\" at {} fits the schema", schema_where(pointer));
    std::vector<std::string> literals;
    for (const SchemaJson& value : values) {
      const std::string text = gbnf_literal(value.dump());
      if (std::find(literals.begin(), literals.end(), text) == literals.end()) literals.push_back(text);
    }
    use("space");
    return literals.size() == 1 ? literals[0] + " space" : "(" + join_nonempty(literals, " | ") + ") space";
  }

  Result<std::string> typed_body(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    auto types = schema_types(schema, pointer);
    if (!types) return types.error();
    if (types->empty()) return use("value");
    const bool number = std::find(types->begin(), types->end(), "number") != types->end();
    std::vector<std::string> bodies;
    for (const std::string& type : *types) {
      if (type == "integer" && number) continue;  // every integer is a number
      auto text = type_body(type, schema, pointer, hint);
      if (!text) return text;
      bodies.push_back(*text);
    }
    return join_nonempty(bodies, " | ");
  }

  Result<std::string> type_body(std::string_view type, const SchemaJson& schema, const std::string& pointer,
                                const std::string& hint) {
    if (type == "object") return object_body(schema, pointer, hint);
    if (type == "array") return array_body(schema, pointer, hint);
    if (type == "string") return string_body(schema, pointer);
    if (type == "integer") return integer_body(schema, pointer);
    if (type == "number") {
      for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
        if (schema.contains(key)) return schema_unsupported(key, pointer, " for numbers (only for integers)");
      }
      return use("number");
    }
    return use(type == "boolean" ? "boolean" : "null");
  }

  Result<std::string> string_body(const SchemaJson& schema, const std::string& pointer) {
    auto min = schema_count(schema, "minLength", pointer);
    auto max = schema_count(schema, "maxLength", pointer);
    if (!min) return min.error();
    if (!max) return max.error();
    const bool lengths = min->has_value() || max->has_value();
    const SchemaJson* format = schema_member(schema, "format");
    if (format && !format->is_string())
      return fail("json_schema: \"format\" at {} must be a string", schema_where(pointer));
    const bool enforced = format && is_enforced_format(format->get<std::string>());
    if (const SchemaJson* pattern = schema_member(schema, "pattern")) {
      if (lengths || enforced) {
        return schema_unsupported(lengths ? (min->has_value() ? "minLength" : "maxLength") : "format", pointer,
                                  " together with \"pattern\"");
      }
      if (!pattern->is_string()) return fail("json_schema: \"pattern\" at {} must be a string", schema_where(pointer));
      auto translated = translate_pattern(pattern->get<std::string>(), schema_where(pointer));
      if (!translated) return translated.error();
      use("space");
      // Unanchored, the pattern may match anywhere in the string.
      const auto anything = [&](bool anchored) { return anchored ? "" : use("char") + "*"; };
      return join_nonempty({R"("\"")", anything(translated->anchored_start), translated->expression,
                            anything(translated->anchored_end), R"("\"" space)"},
                           " ");
    }
    if (enforced) {
      if (lengths) return schema_unsupported(min->has_value() ? "minLength" : "maxLength", pointer, " with a format");
      return use(format->get<std::string>() + "-string");
    }
    if (!lengths) return use("string");
    if (*max && min->value_or(0) > **max) {
      return fail("json_schema: \"minLength\" is above \"maxLength\" at {}", schema_where(pointer));
    }
    use("space");
    return join_nonempty({R"("\"")", gbnf_repeat(use("char"), min->value_or(0), *max), R"("\"" space)"}, " ");
  }

  Result<std::string> integer_body(const SchemaJson& schema, const std::string& pointer) {
    auto low = integer_bound(schema, pointer, true);
    auto high = integer_bound(schema, pointer, false);
    if (!low) return low.error();
    if (!high) return high.error();
    if (!*low && !*high) return use("integer");
    if (*low && *high && **low > **high)
      return fail("json_schema: no integer is within the bounds at {}", schema_where(pointer));
    use("space");
    return "(" + gbnf_integer_range(*low, *high) + ") space";
  }

  // The least (lower) or greatest integer that minimum/exclusiveMinimum (maximum/...) allow; nullopt: none set.
  Result<std::optional<int64_t>> integer_bound(const SchemaJson& schema, const std::string& pointer, bool lower) {
    const char* inclusive_key = lower ? "minimum" : "maximum";
    const char* exclusive_key = lower ? "exclusiveMinimum" : "exclusiveMaximum";
    std::optional<int64_t> bound;
    for (const char* key : {inclusive_key, exclusive_key}) {
      const SchemaJson* value = schema_member(schema, key);
      if (!value || value->is_boolean()) continue;  // draft 4's exclusiveMinimum: true modifies minimum
      if (!value->is_number()) return fail("json_schema: \"{}\" at {} must be a number", key, schema_where(pointer));
      const double x = value->get<double>();
      if (!(std::abs(x) <= static_cast<double>(kMaxBound))) {
        return schema_unsupported(key, pointer, fmt::format(": {} is beyond +-1e18", value->dump()));
      }
      const SchemaJson* draft4_modifier = schema_member(schema, exclusive_key);
      const bool exclusive = key == exclusive_key || (draft4_modifier && *draft4_modifier == true);
      int64_t b =
          value->is_number_float() ? static_cast<int64_t>(lower ? std::ceil(x) : std::floor(x)) : value->get<int64_t>();
      if (exclusive && static_cast<double>(b) == x) b += lower ? 1 : -1;
      bound = !bound ? b : lower ? std::max(*bound, b) : std::min(*bound, b);
    }
    return bound;
  }

  // --- objects

  struct ObjectShape {
    std::vector<std::string> required;  // kv rules, in order
    std::vector<std::string> optional;
    std::optional<std::string> extra;  // the kv rule of extra keys, when allowed
  };

  Result<std::string> object_body(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    const SchemaJson* properties = schema_member(schema, "properties");
    if (properties && !properties->is_object()) {
      return fail("json_schema: \"properties\" at {} must be an object", schema_where(pointer));
    }
    auto required = required_names(schema, pointer);
    if (!required) return required.error();
    const SchemaJson* additional = schema_member(schema, "additionalProperties");
    if (additional && !additional->is_boolean() && !additional->is_object()) {
      return fail("json_schema: \"additionalProperties\" at {} must be a schema", schema_where(pointer));
    }
    // Absent with properties: none (see the header); absent without: any.
    const SchemaJson extra_schema = additional ? *additional : SchemaJson(properties == nullptr);
    ObjectShape shape;
    std::vector<std::string> names;  // that extra keys must differ from
    if (properties) {
      for (const auto& [name, property] : properties->items()) {
        const bool is_required = std::find(required->begin(), required->end(), name) != required->end();
        names.push_back(name);
        if (property == false) {  // the property must be absent
          if (is_required)
            return fail("json_schema: required property \"{}\" at {} is false", name, schema_where(pointer));
          continue;
        }
        auto kv = member_rule(name, property, schema_child(schema_child(pointer, "properties"), name), hint);
        if (!kv) return kv.error();
        (is_required ? shape.required : shape.optional).push_back(*kv);
      }
    }
    for (const std::string& name : *required) {
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (extra_schema == false) {
        return fail(
            "json_schema: required property \"{}\" at {} is neither in \"properties\" nor allowed as an "
            "additional property",
            name, schema_where(pointer));
      }
      auto kv = member_rule(name, extra_schema, schema_child(pointer, "additionalProperties"), hint);
      if (!kv) return kv.error();
      shape.required.push_back(*kv);
      names.push_back(name);
    }
    if (Status st = check_property_counts(schema, pointer, shape, extra_schema); !st) return st.error();
    if (names.empty() && extra_schema == true) return use("object");
    if (extra_schema != false) {
      auto extra = extra_rule(names, extra_schema, schema_child(pointer, "additionalProperties"), hint);
      if (!extra) return extra.error();
      shape.extra = *extra;
    }
    return object_sequence(shape, hint);
  }

  Result<std::vector<std::string>> required_names(const SchemaJson& schema, const std::string& pointer) {
    std::vector<std::string> names;
    const SchemaJson* required = schema_member(schema, "required");
    if (!required) return names;
    if (!required->is_array()) return fail("json_schema: \"required\" at {} must be an array", schema_where(pointer));
    for (size_t i = 0; i < required->size(); ++i) {
      if (!(*required)[i].is_string()) {
        return fail("json_schema: \"required\" at {} must name properties as strings, got {}",
                    schema_where(schema_child(pointer, "required", i)), (*required)[i].dump());
      }
      const std::string& name = (*required)[i].get_ref<const std::string&>();
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
  }

  // min/maxProperties are accepted only where the shape already satisfies them.
  Status check_property_counts(const SchemaJson& schema, const std::string& pointer, const ObjectShape& shape,
                               const SchemaJson& extra_schema) {
    auto min = schema_count(schema, "minProperties", pointer);
    auto max = schema_count(schema, "maxProperties", pointer);
    if (!min) return min.error();
    if (!max) return max.error();
    if (*min && **min > shape.required.size()) {
      return schema_unsupported("minProperties", pointer, " beyond the number of required properties");
    }
    const size_t most = shape.required.size() + shape.optional.size();
    if (*max && (extra_schema != false || **max < most)) {
      return schema_unsupported("maxProperties", pointer, " below the number of properties that may be present");
    }
    return {};
  }

  // `"name": value`, as a rule.
  Result<std::string> member_rule(const std::string& name, const SchemaJson& schema, const std::string& pointer,
                                  const std::string& hint) {
    const std::string value_hint = sub_hint(hint, name);
    auto value = value_after_token(schema, pointer, value_hint);
    if (!value) return value.error();
    use("space");
    return add_rule(value_hint + "-kv",
                    fmt::format("{} space \":\" space {}", gbnf_literal(SchemaJson(name).dump()), *value));
  }

  // `"key": value` for keys other than `names`.
  Result<std::string> extra_rule(const std::vector<std::string>& names, const SchemaJson& schema,
                                 const std::string& pointer, const std::string& hint) {
    auto value = value_after_token(schema, pointer, sub_hint(hint, "additional"));
    if (!value) return value.error();
    std::string key = use("string");
    if (!names.empty()) {
      auto other_key = gbnf_key_other_than(names);
      if (!other_key) return fail("json_schema: at {}: {}", schema_where(pointer), other_key.error().message);
      use("char");
      key = add_rule(sub_hint(hint, "other-key"), *other_key + " space");
    }
    return add_rule(sub_hint(hint, "additional-kv"), fmt::format("{} \":\" space {}", key, *value));
  }

  // The object's text: required members in order, then the optional ones in order (each may be absent), then
  // extra members. Commas go before every member but the first present one.
  std::string object_sequence(const ObjectShape& shape, const std::string& hint) {
    use("space");
    const std::string more_extra = shape.extra ? fmt::format(R"(("," space {})*)", *shape.extra) : "";
    std::string members;
    if (!shape.required.empty()) {
      members = join_nonempty(shape.required, R"( "," space )");
      for (const std::string& kv : shape.optional) members += fmt::format(R"( ("," space {})?)", kv);
      if (shape.extra) members += " " + more_extra;
    } else {
      // Which member comes first decides where commas go; rests[i] is what may follow optional member i.
      std::vector<std::string> rests(shape.optional.size() + 1);
      rests.back() = more_extra;
      for (size_t i = shape.optional.size(); i-- > 1;) {
        const std::string rest =
            join_nonempty({fmt::format(R"(("," space {})?)", shape.optional[i]), rests[i + 1]}, " ");
        rests[i] = add_rule(sub_hint(hint, "rest"), rest);
      }
      std::vector<std::string> firsts;
      for (size_t i = 0; i < shape.optional.size(); ++i)
        firsts.push_back(join_nonempty({shape.optional[i], rests[i + 1]}, " "));
      if (shape.extra) firsts.push_back(*shape.extra + " " + more_extra);
      if (!firsts.empty()) members = "(" + join_nonempty(firsts, " | ") + ")?";
    }
    return join_nonempty({R"("{" space)", members, R"("}" space)"}, " ");
  }

  // --- arrays

  Result<std::string> array_body(const SchemaJson& schema, const std::string& pointer, const std::string& hint) {
    const SchemaJson* items = schema_member(schema, "items");
    const SchemaJson* prefix = schema_member(schema, "prefixItems");
    std::string extra_key = "items";
    if (items && items->is_array() && !prefix) {  // draft 4-7 tuples
      prefix = items;
      items = schema_member(schema, "additionalItems");
      extra_key = "additionalItems";
    }
    if (prefix && !prefix->is_array())
      return fail("json_schema: \"prefixItems\" at {} must be an array", schema_where(pointer));
    auto min = schema_count(schema, "minItems", pointer);
    auto max = schema_count(schema, "maxItems", pointer);
    if (!min) return min.error();
    if (!max) return max.error();
    const uint64_t tuple = prefix ? prefix->size() : 0;
    // No items after a tuple unless asked for (see the header); any items without a tuple.
    SchemaJson extra_schema = items ? *items : SchemaJson(!prefix || min->value_or(0) > tuple);
    if (!extra_schema.is_boolean() && !extra_schema.is_object()) {
      return fail("json_schema: \"{}\" at {} must be a schema", extra_key, schema_where(pointer));
    }
    const std::optional<uint64_t> most = extra_schema == false ? std::min(tuple, max->value_or(tuple)) : *max;
    const uint64_t least = std::max(min->value_or(0), std::min(tuple, most.value_or(tuple)));
    if (most && least > *most) return fail("json_schema: no array fits the item counts at {}", schema_where(pointer));
    std::vector<std::string> elements;
    for (uint64_t i = 0; i < std::min(least, tuple); ++i) {
      auto element = value_after_token((*prefix)[i], schema_child(pointer, "prefixItems", i),
                                       sub_hint(hint, fmt::format("item{}", i)));
      if (!element) return element.error();
      elements.push_back(*element);
    }
    std::string extra;
    if (extra_schema != false && (!most || *most > tuple)) {
      auto rule = value_after_token(extra_schema, schema_child(pointer, extra_key), sub_hint(hint, "item"));
      if (!rule) return rule.error();
      extra = *rule;
    }
    return array_sequence(elements, extra, least, most);
  }

  // `least` to `most` elements: `fixed` first (the tuple), then copies of `extra`.
  std::string array_sequence(const std::vector<std::string>& fixed, const std::string& extra, uint64_t least,
                             std::optional<uint64_t> most) {
    use("space");
    const std::string next = fmt::format(R"(("," space {}))", extra);
    std::string items = join_nonempty(fixed, R"( "," space )");
    if (!extra.empty()) {
      const uint64_t required = least - fixed.size();
      const std::optional<uint64_t> optional = most ? std::optional<uint64_t>(*most - least) : std::nullopt;
      if (fixed.empty() && required == 0) {
        if (!optional || *optional > 0) {
          items =
              "(" +
              join_nonempty({extra, gbnf_repeat(next, 0, optional ? std::optional(*optional - 1) : optional)}, " ") +
              ")?";
        }
      } else {
        const std::string first = fixed.empty() ? extra : "";
        const uint64_t after = fixed.empty() ? required - 1 : required;
        items = join_nonempty(
            {items, first, gbnf_repeat(next, after, optional ? std::optional(after + *optional) : optional)}, " ");
      }
    }
    return join_nonempty({R"("[" space)", items, R"("]" space)"}, " ");
  }

  // --- rules and names

  std::string use(std::string_view name) {
    if (used_.insert(std::string(name)).second) {
      const auto it =
          std::find_if(kPrimitives.begin(), kPrimitives.end(), [&](const Primitive& p) { return p.name == name; });
      for (std::string_view dependency : it->uses) {
        if (!dependency.empty()) use(dependency);
      }
    }
    return std::string(name);
  }

  std::string add_rule(const std::string& hint, const std::string& rule_body) {
    if (const auto it = rule_of_body_.find(rule_body); it != rule_of_body_.end()) return it->second;
    std::string name = unique_name(hint);
    rules_.push_back({name, rule_body});
    rule_of_body_[rule_body] = name;
    return name;
  }

  std::string unique_name(std::string_view hint) {
    const std::string base = gbnf_rule_name(hint);
    std::string name = base;
    for (int n = 2; taken_.contains(name); ++n) name = fmt::format("{}-v{}", base, n);
    taken_.insert(name);
    return name;
  }

  // A rule name hint for a part of `hint`'s value; the root's parts go without the prefix.
  static std::string sub_hint(const std::string& hint, std::string_view part) {
    return hint == "root" ? std::string(part) : fmt::format("{}-{}", hint, part);
  }

  // A $ref cycle met before anything is matched would be left recursion: the matcher would never end.
  Status check_left_recursion() const {
    std::map<std::string, int> state;  // 1: on the path, 2: done
    for (const LeadingRef& edge : leading_refs_) {
      if (const LeadingRef* cycle = find_cycle(edge.from, state)) {
        return fail(
            "json_schema: the \"$ref\" at {} refers back to \"{}\" before anything is matched (left "
            "recursion)",
            schema_where(cycle->pointer), cycle->to);
      }
    }
    return {};
  }

  const LeadingRef* find_cycle(const std::string& ref, std::map<std::string, int>& state) const {
    if (state[ref] != 0) return nullptr;
    state[ref] = 1;
    for (const LeadingRef& edge : leading_refs_) {
      if (edge.from != ref) continue;
      if (state[edge.to] == 1) return &edge;
      if (const LeadingRef* cycle = find_cycle(edge.to, state)) return cycle;
    }
    state[ref] = 2;
    return nullptr;
  }

  const SchemaJson& root_;
  std::vector<Rule> rules_;  // in the order written; root first
  std::map<std::string, std::string> rule_of_body_;
  std::map<std::string, std::string> ref_rules_;  // "$ref" text -> rule
  std::set<std::string> taken_;
  std::set<std::string, std::less<>> used_;  // primitives
  std::vector<LeadingRef> leading_refs_;
  std::string owner_ = "#";   // the $ref whose rule is being converted
  bool after_token_ = false;  // whether the value being converted follows a token of its rule
  int depth_ = 0;
};

}  // namespace

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema) {
  try {
    return SchemaConverter(schema).convert();
  } catch (const nlohmann::json::exception& e) {  // e.g. a string that is not UTF-8
    return fail("json_schema: {}", e.what());
  }
}

Result<std::string> json_schema_to_gbnf(const nlohmann::json& schema) {
  return json_schema_to_gbnf(nlohmann::ordered_json(schema));
}

std::string json_object_gbnf() {
  auto grammar = json_schema_to_gbnf(nlohmann::ordered_json{{"type", "object"}});
  return grammar ? *grammar : std::string();
}

}  // namespace infertune
