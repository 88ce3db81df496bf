# SPDX-License-Identifier: Apache-2.0
# cmake -DMPIEXEC=... -DDRIVER=... -DMODE=throw|kill -P mpi_fault_check.cmake
# Passes when the MPI job ends non-zero within 30 s and its output names the failed rank 1.
string(TIMESTAMP start "%s")
execute_process(
  COMMAND ${MPIEXEC} --oversubscribe -n 3 ${DRIVER} ${MODE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
string(TIMESTAMP end "%s")
math(EXPR elapsed "${end} - ${start}")
message("exit: ${rc}, ${elapsed} s\n${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the job exited 0 although rank 1 failed")
endif()
if(elapsed GREATER 30)
  message(FATAL_ERROR "the job took ${elapsed} s to end (limit 30 s)")
endif()
if(NOT "${out}${err}" MATCHES "rank 1")
  message(FATAL_ERROR "no message names rank 1")
endif()
