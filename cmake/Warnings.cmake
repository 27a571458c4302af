# One place for the warning flags every target of ours gets (not third-party code).
add_library(iocpbench_warnings INTERFACE)
if(MSVC)
  target_compile_options(iocpbench_warnings INTERFACE /W4 /permissive-)
else()
  target_compile_options(iocpbench_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow)
endif()
