# cmake -DBINARY=<port_conformance_test> -DMUTANT=<name> -P run_mutant.cmake
# Passes when the conformance suite FAILS against the mutant (the mutant is killed); fails when
# every test passes (the mutant survived) or when the binary did not run the suite at all.
execute_process(
  COMMAND ${BINARY} --mutant=${MUTANT} --gtest_fail_fast --gtest_brief=1
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 110)
string(REGEX MATCHALL "\\[  FAILED  \\] [^\n,]*" killers "${out}")
list(REMOVE_DUPLICATES killers)
if(rc EQUAL 0)
  message(FATAL_ERROR "mutant ${MUTANT} survived: every conformance test passed against it")
elseif(killers)
  list(GET killers 0 first)
  string(REPLACE "[  FAILED  ] " "" first "${first}")
  message(STATUS "mutant ${MUTANT} killed by ${first}")
else()
  message(FATAL_ERROR "mutant ${MUTANT}: the suite did not run (exit ${rc}): ${err}")
endif()
