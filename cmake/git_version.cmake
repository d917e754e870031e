# generated/infertune_version.h carries the project version and the git commit of the source tree. It is
# regenerated on every build (cmake/write_version.cmake rewrites it only when the text changes), so a new
# commit shows up in `infertune --version` without re-running configure.
set(INFERTUNE_VERSION_HEADER ${CMAKE_BINARY_DIR}/generated/infertune_version.h)
add_custom_target(infertune_version_header ALL
  COMMAND ${CMAKE_COMMAND}
    -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${INFERTUNE_VERSION_HEADER}
    -DVERSION=${PROJECT_VERSION} -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
    "-DCOMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
    -P ${CMAKE_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${INFERTUNE_VERSION_HEADER}
  COMMENT "Checking the git commit for infertune --version")
