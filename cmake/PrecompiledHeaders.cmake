# Precompiled headers, one per group of targets built with the same flags: the standard library
# and nlohmann/json for harness/ (its libraries and the program), the same and GoogleTest for
# tests/. The sanitizer presets (clang, -O0) turn them on: there a unit spends about a third of
# its time parsing those headers, and precompiled they are parsed once per group (the results
# library's larger ASan+UBSan unit: 6.8 s to 4.9 s). With g++ 12 at -O3 they gained nothing
# measurable (a unit's time is its code generation; loading the 108 MB header costs what
# parsing did), so the GCC presets leave them off, as does a plain `cmake -B build`, where a
# missing include still shows (and in the MSVC job of the CI matrix).
option(IOCPBENCH_PRECOMPILED_HEADERS "Precompile the standard library, json and GoogleTest once per group of targets" OFF)

set(IOCPBENCH_PCH_COMMON
  <algorithm> <array> <atomic> <chrono> <cmath> <cstddef> <cstdint> <cstdio> <cstring>
  <filesystem> <functional> <map> <memory> <mutex> <optional> <stdexcept> <string>
  <string_view> <thread> <utility> <vector> <nlohmann/json.hpp>)

# The sanitizer presets compile at -O0. The tuner's simulations (tests/tune: thousands of whole
# tune runs on simulated settings) are CPU-bound, and at -O0 the standard library's selection
# and iterator calls stay out of line, each with ASan's checks: the CV 20% simulation took
# 38.5 s under ASan+UBSan, and 9.0 s with the tuner and its tests at -O1 (alone, back to back).
# The asan preset turns this on; the TSan run leaves the simulations out.
option(IOCPBENCH_OPTIMIZE_TUNER "Compile the tuner and its tests at -O1 (in the -O0 sanitizer builds)" OFF)
function(iocpbench_optimize_tuner target)
  if(IOCPBENCH_OPTIMIZE_TUNER)
    target_compile_options(${target} PRIVATE -O1)
    # Flags of its own: it cannot use its group's precompiled header (below).
    set_property(TARGET ${target} PROPERTY IOCPBENCH_OWN_FLAGS TRUE)
  endif()
endfunction()

# The library and program targets defined in DIR and its subfolders.
function(iocpbench_compiled_targets_under dir out)
  get_property(found DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  set(targets "")
  foreach(target IN LISTS found)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
      list(APPEND targets ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    iocpbench_compiled_targets_under(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Every library and program under the calling folder reuses one precompiled header, built by
# the object library NAME with the calling folder's flags (a precompiled header is used only
# by compilations with the flags it was built with). HEADERS: added to the common set; LINK:
# the targets those headers come from.
function(iocpbench_share_precompiled_headers name)
  if(NOT IOCPBENCH_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(arg "" "" "HEADERS;LINK" ${ARGN})
  iocpbench_compiled_targets_under(${CMAKE_CURRENT_SOURCE_DIR} targets)
  add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/precompiled_headers.cpp)
  target_link_libraries(${name} PRIVATE nlohmann_json::nlohmann_json ${arg_LINK} iocpbench_warnings)
  target_precompile_headers(${name} PRIVATE ${IOCPBENCH_PCH_COMMON} ${arg_HEADERS})
  foreach(target IN LISTS targets)
    get_target_property(own_flags ${target} IOCPBENCH_OWN_FLAGS)
    if(NOT own_flags)
      target_precompile_headers(${target} REUSE_FROM ${name})
    endif()
  endforeach()
endfunction()
