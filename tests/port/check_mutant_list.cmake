# cmake -DBINARY=<port_conformance_test> -DEXPECTED=a,b,c -P check_mutant_list.cmake
# The mutants ctest runs (tests/port/mutants.cmake) must be exactly those the port defines.
execute_process(COMMAND ${BINARY} --list-mutants RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(STRIP "${out}" out)
string(REPLACE "\n" "," defined "${out}")
if(NOT rc EQUAL 0 OR NOT defined STREQUAL EXPECTED)
  message(FATAL_ERROR "mutants.cmake lists '${EXPECTED}', the port defines '${defined}'")
endif()
