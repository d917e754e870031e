# The sweep spec: YAML text or sweep flags -> SpecText -> resolve_spec; and loadgen's option values.
file(GLOB SPEC_SOURCES CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/sweeps/spec/*.cpp)
infertune_fuzz_library(fuzz_spec
  SOURCES ${SPEC_SOURCES} sweeps/store/stable_hash.cpp bench/loadgen/load_options.cpp
  LIBS fuzz_settings yaml-cpp nlohmann_json::nlohmann_json)

infertune_fuzzer(spec_yaml_fuzz fuzz_spec)
infertune_fuzzer(flag_values_fuzz fuzz_spec)
