# Cross-compiling iocpbench for 64-bit Windows on Debian with MinGW-w64 (posix threads model),
# running the results under Wine: cmake --preset mingw (binaryDir build/mingw).
# Packages: g++-mingw-w64-x86-64-posix wine wine64 (scripts/setup-deps.sh --windows).
#
# Host headers: the header-only libraries (nlohmann/json, CLI11, Boost) come from the host's
# /usr/include, but adding -I/usr/include breaks MinGW (glibc's limits.h shadows MinGW's), so
# cmake/mingw-dependencies.cmake links just those folders into a private include directory.

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(IOCPBENCH_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${IOCPBENCH_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${IOCPBENCH_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${IOCPBENCH_MINGW_TRIPLE}-windres)

# Libraries, headers and CMake packages only from the MinGW sysroot; programs from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${IOCPBENCH_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# One self-contained .exe each: no libstdc++/libgcc/libwinpthread DLLs to find under Wine.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")

# GCC 12 misreports std::string concatenation under -O2 as overlapping memcpy (-Wrestrict,
# GCC bug 105329); the MinGW build is GCC 12 in every case, so that one warning is off here.
set(CMAKE_CXX_FLAGS_INIT "-Wno-restrict")

# Test programs (ctest, gtest discovery) run through Wine, in a prefix inside the build folder.
# WINEDEBUG=-all also silences the Debian launcher's "wine32 is missing" hint; mscoree/mshtml
# disabled keeps the first prefix creation from offering Mono and Gecko. scripts/test-windows.sh
# keeps one wineserver running across the whole ctest run (wineserver -p ... wineserver -k).
# scripts/wine-test.sh starts a program again once when Wine failed to start it (no output at
# all); a program that ran keeps its result.
find_program(IOCPBENCH_WINE NAMES wine wine64)
if(IOCPBENCH_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      /usr/bin/env WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix WINEDEBUG=-all
      WINEDLLOVERRIDES=mscoree,mshtml= ${CMAKE_CURRENT_LIST_DIR}/../scripts/wine-test.sh
      ${IOCPBENCH_WINE})
endif()
