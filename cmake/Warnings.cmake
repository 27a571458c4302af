# One place for the warning flags every target of ours gets (not third-party code).
add_library(iocpbench_warnings INTERFACE)
if(MSVC)
  target_compile_options(iocpbench_warnings INTERFACE /W4 /permissive-)
else()
  target_compile_options(iocpbench_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow)
endif()
# GCC 12 reports -Wrestrict inside libstdc++ for `"text" + std::string(...)` at -O2 (GCC bug
# 105329, fixed in 13): a false positive in the standard library, not in our code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(iocpbench_warnings INTERFACE -Wno-restrict)
endif()
