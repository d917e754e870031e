# Run with cmake -P at build time by the infertune_version_header target (see git_version.cmake).
execute_process(
  COMMAND git -C ${SOURCE_DIR} describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT GIT_COMMIT)
  set(GIT_COMMIT "unknown")
endif()
# llama.cpp's build number is the same count (bench's build_number field).
execute_process(
  COMMAND git -C ${SOURCE_DIR} rev-list --count HEAD
  OUTPUT_VARIABLE BUILD_NUMBER OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT BUILD_NUMBER MATCHES "^[0-9]+$")
  set(BUILD_NUMBER 0)
endif()
set(text "#pragma once
// Generated at build time by cmake/write_version.cmake.
#define INFERTUNE_VERSION \"${VERSION}\"
#define INFERTUNE_GIT_COMMIT \"${GIT_COMMIT}\"
#define INFERTUNE_BUILD_NUMBER ${BUILD_NUMBER}
#define INFERTUNE_BUILD_TYPE \"${BUILD_TYPE}\"
#define INFERTUNE_COMPILER \"${COMPILER}\"
")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
