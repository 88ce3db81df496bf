# SPDX-License-Identifier: Apache-2.0
# `hetsim sweep` resumes a killed run: after a full run, the checkpoint is cut back to its first
# three rows and half of the fourth (a kill while writing); the rerun plans only the other rows,
# says how many it resumed, and writes the same CSV (search times aside).
#   cmake -DHETSIM=<exe> -DSPEC=<sweep.yaml> -DWORK=<dir> -P sweep_resume.cmake
include(${CMAKE_CURRENT_LIST_DIR}/cut_checkpoint.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(csv ${WORK}/results.csv)
set(checkpoint ${csv}.checkpoint.jsonl)

function(run_sweep expect_stdout)
  execute_process(COMMAND ${HETSIM} sweep ${SPEC} --out ${csv} --threads 1
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsim sweep failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "${expect_stdout}")
    message(FATAL_ERROR "expected stdout matching '${expect_stdout}', got:\n${out}")
  endif()
endfunction()

# The CSV without its search_time_s column (the one figure a rerun does not reproduce; it is
# followed by search_stopped, shape, joins_vendors and reason, the last two quoted when they hold
# a comma).
function(csv_without_times var)
  file(STRINGS ${csv} lines)
  set(stripped "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ",[0-9.e+-]+,(true|false),(\"[^\"]*\"|[^,]*),(true|false|),(\"[^\"]*\"|[^,]*)$" ",T,\\1,\\2,\\3,\\4" line "${line}")
    string(APPEND stripped "${line}\n")
  endforeach()
  set(${var} "${stripped}" PARENT_SCOPE)
endfunction()

run_sweep("results written to")
csv_without_times(full)
cut_checkpoint(${checkpoint} 3 6 total)

run_sweep("3 of ${total} rows resumed from the checkpoint")
csv_without_times(resumed)
if(NOT resumed STREQUAL full)
  message(FATAL_ERROR "the resumed CSV differs:\n${resumed}\nfrom the uninterrupted run's:\n${full}")
endif()
run_sweep("${total} of ${total} rows resumed from the checkpoint")
message(STATUS "resumed 3 of ${total} rows; the CSV matches the uninterrupted run's")
