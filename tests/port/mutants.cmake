# One ctest test per mutant of the emulated port: it runs the conformance suite with
# --mutant=NAME and passes only if the suite fails (at least one test reports FAILED). A
# surviving mutant means a rule of the kernel queue that no conformance test checks.
# --gtest_fail_fast: the first failure kills the mutant.
# Keep this list equal to kMutants in harness/port/port_factory.cpp
# (port_mutant_list checks that it is).
# Native builds only: the mutants are the emulated port's logic, the same on every OS, and the
# cmake -P scripts below start the test program directly, which a cross build (MinGW-w64, run
# under Wine) cannot do without its CMAKE_CROSSCOMPILING_EMULATOR.
if(CMAKE_CROSSCOMPILING)
  return()
endif()
# Each mutant with the conformance tests that killed it in every full run of the suite
# (docs/port-semantics.md, "Which tests kill which mutant"). ctest runs those first; a mutant
# that survives them is run against the whole suite, so a kill that moves to another test still
# counts, and only a mutant that survives every test fails. The first runs stop at their first
# failure in a second or two instead of running the suite up to it.
set(IOCPBENCH_PORT_MUTANTS
  fifo_wakeup=T02,T08,T10 no_cap=T05,T06,T07 no_block_release=T08,T10
  release_all_on_block=T25 block_skips_activate=T08,T10 timeout_not_counted=T05,T12
  resume_waits_for_slot=T08,T10 batch_slot_per_entry=T17,T26 close_does_not_wake=T06
  d1_leave_before_closed_check=T23 d2_batch_of_one_fails=T24)
set(mutant_names)
foreach(entry IN LISTS IOCPBENCH_PORT_MUTANTS)
  string(REPLACE "=" ";" parts "${entry}")
  list(GET parts 0 mutant)
  list(GET parts 1 killers)
  list(APPEND mutant_names ${mutant})
  add_test(NAME port_mutant_${mutant}
    COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:port_conformance_test> -DMUTANT=${mutant}
            -DKILLERS=${killers} -P ${CMAKE_CURRENT_SOURCE_DIR}/port/run_mutant.cmake)
  set_tests_properties(port_mutant_${mutant} PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
endforeach()
# The fallback itself: a mutant whose listed killer cannot kill it (T01, FIFO order of packets,
# which no_cap keeps) must still be killed, by the whole suite.
add_test(NAME port_mutant_fallback_to_the_whole_suite
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:port_conformance_test> -DMUTANT=no_cap
          -DKILLERS=T01 -P ${CMAKE_CURRENT_SOURCE_DIR}/port/run_mutant.cmake)
set_tests_properties(port_mutant_fallback_to_the_whole_suite PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
  PASS_REGULAR_EXPRESSION "no_cap survived T01, which killed it before: the whole suite next.*mutant no_cap killed by")
string(REPLACE ";" "," mutant_csv "${mutant_names}")
add_test(NAME port_mutant_list
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:port_conformance_test> -DEXPECTED=${mutant_csv}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/port/check_mutant_list.cmake)
set_tests_properties(port_mutant_list PROPERTIES TIMEOUT 30)
