# One ctest test per mutant of the emulated port: it runs the conformance suite with
# --mutant=NAME and passes only if the suite fails (at least one test reports FAILED). A
# surviving mutant means a rule of the kernel queue that no conformance test checks.
# --gtest_fail_fast: the first failure kills the mutant, so each run takes seconds.
# Keep this list equal to kMutants in harness/port/port_factory.cpp
# (port_mutant_list checks that it is).
# Native builds only: the mutants are the emulated port's logic, the same on every OS, and the
# cmake -P scripts below start the test program directly, which a cross build (MinGW-w64, run
# under Wine) cannot do without its CMAKE_CROSSCOMPILING_EMULATOR.
if(CMAKE_CROSSCOMPILING)
  return()
endif()
set(IOCPBENCH_PORT_MUTANTS
  fifo_wakeup no_cap no_block_release release_all_on_block block_skips_activate
  timeout_not_counted resume_waits_for_slot batch_slot_per_entry close_does_not_wake
  d1_leave_before_closed_check d2_batch_of_one_fails)
foreach(mutant IN LISTS IOCPBENCH_PORT_MUTANTS)
  add_test(NAME port_mutant_${mutant}
    COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:port_conformance_test> -DMUTANT=${mutant}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/port/run_mutant.cmake)
  set_tests_properties(port_mutant_${mutant} PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
endforeach()
string(REPLACE ";" "," mutant_csv "${IOCPBENCH_PORT_MUTANTS}")
add_test(NAME port_mutant_list
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:port_conformance_test> -DEXPECTED=${mutant_csv}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/port/check_mutant_list.cmake)
set_tests_properties(port_mutant_list PROPERTIES TIMEOUT 30)
