# The server's request path: a body -> parse_request_body -> parse_completion_request; messages -> ChatTemplate.
# completion_request.cpp checks the sampling fields with validate() (sampling_params.cpp); the rest of the
# server (routes, serving loop, tokenizer) is left out.
infertune_fuzz_library(fuzz_server
  SOURCES engine/server/chat_template.cpp engine/server/completion_request.cpp engine/server/json_fields.cpp
          engine/sampling/sampling_params.cpp
  LIBS fmt::fmt nlohmann_json::nlohmann_json)

infertune_fuzzer(chat_template_fuzz fuzz_server)
infertune_fuzzer(completion_request_fuzz fuzz_server)
