# Run with cmake -P at build time by the infertune_version_header target (see git_version.cmake).
execute_process(
  COMMAND git -C ${SOURCE_DIR} describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT GIT_COMMIT)
  set(GIT_COMMIT "unknown")
endif()
set(text "#pragma once
// Generated at build time by cmake/write_version.cmake.
#define INFERTUNE_VERSION \"${VERSION}\"
#define INFERTUNE_GIT_COMMIT \"${GIT_COMMIT}\"
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
