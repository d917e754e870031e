# The server's request path: a body -> parse_request_body -> parse_completion_request; messages -> ChatTemplate.
# completion_request.cpp checks the sampling fields with validate() (sampling_params.cpp) and compiles a request's
# grammar, json_schema or response_format (output_constraint.cpp, with the grammar parser, matcher and JSON Schema
# converter); the rest of the server (routes, serving loop, tokenizer) is left out.
infertune_fuzz_library(fuzz_grammar
  SOURCES engine/grammar/gbnf_syntax.cpp engine/grammar/gbnf_text.cpp engine/grammar/grammar.cpp
          engine/grammar/grammar_matcher.cpp
          engine/grammar/json_schema_gbnf.cpp engine/grammar/json_schema_grammar.cpp
          engine/grammar/json_schema_keywords.cpp engine/grammar/json_schema_pattern.cpp engine/tokenizer/utf8.cpp
  LIBS fmt::fmt nlohmann_json::nlohmann_json)
infertune_fuzz_library(fuzz_server
  SOURCES engine/server/chat_template.cpp engine/server/completion_request.cpp engine/server/json_fields.cpp
          engine/server/harmony_split.cpp engine/server/output_constraint.cpp engine/server/reasoning_split.cpp
          engine/sampling/sampling_params.cpp
  LIBS fuzz_grammar fmt::fmt nlohmann_json::nlohmann_json)

infertune_fuzzer(chat_template_fuzz fuzz_server)
infertune_fuzzer(completion_request_fuzz fuzz_server)
infertune_fuzzer(grammar_fuzz fuzz_grammar)
