# Writes harness's build_info.hpp at build time (not configure time), so the git commit a
# binary reports is the one it was built from, with "-dirty" when the tree had uncommitted
# changes to tracked files. configure_file rewrites the header only when its text changes, so an
# unchanged commit rebuilds nothing.
#   cmake -DSOURCE_DIR=... -DINPUT=... -DOUTPUT=... -DVERSION=... -DBUILD_TYPE=...
#         -DCOMPILER=... -P build_info.cmake
set(IOCPBENCH_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND commit)
    set(IOCPBENCH_GIT_COMMIT "${commit}")
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD --
                    WORKING_DIRECTORY ${SOURCE_DIR}
                    RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND IOCPBENCH_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
set(PROJECT_VERSION "${VERSION}")
set(IOCPBENCH_BUILD_TYPE "${BUILD_TYPE}")
set(IOCPBENCH_COMPILER "${COMPILER}")
configure_file(${INPUT} ${OUTPUT} @ONLY)
