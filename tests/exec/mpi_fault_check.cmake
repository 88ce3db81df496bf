# SPDX-License-Identifier: Apache-2.0
# cmake -DMPIEXEC=... -DDRIVER=... -DMODE=throw|kill -P mpi_fault_check.cmake
# Passes when the MPI job ends non-zero and its output names the failed rank 1. A job whose
# surviving ranks wait forever on the dead one is cut at 90 s and fails as a hang. The elapsed time
# is printed, not asserted: a loaded machine (or a sanitizer build) stretches it, and a hang is
# the fault this test is about, not speed.
string(TIMESTAMP start "%s")
execute_process(
  COMMAND ${MPIEXEC} --oversubscribe -n 3 ${DRIVER} ${MODE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 90)
string(TIMESTAMP end "%s")
math(EXPR elapsed "${end} - ${start}")
message("exit: ${rc}, ${elapsed} s\n${out}${err}")
if(rc MATCHES "timeout")
  message(FATAL_ERROR "the job hung: it had not ended after 90 s although rank 1 failed")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the job exited 0 although rank 1 failed")
endif()
if(NOT "${out}${err}" MATCHES "rank 1")
  message(FATAL_ERROR "no message names rank 1")
endif()
