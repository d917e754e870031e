// JSON Schema -> GBNF: for each supported keyword, the grammar parses, takes valid documents (compact, and
// pretty-printed within the bounded whitespace) and refuses documents the schema forbids; integer ranges against
// arithmetic on every integer of a window; the any-value grammar against nlohmann's parser on random values and
// one-byte mutations of them; errors name the keyword and its JSON pointer.
#include "engine/grammar/json_schema_grammar.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"

namespace infertune {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json schema(std::string_view text) { return ordered_json::parse(text); }

// A grammar that accepts only the empty text, for tests that already failed.
Grammar nothing() { return *Grammar::parse("root ::= \"\""); }

Grammar grammar_of(const ordered_json& s) {
  auto gbnf = json_schema_to_gbnf(s);
  EXPECT_TRUE(gbnf) << s.dump() << "\n" << (gbnf ? "" : gbnf.error().message);
  if (!gbnf) return nothing();
  auto grammar = Grammar::parse(*gbnf);
  EXPECT_TRUE(grammar) << (grammar ? "" : grammar.error().message) << "\n" << *gbnf;
  return grammar ? std::move(*grammar) : nothing();
}

// Each valid text is also tried pretty-printed (two-space indentation, ": " after keys) unless `indented` is
// false (enum and const values match their compact text only).
void expect_language(const ordered_json& s, const std::vector<std::string>& valid,
                     const std::vector<std::string>& invalid, bool indented = true) {
  const Grammar g = grammar_of(s);
  for (const std::string& text : valid) {
    EXPECT_TRUE(grammar_accepts(g, text)) << s.dump() << "\nshould accept: " << text;
    if (!indented) continue;
    const std::string pretty = ordered_json::parse(text).dump(2) + "\n";
    EXPECT_TRUE(grammar_accepts(g, pretty)) << s.dump() << "\nshould accept: " << pretty;
  }
  for (const std::string& text : invalid) {
    EXPECT_FALSE(grammar_accepts(g, text)) << s.dump() << "\nshould refuse: " << text;
  }
}

std::string error_of(const ordered_json& s) {
  auto gbnf = json_schema_to_gbnf(s);
  EXPECT_FALSE(gbnf) << s.dump() << " converted to:\n" << (gbnf ? *gbnf : "");
  return gbnf ? "" : gbnf.error().message;
}

TEST(JsonSchemaGrammar, EmptySchemaAndTrueAcceptAnyJsonValue) {
  const std::vector<std::string> valid{"null",
                                       "true",
                                       "false",
                                       "0",
                                       "-0",
                                       "12",
                                       "-3.25",
                                       "1e5",
                                       "1E+5",
                                       "2.5e-3",
                                       R"("")",
                                       R"("a \"q\" \\ \/ \b\f\n\r\t")",
                                       R"("\u00e9\uD83D\uDE00")",
                                       "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"",
                                       "[]",
                                       "{}",
                                       R"([1,"a",[{}],{"k":null}])",
                                       R"({"a":{"b":[true,false]},"a":1})"};
  const std::vector<std::string> invalid{
      "",          "01",        "1.",    ".5",       "+1",       "1e",       "-",          "0x10", "NaN",
      "tru",       "nul",       "[1,]",  "[,1]",     "{\"a\"}",  "{a:1}",    "{\"a\":1,}", "'a'",  "\"abc",
      "\"\\x41\"", "\"\\u12\"", "[1 2]", "\"a\tb\"", "\"a\nb\"", "\"\x01\"", "1 2",        " 1",   "\"\\'\""};
  expect_language(schema("{}"), valid, invalid);
  expect_language(ordered_json(true), valid, invalid);
}

TEST(JsonSchemaGrammar, WhitespaceIsBounded) {
  const Grammar g = grammar_of(schema("{}"));
  EXPECT_TRUE(grammar_accepts(g, "[1, 2]"));
  EXPECT_TRUE(grammar_accepts(g, "[\n  1,\n  2\n]\n"));
  EXPECT_TRUE(grammar_accepts(g, "{\n\t\"a\" : 1\n}"));
  EXPECT_TRUE(grammar_accepts(g, "[1,\n" + std::string(20, ' ') + "2]"));
  EXPECT_FALSE(grammar_accepts(g, "[1,\n" + std::string(21, ' ') + "2]"));  // at most 20 indentation characters
  EXPECT_FALSE(grammar_accepts(g, "[1,  2]"));                              // one space
  EXPECT_FALSE(grammar_accepts(g, "[1,\n\n2]"));                            // one newline
  EXPECT_FALSE(grammar_accepts(g, "[1,\r\n2]"));
  EXPECT_FALSE(grammar_accepts(g, " [1]"));  // none before the value
}

TEST(JsonSchemaGrammar, JsonObjectGrammarAcceptsAnyObjectOnly) {
  auto grammar = Grammar::parse(json_object_gbnf());
  ASSERT_TRUE(grammar) << grammar.error().message;
  for (const char* text : {"{}", R"({"a":1})", R"({"a":[1,{"b":null}],"c":"d"})", "{\n  \"a\": true\n}"}) {
    EXPECT_TRUE(grammar_accepts(*grammar, text)) << text;
  }
  for (const char* text : {"[]", "1", "\"{}\"", "null", "{", "{\"a\":}", "{1:2}"}) {
    EXPECT_FALSE(grammar_accepts(*grammar, text)) << text;
  }
}

TEST(JsonSchemaGrammar, Types) {
  expect_language(schema(R"({"type":"string"})"), {R"("")", R"("x y")", R"("\u0041")"}, {"1", "null", "[]", "\"a"});
  expect_language(schema(R"({"type":"integer"})"), {"0", "-7"}, {"1.0", "1e3", "01", "-", "\"1\"", "true"});
  // 16 digits at most (as llama.cpp's grammar), so that a model cannot write digits forever.
  expect_language(schema(R"({"type":"integer"})"), {"1234567890123456", "-1234567890123456"},
                  {"12345678901234567", "123456789012345678901234"}, false);
  expect_language(schema(R"({"type":"number"})"), {"1.2345678901234567e+300", "0.1234567890123456", "1e-08"},
                  {"0.12345678901234567", "1e12345678901234567"}, false);
  expect_language(schema(R"({"type":"number"})"), {"0", "-7", "1.5", "-0.25e10", "3E-2"},
                  {"1.", "01", ".1", "\"1\"", "null", "1e"});
  expect_language(schema(R"({"type":"boolean"})"), {"true", "false"}, {"1", "\"true\"", "null", "True"});
  expect_language(schema(R"({"type":"null"})"), {"null"}, {"0", "\"null\"", "{}"});
  expect_language(schema(R"({"type":"object"})"), {"{}", R"({"a":[1]})"}, {"[]", "null"});
  expect_language(schema(R"({"type":"array"})"), {"[]", R"([1,"a",{}])"}, {"{}", "null"});
  expect_language(schema(R"({"type":["string","null"]})"), {R"("a")", "null"}, {"1", "[]", "false"});
  expect_language(schema(R"({"type":["integer","boolean"]})"), {"3", "true"}, {"3.5", "null", "\"3\""});
  expect_language(schema(R"({"type":["number","integer"]})"), {"3", "3.5"}, {"null"});
}

TEST(JsonSchemaGrammar, ObjectsPutRequiredThenOptionalInPropertiesOrder) {
  const ordered_json s = schema(R"({
    "type": "object",
    "properties": {"name": {"type": "string"}, "nick": {"type": "string"}, "age": {"type": "integer"},
                   "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["age", "name"]})");
  expect_language(s,
                  {R"({"name":"Ann","age":30})", R"({"name":"Ann","age":30,"nick":"A"})",
                   R"({"name":"Ann","age":30,"tags":["x"]})", R"({"name":"Ann","age":30,"nick":"A","tags":[]})"},
                  {R"({"age":30,"name":"Ann"})",                       // required ones in the order of properties
                   R"({"name":"Ann"})",                                // age is required
                   R"({"name":"Ann","age":30,"tags":[],"nick":"A"})",  // optional ones in order too
                   R"({"name":"Ann","age":30,"email":"a@b"})",         // no additionalProperties: no extra keys
                   R"({"name":"Ann","age":"30"})", R"({"name":"Ann","age":30,})", R"({"name":"Ann","age":30,"nick":1})",
                   R"({"name":"Ann","age":30,"nick":"A","nick":"B"})"});
  // With nlohmann::json the keys are sorted, and so is the grammar's order.
  const json sorted = json::parse(s.dump());
  auto gbnf = json_schema_to_gbnf(sorted);
  ASSERT_TRUE(gbnf) << gbnf.error().message;
  auto grammar = Grammar::parse(*gbnf);
  ASSERT_TRUE(grammar) << grammar.error().message;
  EXPECT_TRUE(grammar_accepts(*grammar, R"({"age":30,"name":"Ann","nick":"A"})"));
  EXPECT_FALSE(grammar_accepts(*grammar, R"({"name":"Ann","age":30})"));
}

TEST(JsonSchemaGrammar, ObjectsWithOnlyOptionalPropertiesPlaceCommasBetweenThePresentOnes) {
  const ordered_json s = schema(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"boolean"},
                                     "c":{"type":"null"}}})");
  expect_language(s,
                  {"{}", R"({"a":1})", R"({"b":true})", R"({"c":null})", R"({"a":1,"b":false})", R"({"a":1,"c":null})",
                   R"({"b":true,"c":null})", R"({"a":1,"b":true,"c":null})"},
                  {R"({,"b":true})", R"({"a":1,})", R"({"a":1,,"c":null})", R"({"b":true,"a":1})", R"({"a":1"b":true})",
                   R"({"d":1})"});
}

TEST(JsonSchemaGrammar, AdditionalPropertiesFalseAllowsOnlyTheListedKeys) {
  expect_language(schema(R"({"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false})"),
                  {"{}", R"({"a":"x"})"}, {R"({"b":"x"})", R"({"a":"x","b":1})"});
  expect_language(schema(R"({"type":"object","additionalProperties":false})"), {"{}"}, {R"({"a":1})"});
  // A property whose schema is false must be absent.
  expect_language(schema(R"({"properties":{"a":{"type":"integer"},"b":false},"additionalProperties":true})"),
                  {R"({"a":1})", R"({"a":1,"c":2})"}, {R"({"b":1})", R"({"a":1,"b":1})"});
}

TEST(JsonSchemaGrammar, AdditionalPropertiesSchemaTypesTheExtraValuesAfterTheListedKeys) {
  const ordered_json s = schema(R"({"type":"object","properties":{"id":{"type":"integer"},"ab":{"type":"integer"}},
                                     "required":["id"],"additionalProperties":{"type":"string"}})");
  expect_language(s,
                  {R"({"id":1})", R"({"id":1,"x":"y"})", R"({"id":1,"ab":2,"x":"y","z":""})", R"({"id":1,"a":"p"})",
                   R"({"id":1,"abc":"p"})", R"({"id":1,"i":"p"})", R"({"id":1,"idx":"p"})"},
                  {R"({"id":1,"x":2})",                             // extra values are strings
                   R"({"id":1,"x":"y","ab":2})",                    // listed keys first
                   R"({"id":1,"ab":"s"})", R"({"id":1,"id":"s"})",  // a listed key never comes back as an extra one
                   R"({"x":"y"})"});
  // Without properties, additionalProperties types every value.
  expect_language(schema(R"({"type":"object","additionalProperties":{"type":"integer"}})"),
                  {"{}", R"({"a":1})", R"({"a":1,"b":-2})"}, {R"({"a":"1"})", R"({"a":1,"b":null})"});
  // true: any extra values, still never a listed key.
  expect_language(schema(R"({"properties":{"n":{"type":"integer"}},"additionalProperties":true})"),
                  {R"({"n":1,"m":[null]})", R"({"m":{}})"}, {R"({"n":"x"})", R"({"m":1,"n":1})"});
}

TEST(JsonSchemaGrammar, RequiredNamesOutsidePropertiesTakeTheAdditionalSchema) {
  expect_language(schema(R"({"type":"object","required":["k"]})"), {R"({"k":1})", R"({"k":"v","x":2})"},
                  {"{}", R"({"x":2})"});
  expect_language(schema(R"({"properties":{"a":{"type":"integer"}},"required":["b"],
                              "additionalProperties":{"type":"boolean"}})"),
                  {R"({"b":true})", R"({"b":false,"a":1})"}, {R"({"b":1})", R"({"a":1})"});
}

TEST(JsonSchemaGrammar, ArrayItemsAndCounts) {
  expect_language(schema(R"({"type":"array","items":{"type":"integer"}})"), {"[]", "[1]", "[1,2,3]"},
                  {R"(["1"])", "[1,]", "[1,null]"});
  expect_language(schema(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})"),
                  {"[1,2]", "[1,2,3]"}, {"[]", "[1]", "[1,2,3,4]"});
  expect_language(schema(R"({"type":"array","minItems":1})"), {"[null]", R"([1,"a"])"}, {"[]"});
  expect_language(schema(R"({"type":"array","maxItems":1})"), {"[]", "[{}]"}, {"[1,2]"});
  expect_language(schema(R"({"type":"array","maxItems":0})"), {"[]"}, {"[1]"});
  expect_language(schema(R"({"type":"array","items":false})"), {"[]"}, {"[1]"});
  expect_language(schema(R"({"items":{"type":"array","items":{"type":"boolean"},"minItems":1}})"),
                  {"[]", "[[true],[false,true]]"}, {"[[]]", "[true]", "{}"});
}

TEST(JsonSchemaGrammar, PrefixItemsAreTuples) {
  expect_language(schema(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]})"), {R"(["a",1])"},
                  {R"(["a"])", R"([1,"a"])", R"(["a",1,2])", "[]"});
  expect_language(
      schema(R"({"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"},"maxItems":3})"),
      {R"(["a"])", R"(["a",1])", R"(["a",1,2])"}, {R"(["a",1,2,3])", R"(["a","b"])", "[1]"});
  expect_language(schema(R"({"prefixItems":[{"type":"null"},{"type":"null"},{"type":"null"}],"maxItems":2})"),
                  {"[null,null]"}, {"[null,null,null]", "[null]"});
  expect_language(schema(R"({"prefixItems":[{"type":"null"}],"minItems":3})"),  // minItems asks for more items
                  {"[null,1,2]", R"([null,"a",{},[]])"}, {"[null,1]", "[1,2,3]"});
  // Draft 4-7 tuples: items as an array, additionalItems for the rest.
  expect_language(schema(R"({"items":[{"type":"boolean"}],"additionalItems":{"type":"null"}})"),
                  {"[true]", "[false,null,null]"}, {"[true,1]", "[null]"});
}

TEST(JsonSchemaGrammar, StringLengths) {
  expect_language(schema(R"({"type":"string","minLength":2,"maxLength":4})"),
                  {R"("ab")", R"("abcd")", R"("\n\"")", "\"\xC3\xA9\xE2\x82\xAC\""}, {R"("a")", R"("abcde")", R"(ab)"});
  expect_language(schema(R"({"type":"string","minLength":3})"), {R"("abc")", R"("abcdefgh")"}, {R"("ab")"});
  expect_language(schema(R"({"type":"string","maxLength":0})"), {R"("")"}, {R"("a")"});
  // Counts beyond the GBNF parser's 10000 are split into blocks.
  const struct {
    const char* schema;
    size_t low, high;
  } large[] = {{R"({"type":"string","minLength":10001,"maxLength":12345})", 10001, 12345},
               {R"({"type":"string","maxLength":12345})", 0, 12345},
               {R"({"type":"string","minLength":10500})", 10500, SIZE_MAX}};
  for (const auto& c : large) {
    const Grammar g = grammar_of(schema(c.schema));
    for (size_t n : {0, 999, 1000, 10000, 10001, 10499, 10500, 11000, 11999, 12000, 12345, 12346, 13000}) {
      EXPECT_EQ(grammar_accepts(g, "\"" + std::string(n, 'x') + "\""), n >= c.low && n <= c.high) << c.schema << n;
    }
  }
}

TEST(JsonSchemaGrammar, EnumAndConstMatchTheExactCompactText) {
  expect_language(schema(R"({"enum":["red","green",1,null,[1,2],{"k":"v"}]})"),
                  {R"("red")", R"("green")", "1", "null", "[1,2]", R"({"k":"v"})", "\"red\" "},
                  {R"("blue")", "2", "1.0", "[1, 2]", "[2,1]", R"({"k":"w"})", "\"Red\""}, false);
  expect_language(schema(R"({"const":"fixed"})"), {R"("fixed")"}, {R"("other")", "null"}, false);
  expect_language(schema(R"({"const":{"a":[true]}})"), {R"({"a":[true]})"}, {R"({"a":[false]})"}, false);
  // `type` alongside filters the values.
  expect_language(schema(R"({"type":"string","enum":["a","b",3]})"), {R"("a")", R"("b")"}, {"3"}, false);
  expect_language(schema(R"({"type":"integer","enum":[1,1.5,2.0]})"), {"1", "2.0"}, {"1.5"}, false);
  // Escapes and non-ASCII characters in values.
  expect_language(ordered_json{{"enum", {"say \"hi\"\n", "caf\xC3\xA9"}}}, {R"("say \"hi\"\n")", "\"caf\xC3\xA9\""},
                  {"\"cafe\""}, false);
}

TEST(JsonSchemaGrammar, Formats) {
  expect_language(schema(R"({"type":"string","format":"date"})"), {R"("2024-02-29")", R"("1999-12-31")"},
                  {R"("2024-13-01")", R"("2024-00-10")", R"("2024-01-32")", R"("24-01-01")", R"("2024-1-01")"});
  expect_language(schema(R"({"type":"string","format":"time"})"),
                  {R"("23:59:59Z")", R"("00:00:00.5+05:30")", R"("12:30:00-08:00")"},
                  {R"("24:00:00Z")", R"("12:60:00Z")", R"("12:30:00")", R"("12:30Z")"});
  expect_language(schema(R"({"type":"string","format":"date-time"})"),
                  {R"("2024-06-01T12:30:00Z")", R"("2024-06-01T12:30:00.123+02:00")"},
                  {R"("2024-06-01 12:30:00Z")", R"("2024-06-01")", R"("2024-06-01T25:00:00Z")"});
  expect_language(schema(R"({"type":"string","format":"uuid"})"), {R"("123e4567-e89b-12d3-a456-426614174000")"},
                  {R"("123e4567e89b12d3a456426614174000")", R"("123e4567-e89b-12d3-a456-42661417400g")"});
  // Other formats are annotations: any string.
  expect_language(schema(R"({"type":"string","format":"email"})"), {R"("not an email")"}, {"1"});
}

TEST(JsonSchemaGrammar, IntegerBoundsAreExactRanges) {
  struct Bounds {
    const char* schema;
    std::optional<int> low, high;
  };
  const std::vector<Bounds> cases{
      {R"({"type":"integer","minimum":0})", 0, std::nullopt},
      {R"({"type":"integer","minimum":1,"maximum":100})", 1, 100},
      {R"({"type":"integer","minimum":-15,"exclusiveMaximum":7})", -15, 6},
      {R"({"type":"integer","exclusiveMinimum":-1000})", -999, std::nullopt},
      {R"({"type":"integer","maximum":-10})", std::nullopt, -10},
      {R"({"type":"integer","minimum":-345,"maximum":-12})", -345, -12},
      {R"({"type":"integer","minimum":97,"maximum":1003})", 97, 1003},
      {R"({"type":"integer","minimum":0.5,"maximum":9.5})", 1, 9},
      {R"({"type":"integer","minimum":5,"exclusiveMinimum":true,"maximum":8,"exclusiveMaximum":true})", 6, 7},
      {R"({"type":"integer","minimum":7,"maximum":7})", 7, 7},
  };
  for (const Bounds& c : cases) {
    const Grammar g = grammar_of(schema(c.schema));
    for (int n = -1100; n <= 1100; ++n) {
      const bool inside = (!c.low || n >= *c.low) && (!c.high || n <= *c.high);
      ASSERT_EQ(grammar_accepts(g, std::to_string(n)), inside) << c.schema << " " << n;
    }
    EXPECT_FALSE(grammar_accepts(g, "-0")) << c.schema;
    EXPECT_FALSE(grammar_accepts(g, "007")) << c.schema;
    EXPECT_EQ(grammar_accepts(g, "123456789012"), !c.high) << c.schema;
    EXPECT_EQ(grammar_accepts(g, "-123456789012"), !c.low) << c.schema;
  }
  const Grammar wide = grammar_of(schema(R"({"type":"integer","minimum":-1000000000000000000,
                                                               "maximum":1000000000000000000})"));
  EXPECT_TRUE(grammar_accepts(wide, "1000000000000000000"));
  EXPECT_TRUE(grammar_accepts(wide, "-999999999999999999"));
  EXPECT_FALSE(grammar_accepts(wide, "1000000000000000001"));
  EXPECT_FALSE(grammar_accepts(wide, "-1000000000000000001"));
}

TEST(JsonSchemaGrammar, AnyOfAndOneOfAreAlternatives) {
  expect_language(schema(R"({"anyOf":[{"type":"string","maxLength":2},{"type":"integer"}]})"), {R"("ab")", "12"},
                  {R"("abc")", "1.5", "null"});
  expect_language(schema(R"({"oneOf":[{"type":"boolean"},{"type":"null"}]})"), {"true", "null"}, {"0"});
  // Keywords beside anyOf hold for every alternative.
  expect_language(schema(R"({"anyOf":[{"type":"string"},{"type":"array"}],"maxItems":1,"maxLength":1})"),
                  {R"("a")", "[]", "[1]"}, {R"("ab")", "[1,2]"});
  // The Optional[...] pydantic writes.
  expect_language(schema(R"({"properties":{"x":{"anyOf":[{"type":"integer"},{"type":"null"}],"default":null,
                                                   "title":"X"}}})"),
                  {"{}", R"({"x":null})", R"({"x":3})"}, {R"({"x":"3"})"});
}

TEST(JsonSchemaGrammar, AllOfMergesPropertiesRequiredAndTypes) {
  expect_language(schema(R"({"allOf":[{"$ref":"#/$defs/Base"},
                                      {"properties":{"b":{"type":"string"}},"required":["b"]}],
                             "$defs":{"Base":{"type":"object","properties":{"a":{"type":"integer"}},
                                              "required":["a"]}}})"),
                  {R"({"a":1,"b":"x"})"}, {R"({"a":1})", R"({"b":"x"})", R"({"b":"x","a":1})"});
  expect_language(schema(R"({"allOf":[{"type":["integer","string"]},{"type":["number","null"]}]})"), {"3"},
                  {"3.5", "null", R"("a")"});
  // The same property in two parts: both schemas hold.
  expect_language(schema(R"({"allOf":[{"properties":{"s":{"type":"string"}},"required":["s"]},
                                      {"properties":{"s":{"maxLength":2}}}]})"),
                  {R"({"s":"ab"})"}, {R"({"s":"abc"})", R"({"s":1})"});
  // $ref with sibling keywords is an allOf.
  expect_language(schema(R"({"$ref":"#/$defs/S","maxLength":2,"$defs":{"S":{"type":"string"}}})"), {R"("ab")"},
                  {R"("abc")", "1"});
}

TEST(JsonSchemaGrammar, RefsToDefinitionsAndRecursiveSchemas) {
  expect_language(schema(R"({"type":"object","properties":{"home":{"$ref":"#/definitions/Address"},
                                                            "work":{"$ref":"#/$defs/Address"}},
                             "definitions":{"Address":{"type":"object","properties":{"city":{"type":"string"}},
                                                       "required":["city"]}},
                             "$defs":{"Address":{"type":"string"}}})"),
                  {R"({"home":{"city":"Oslo"},"work":"Main St"})"}, {R"({"home":"Oslo"})", R"({"work":{"city":"x"}})"});
  // A tree through "#": recursion is by rule reference.
  const ordered_json tree = schema(R"({"type":"object","properties":{"value":{"type":"integer"},
                                         "children":{"type":"array","items":{"$ref":"#"}}},"required":["value"]})");
  expect_language(
      tree,
      {R"({"value":1})", R"({"value":1,"children":[]})",
       R"({"value":1,"children":[{"value":2,"children":[{"value":3,"children":[{"value":4}]}]},{"value":5}]})"},
      {R"({"value":1,"children":[{"children":[]}]})", R"({"value":1,"children":[1]})"});
  // A linked list through $defs, and mutual recursion.
  expect_language(schema(R"({"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{
                               "next":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}},"required":["next"]}}})"),
                  {R"({"next":null})", R"({"next":{"next":{"next":null}}})"}, {R"({"next":{}})", "null"});
  expect_language(schema(R"({"$ref":"#/$defs/A","$defs":{"A":{"type":"array","items":{"$ref":"#/$defs/B"}},
                                                         "B":{"anyOf":[{"type":"integer"},{"$ref":"#/$defs/A"}]}}})"),
                  {"[]", "[1,[2,[]],3]"}, {"[[\"x\"]]", "1"});
}

TEST(JsonSchemaGrammar, AnnotationsAreIgnored) {
  const ordered_json plain = schema(R"({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]})");
  const ordered_json annotated = schema(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x",
      "title":"T","description":"D","$comment":"c","type":"object","examples":[{"a":"b"}],"default":{"a":""},
      "properties":{"a":{"type":"string","deprecated":true,"readOnly":false,"writeOnly":false,"nullable":true,
                         "x-vendor":1}},"required":["a"]})");
  auto a = json_schema_to_gbnf(plain);
  auto b = json_schema_to_gbnf(annotated);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*a, *b);
}

TEST(JsonSchemaGrammar, RuleNamesAreValidUniqueAndDeterministic) {
  const ordered_json s = schema(R"({"type":"object","properties":{
      "first_name":{"type":"string","maxLength":3}, "first-name":{"type":"string","maxLength":4},
      "first name":{"type":"string","maxLength":5}, "a-1":{"type":"integer","minimum":1},
      "\u00e9t\u00e9":{"type":"integer","minimum":2}, "":{"type":"integer","minimum":3},
      "space":{"type":"integer","minimum":4}, "root":{"type":"integer","minimum":5}},
      "required":["first_name","first-name","first name","a-1","\u00e9t\u00e9","","space","root"]})");
  auto gbnf = json_schema_to_gbnf(s);
  ASSERT_TRUE(gbnf) << gbnf.error().message;
  EXPECT_EQ(*gbnf, *json_schema_to_gbnf(s));
  EXPECT_NE(gbnf->find("first-name-kv ::="), std::string::npos) << *gbnf;
  std::set<std::string> names;
  for (size_t line = 0; line < gbnf->size(); line = gbnf->find('\n', line) + 1) {
    const std::string name = gbnf->substr(line, gbnf->find(" ::= ", line) - line);
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"),
              std::string::npos)
        << name;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  const auto document = [](std::string_view first, int empty) {
    return fmt::format(
        "{{\"first_name\":\"{}\",\"first-name\":\"abcd\",\"first name\":\"abcde\",\"a-1\":1,"
        "\"\xC3\xA9t\xC3\xA9\":2,\"\":{},\"space\":4,\"root\":5}}",
        first, empty);
  };
  expect_language(s, {document("abc", 3)}, {document("abcd", 3), document("abc", 2)});
}

TEST(JsonSchemaPattern, TranslatesTheRegexSubset) {
  const auto pattern = [](std::string_view regex) { return ordered_json{{"type", "string"}, {"pattern", regex}}; };
  expect_language(pattern(R"(^\d{3}-\d{4}$)"), {R"("555-1234")"}, {R"("5555-1234")", R"("555-123")", R"("abc-defg")"});
  expect_language(pattern("cat"), {R"("cat")", R"("concatenate")", R"("a \"cat\"")"}, {R"("dog")", R"("ca t")"});
  expect_language(pattern("^a.c$"),
                  {R"("abc")", R"("a\"c")", R"("a c")",
                   "\"a\xE2\x82\xAC"
                   "c\""},
                  {R"("a\nc")", R"("ac")", R"("abbc")"});
  expect_language(pattern("^[^0-9]+$"), {R"("abc")", R"("a\\b")", R"("x\ty")"}, {R"("ab1")", R"("")"});
  expect_language(pattern("^(ab)+$"), {R"("ab")", R"("abab")"}, {R"("aba")", R"("")"});
  expect_language(pattern("^x{2,3}$"), {R"("xx")", R"("xxx")"}, {R"("x")", R"("xxxx")"});
  expect_language(pattern("^x{2,}y?$"), {R"("xx")", R"("xxxxy")"}, {R"("xy")"});
  expect_language(pattern(R"(^[\w.-]+@[\w-]+\.[a-z]{2,}$)"), {R"("a.b@c-d.io")", R"("x_1@y.com")"},
                  {R"("a@b")", R"("a b@c.io")", R"("a@b.c")"});
  expect_language(pattern(R"(^\s*$)"), {R"("")", R"("  ")", R"("\t\n")"}, {R"(" x ")"});
  expect_language(pattern(R"(^\S+$)"), {R"("x\"y")"}, {R"("x y")", R"("x\ty")"});
  expect_language(pattern("^(?:red|green)(?<n>[0-9])?$"), {R"("red")", R"("green7")"}, {R"("blue")", R"("red77")"});
  expect_language(pattern("^a+?b*?$"), {R"("a")", R"("aab")"}, {R"("b")"});
  expect_language(pattern("^a\"b\\\\c$"), {R"("a\"b\\c")"}, {R"("a\"bc")", R"("ab\\c")"});
  expect_language(pattern("^\xC3\xA9+$"), {"\"\xC3\xA9\xC3\xA9\""}, {R"("e")"});
  expect_language(pattern(R"(^\u00e9\x41$)"),
                  {"\"\xC3\xA9"
                   "A\""},
                  {R"("eA")"});
  expect_language(pattern(R"(^([a-c\d]{2}|[xyz])$)"), {R"("a7")", R"("y")"}, {R"("ad")", R"("a7y")"});
}

// Every string up to four characters over an alphabet with the characters JSON escapes: the grammar takes the
// JSON text of exactly those that std::regex (ECMAScript, as JSON Schema's patterns) finds a match in.
TEST(JsonSchemaPattern, AgreesWithStdRegexOnEveryShortString) {
  constexpr std::string_view kAlphabet = "ab1 \"\\\n";
  std::vector<std::string> strings{""};
  for (size_t from = 0; strings.back().size() < 4;) {
    const size_t to = strings.size();
    for (size_t i = from; i < to; ++i) {
      for (char c : kAlphabet) strings.push_back(strings[i] + c);
    }
    from = to;
  }
  for (const char* regex : {"",           "^$",           "a",           "^a*b$",         "ab|1",
                            "^(a|b)+1?$", "[^a]",         "^[^a]+$",     R"(^\d?b{2,}$)", R"(\s)",
                            R"(^\S*$)",   "^.+$",         "a.b",         R"(^\w{1,3}$)",  "^\"",
                            R"(\\)",      "^(?:ab)*$",    "^[\"\\\\]+$", R"(^[^\\"]*$)",  R"(^[\s\S]{2}$)",
                            "b$",         R"(^(a|)\n?$)", "^[ -a]+$",    R"(^\D\W$)"}) {
    const Grammar g = grammar_of(ordered_json{{"type", "string"}, {"pattern", regex}});
    const std::regex re(regex, std::regex::ECMAScript);
    for (const std::string& text : strings) {
      ASSERT_EQ(grammar_accepts(g, json(text).dump()), std::regex_search(text, re))
          << "pattern " << regex << ", string " << json(text).dump();
    }
  }
}

TEST(JsonSchemaPattern, RefusesWhatItCannotTranslate) {
  for (const char* regex : {"(?=a)b", "(?!a)b", "(?<=a)b", R"((a)\1)", R"(\bword)", "^a|b$", "a^b", "a$b", "[abc",
                            "(ab", "ab)", "*a", "a**", R"(\p{L})", "a{3,2}", "[z-a]", R"(\)"}) {
    const std::string message = error_of(ordered_json{{"properties", {{"code", {{"pattern", regex}}}}}});
    EXPECT_NE(message.find(R"("pattern" at /properties/code is not supported)"), std::string::npos)
        << regex << ": " << message;
  }
}

TEST(JsonSchemaErrors, NameTheKeywordAndItsPointer) {
  EXPECT_EQ(error_of(schema(R"({"type":"object","properties":{"n":{"type":"number","multipleOf":2}}})")),
            R"(json_schema: "multipleOf" at /properties/n is not supported)");
  EXPECT_EQ(error_of(schema(R"({"not":{"type":"string"}})")), R"(json_schema: "not" at the root is not supported)");
  const std::vector<std::pair<const char*, const char*>> cases{
      {R"({"properties":{"age":{"type":"number","minimum":0}}})", R"("minimum" at /properties/age is not supported)"},
      {R"({"properties":{"tags":{"type":"array","uniqueItems":true}}})",
       R"("uniqueItems" at /properties/tags is not supported)"},
      {R"({"items":{"contains":{"type":"integer"}}})", R"("contains" at /items is not supported)"},
      {R"({"patternProperties":{"^x":{}}})", R"("patternProperties" at the root is not supported)"},
      {R"({"if":{},"then":{}})", R"("if" at the root is not supported)"},
      {R"({"type":"object","minProperties":1})", R"("minProperties" at the root is not supported)"},
      {R"({"properties":{"a":{"$ref":"#/$defs/missing"}}})", R"("$ref" "#/$defs/missing" at /properties/a/$ref)"},
      {R"({"$ref":"https://example.com/s.json"})", R"("$ref" at /$ref is not supported)"},
      {R"({"$ref":5})", R"("$ref" at /$ref must be a string)"},
      {R"({"properties":{"a":5}})", "the schema at /properties/a must be an object or a boolean"},
      {R"({"properties":{"a":{"items":"x"}}})", R"("items" at /properties/a must be a schema)"},
      {R"({"required":["a",1]})", R"("required" at /required/1 must name properties as strings)"},
      {R"({"properties":[]})", R"("properties" at the root must be an object)"},
      {R"({"type":"strin"})", R"("type" at the root must be one of)"},
      {R"({"properties":{"x":{"type":["string",3]}}})", R"("type" at /properties/x must be one of)"},
      {R"({"anyOf":[]})", R"("anyOf" at the root must be a non-empty array)"},
      {R"({"enum":[]})", R"("enum" at the root must be a non-empty array)"},
      {R"({"type":"string","maxLength":-1})", R"("maxLength" at the root must be a non-negative integer)"},
      {R"({"type":"string","minLength":5,"maxLength":2})", "above \"maxLength\" at the root"},
      {R"({"type":"integer","minimum":5,"maximum":2})", "no integer is within the bounds at the root"},
      {R"({"type":"array","minItems":3,"maxItems":2})", "no array fits the item counts at the root"},
      {R"({"type":"string","maxLength":2000000})", R"("maxLength" at the root is 2000000)"},
      {R"({"type":"integer","minimum":1e30})", R"("minimum" at the root is not supported)"},
      {R"({"allOf":[{"type":"string","maxLength":3},{"maxLength":4}]})", R"(parts' "maxLength" differ)"},
      {R"({"allOf":[{"type":"string"},{"type":"integer"}]})", "types have nothing in common"},
      {R"({"allOf":[{"properties":{"a":{}},"additionalProperties":false},{"properties":{"b":{}}}]})",
       R"(would refuse property "b")"},
      {R"({"required":["a"],"properties":{"a":false}})", R"(required property "a" at the root is false)"},
      {R"({"enum":[1,2],"type":"string"})", R"(no value of "enum"/"const" at the root)"},
      {R"({"enum":["a"],"maxLength":3})", R"("maxLength" at the root is not supported alongside "enum")"},
      {R"({"type":"string","pattern":"^a$","maxLength":3})", R"("maxLength" at the root is not supported together)"},
      {"5", "the schema at the root must be an object or a boolean, got number"},
      {"false", "the schema at the root is false"},
  };
  for (const auto& [s, expected] : cases) {
    const std::string message = error_of(schema(s));
    EXPECT_EQ(message.rfind("json_schema: ", 0), 0u) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << s << "\n  gave: " << message << "\n  want: " << expected;
  }
}

TEST(JsonSchemaErrors, RefsThatRecurseBeforeMatchingAnythingAreRefused) {
  for (const char* s : {R"({"$ref":"#"})", R"({"anyOf":[{"$ref":"#"},{"type":"null"}]})",
                        R"({"$ref":"#/$defs/A","$defs":{"A":{"$ref":"#/$defs/A"}}})",
                        R"({"$ref":"#/$defs/A","$defs":{"A":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/B"}]},
                                                        "B":{"$ref":"#/$defs/A"}}})",
                        R"({"anyOf":[{"type":"array","items":{"$ref":"#/$defs/B"}},{"$ref":"#/$defs/B"}],
                            "$defs":{"B":{"anyOf":[{"$ref":"#"},{"type":"null"}]}}})"}) {
    const std::string message = error_of(schema(s));
    EXPECT_NE(message.find("before anything is matched"), std::string::npos) << s << ": " << message;
  }
  // Inlined (a $ref with siblings, allOf) cycles end at the depth limit instead.
  for (const char* s : {R"({"$ref":"#","minLength":1})", R"({"allOf":[{"$ref":"#"}]})"}) {
    EXPECT_NE(error_of(schema(s)).find("too deeply"), std::string::npos) << s;
  }
}

TEST(JsonSchemaErrors, TextThatIsNotUtf8IsAnErrorNotAnException) {
  EXPECT_NE(error_of(ordered_json{{"enum", {std::string("\xFF\xFE")}}}).find("UTF-8"), std::string::npos);
  EXPECT_NE(error_of(ordered_json{{"properties", {{std::string("a\xC3"), {{"type", "string"}}}}}}).find("UTF-8"),
            std::string::npos);
}

TEST(JsonSchemaErrors, DeepSchemasAreRefusedWithoutExhaustingTheStack) {
  ordered_json deep = ordered_json::object();
  for (int i = 0; i < 2000; ++i) deep = ordered_json{{"type", "array"}, {"items", std::move(deep)}};
  EXPECT_NE(error_of(deep).find("nests too deeply"), std::string::npos);
}

// A random JSON value: nested arrays and objects, strings with escapes, control characters and non-ASCII
// characters, integers and doubles of every size.
class RandomJson {
 public:
  explicit RandomJson(uint32_t seed) : rng_(seed) {}

  json value(int depth) {
    switch (pick(depth < 4 ? 8 : 6)) {
      case 0:
        return nullptr;
      case 1:
        return pick(2) == 1;
      case 2:
        return std::uniform_int_distribution<int64_t>(INT64_MIN, INT64_MAX)(rng_) >> pick(64);
      case 3:
        return static_cast<double>(std::uniform_int_distribution<int64_t>(-1'000'000, 1'000'000)(rng_)) / 100.0;
      case 4:
        return std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng_), static_cast<int>(pick(2000)) - 1000);
      case 5:
        return text();
      case 6: {
        json array = json::array();
        for (uint32_t i = pick(5); i > 0; --i) array.push_back(value(depth + 1));
        return array;
      }
      default: {
        json object = json::object();
        for (uint32_t i = pick(5); i > 0; --i) object[text()] = value(depth + 1);
        return object;
      }
    }
  }

  uint32_t pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }

 private:
  std::string text() {
    static constexpr char32_t kPool[] = {U'a',  U'z', U'Q', U'0', U' ', U'"',   U'\\',  U'/',    U'\n', U'\t',
                                         U'\b', 1,    0x1F, 0x7F, 0xE9, 0x20AC, 0x2028, 0x1F600, U'{',  U':'};
    std::u32string chars;
    for (uint32_t i = pick(8); i > 0; --i) chars += kPool[pick(std::size(kPool))];
    std::string out;
    for (char32_t c : chars) {
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if (c < 0x800) {
        out += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
      } else if (c < 0x10000) {
        out += {static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                static_cast<char>(0x80 | (c & 0x3F))};
      } else {
        out += {static_cast<char>(0xF0 | (c >> 18)), static_cast<char>(0x80 | ((c >> 12) & 0x3F)),
                static_cast<char>(0x80 | ((c >> 6) & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
      }
    }
    return out;
  }

  std::mt19937 rng_;
};

// nlohmann's verdict on a text: valid, invalid, or nullopt for a number beyond a double (whose syntax nlohmann
// stops checking at).
std::optional<bool> nlohmann_verdict(const std::string& text) {
  try {
    return !json::parse(text).is_discarded();
  } catch (const json::parse_error&) {
    return false;
  } catch (const json::out_of_range&) {
    return std::nullopt;
  }
}

// More than 16 digits in a row: JSON, but past what the grammar lets a number have (see "integral-part").
bool has_long_digit_run(const std::string& text) {
  size_t run = 0;
  for (char c : text) {
    run = c >= '0' && c <= '9' ? run + 1 : 0;
    if (run > 16) return true;
  }
  return false;
}

TEST(JsonSchemaProperty, AnyValueGrammarAgreesWithNlohmannOnRandomValuesAndMutations) {
  const Grammar g = grammar_of(schema("{}"));
  RandomJson random(20240601);
  int compared_valid = 0, compared_invalid = 0;
  for (int i = 0; i < 400; ++i) {
    const json value = random.value(0);
    const std::string text = value.dump();
    if (has_long_digit_run(text)) continue;
    ASSERT_TRUE(grammar_accepts(g, text)) << text;
    ASSERT_TRUE(grammar_accepts(g, value.dump(1))) << value.dump(1);
    for (int m = 0; m < 4; ++m) {
      std::string mutated = text;
      const size_t at = random.pick(static_cast<uint32_t>(text.size()));
      if (static_cast<unsigned char>(text[at]) >= 0x80) continue;  // keep the text UTF-8
      mutated[at] = static_cast<char>(1 + random.pick(0x7F));      // not NUL: nlohmann reads it as the end
      if (mutated == text) continue;
      const std::optional<bool> verdict = nlohmann_verdict(mutated);
      if (!verdict) continue;
      // nlohmann takes any amount of whitespace anywhere; the grammar a bounded amount between tokens only.
      const bool whitespace = mutated.find_first_of(" \t\n\r") != std::string::npos;
      if (*verdict && (whitespace || has_long_digit_run(mutated))) continue;
      ASSERT_EQ(grammar_accepts(g, mutated), *verdict) << "original: " << text << "\nmutated:  " << mutated;
      ++(*verdict ? compared_valid : compared_invalid);
    }
  }
  EXPECT_GT(compared_valid, 50);
  EXPECT_GT(compared_invalid, 500);
}

}  // namespace
}  // namespace infertune
