# Dependencies of the MinGW-w64 cross build (cmake/mingw-w64-x86_64.cmake), included from
# Dependencies.cmake. The host's Debian packages are reused without /usr/include on the path:
# - nlohmann/json, CLI11 and Boost (header-only): their folders are linked into a private
#   include directory inside the build folder and wrapped in the usual imported targets;
# - GoogleTest: built from its sources (/usr/src/googletest, Debian's libgtest-dev);
# - Google Benchmark: compiled from the vendored sources in third_party/google-benchmark (below);
# - liburing is Linux-only and not needed.

set(IOCPBENCH_HOST_HEADERS ${CMAKE_BINARY_DIR}/mingw-host-headers)
file(MAKE_DIRECTORY ${IOCPBENCH_HOST_HEADERS})
foreach(folder nlohmann CLI boost)
  if(EXISTS /usr/include/${folder} AND NOT EXISTS ${IOCPBENCH_HOST_HEADERS}/${folder})
    file(CREATE_LINK /usr/include/${folder} ${IOCPBENCH_HOST_HEADERS}/${folder} SYMBOLIC)
  endif()
endforeach()

foreach(required nlohmann/json.hpp CLI/CLI.hpp)
  if(NOT EXISTS ${IOCPBENCH_HOST_HEADERS}/${required})
    message(FATAL_ERROR "MinGW build: /usr/include/${required} is missing "
                        "(scripts/setup-deps.sh installs nlohmann-json3-dev and libcli11-dev)")
  endif()
endforeach()

add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${IOCPBENCH_HOST_HEADERS})
add_library(CLI11::CLI11 INTERFACE IMPORTED)
target_include_directories(CLI11::CLI11 INTERFACE ${IOCPBENCH_HOST_HEADERS})

# Boost is optional here (the asio dispatcher needs it; the Windows harness does not).
if(EXISTS ${IOCPBENCH_HOST_HEADERS}/boost/version.hpp)
  add_library(Boost::headers INTERFACE IMPORTED)
  target_include_directories(Boost::headers INTERFACE ${IOCPBENCH_HOST_HEADERS})
  target_link_libraries(Boost::headers INTERFACE ws2_32 mswsock)
  set(Boost_FOUND TRUE)
else()
  set(Boost_FOUND FALSE)
endif()

if(IOCPBENCH_BUILD_TESTS)
  set(IOCPBENCH_GOOGLETEST_SOURCE /usr/src/googletest CACHE PATH "GoogleTest sources (MinGW build)")
  if(NOT EXISTS ${IOCPBENCH_GOOGLETEST_SOURCE}/CMakeLists.txt)
    message(FATAL_ERROR "MinGW build: no GoogleTest sources in ${IOCPBENCH_GOOGLETEST_SOURCE} "
                        "(scripts/setup-deps.sh installs libgtest-dev)")
  endif()
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK ON CACHE BOOL "" FORCE)
  add_subdirectory(${IOCPBENCH_GOOGLETEST_SOURCE} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
  foreach(lib gtest gtest_main gmock gmock_main)
    if(TARGET ${lib} AND NOT TARGET GTest::${lib})
      add_library(GTest::${lib} ALIAS ${lib})
    endif()
    # The test framework's speed is not what the tests measure: -O1 (after the build type's -O3)
    # compiles it in half the time.
    if(TARGET ${lib})
      target_compile_options(${lib} PRIVATE -O1)
    endif()
  endforeach()
  set(GTest_FOUND TRUE)
endif()

# Google Benchmark: Debian ships it for Linux only, so bench/ compiles the vendored sources of
# the same version (third_party/google-benchmark, 1.7.1 like libbenchmark-dev). Upstream's own
# CMakeLists is not used: its feature checks are try_run()s, which a cross build cannot run; the
# three answers are fixed here for MinGW-w64 (GCC 12, C++20: std::regex and steady_clock exist).
if(IOCPBENCH_BUILD_BENCH)
  set(IOCPBENCH_BENCHMARK_SOURCE ${PROJECT_SOURCE_DIR}/third_party/google-benchmark)
  file(GLOB IOCPBENCH_BENCHMARK_SOURCES CONFIGURE_DEPENDS ${IOCPBENCH_BENCHMARK_SOURCE}/src/*.cc)
  add_library(iocpbench_google_benchmark STATIC ${IOCPBENCH_BENCHMARK_SOURCES})
  target_include_directories(iocpbench_google_benchmark
    PUBLIC ${IOCPBENCH_BENCHMARK_SOURCE}/include
    PRIVATE ${IOCPBENCH_BENCHMARK_SOURCE}/src)
  target_compile_definitions(iocpbench_google_benchmark
    PUBLIC BENCHMARK_STATIC_DEFINE
    PRIVATE HAVE_STD_REGEX HAVE_STEADY_CLOCK)
  # Third-party code, without our warning set; -O1: its own code runs between a benchmark's
  # timed batches (the timed loop is the benchmark's, inlined from the header), and under Wine
  # bench/ is a smoke test.
  target_compile_options(iocpbench_google_benchmark PRIVATE -w -O1)
  target_link_libraries(iocpbench_google_benchmark PUBLIC shlwapi Threads::Threads)
  add_library(benchmark::benchmark ALIAS iocpbench_google_benchmark)
endif()
