# SPDX-License-Identifier: Apache-2.0
# Runs the hetsim executable and checks its exit code and output.
#   cmake -DHETSIM=<exe> -DARGS="a|b|c" -DEXPECT_RC=2 [-DEXPECT_STDERR=<regex>] [-DEXPECT_STDOUT=<regex>]
#         [-DSTDOUT_FILE=<file stdout goes to, e.g. /dev/full>] [-DADDRESS_SPACE_KB=<ulimit -v>]
#         [-DABSENT_FILE=<file that must not exist after the run>] [-DSTDOUT_NOT=<regex stdout must not match>]
#         -P run_cli.cmake
# Each run may take 60 s; a slower build (scripts/asan_tests.sh) sets HETSIM_CLI_TIMEOUT_S.
set(timeout_s 60)
if(DEFINED ENV{HETSIM_CLI_TIMEOUT_S})
  set(timeout_s $ENV{HETSIM_CLI_TIMEOUT_S})
endif()
string(REPLACE "|" ";" ARGS "${ARGS}")
if(DEFINED ABSENT_FILE)  # a file the run must not leave behind (an empty checkpoint of a job that stopped)
  file(REMOVE ${ABSENT_FILE})
endif()
set(command ${HETSIM} ${ARGS})
if(DEFINED ADDRESS_SPACE_KB)  # a small address space: thread stacks run out as under a container's limits
  set(command /bin/sh -c "ulimit -v ${ADDRESS_SPACE_KB} && exec \"$0\" \"$@\"" ${command})
endif()
if(DEFINED STDOUT_FILE)
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_FILE ${STDOUT_FILE} ERROR_VARIABLE err TIMEOUT ${timeout_s})
else()
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${timeout_s})
endif()
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "hetsim ${ARGS}: exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "hetsim ${ARGS}: stderr does not match '${EXPECT_STDERR}':\n${err}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "hetsim ${ARGS}: stdout does not match '${EXPECT_STDOUT}':\n${out}")
endif()
if(DEFINED STDOUT_NOT AND out MATCHES "${STDOUT_NOT}")
  message(FATAL_ERROR "hetsim ${ARGS}: stdout matches '${STDOUT_NOT}', which it must not:\n${out}")
endif()
if(DEFINED ABSENT_FILE AND EXISTS ${ABSENT_FILE})
  message(FATAL_ERROR "hetsim ${ARGS}: left ${ABSENT_FILE} behind")
endif()
