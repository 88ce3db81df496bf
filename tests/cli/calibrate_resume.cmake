# SPDX-License-Identifier: Apache-2.0
# `hetsim calibrate` resumes from its checkpoint only what was timed the same way: samples of a
# run with --repeats 1 are measured again by a run with --repeats 2 (they used to be reused, and
# the profile then claimed "median of 2 timed repeats" for single timings), and resumed by a
# second run with --repeats 1, whose profile says so.
#   cmake -DHETSIM=<exe> -DCLUSTER=<cluster.yaml> -DWORK=<dir> -P calibrate_resume.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(calibrate repeats expect_stdout)
  execute_process(COMMAND ${HETSIM} calibrate --cluster ${CLUSTER} --quick --repeats ${repeats}
                          --out ${WORK}/profile.yaml --checkpoint ${WORK}/samples.jsonl
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsim calibrate failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "${expect_stdout}")
    message(FATAL_ERROR "--repeats ${repeats}: expected stdout matching '${expect_stdout}', got:\n${out}")
  endif()
  set(last_stdout "${out}" PARENT_SCOPE)
endfunction()

calibrate(1 "\\([0-9]+ microbenchmarks, 0 resumed from the checkpoint\\)")
string(REGEX MATCH "\\(([0-9]+) microbenchmarks" unused "${last_stdout}")
set(total ${CMAKE_MATCH_1})
calibrate(2 "\\(${total} microbenchmarks, 0 resumed from the checkpoint\\)")
calibrate(1 "\\(${total} microbenchmarks, ${total} resumed from the checkpoint\\)")
file(STRINGS ${WORK}/profile.yaml source REGEX "^source:")
if(NOT source MATCHES "median of 1 timed repeats.*${total} of them resumed")
  message(FATAL_ERROR "the profile's source does not say what it holds: ${source}")
endif()
message(STATUS "${total} samples: measured again under other --repeats, resumed under the same")
