# SPDX-License-Identifier: Apache-2.0
# `hetsim fit` resumes a killed run: after a full fit, its checkpoint is cut back to its first five
# figure searches and half of the sixth (a kill while writing); the rerun searches only the others,
# says how many it resumed, and writes the same profile (the time in its `source` aside).
#   cmake -DHETSIM=<exe> -DSUITE=<suite.yaml> -DPARAMS=gemm,host -DWORK=<dir> -P fit_resume.cmake
include(${CMAKE_CURRENT_LIST_DIR}/cut_checkpoint.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(profile ${WORK}/fitted.yaml)
set(checkpoint ${profile}.checkpoint.jsonl)

function(run_fit expect_stdout)
  execute_process(COMMAND ${HETSIM} fit ${SUITE} --params ${PARAMS} --out ${profile}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsim fit failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "${expect_stdout}")
    message(FATAL_ERROR "expected stdout matching '${expect_stdout}', got:\n${out}")
  endif()
endfunction()

# The profile without the line that records when it was fitted.
function(profile_figures var)
  file(STRINGS ${profile} lines)
  list(FILTER lines EXCLUDE REGEX "^source:")
  set(${var} "${lines}" PARENT_SCOPE)
endfunction()

run_fit("wrote ")
profile_figures(full)
cut_checkpoint(${checkpoint} 5 8 total)

run_fit("5 of ${total} figure searches resumed from ")
profile_figures(resumed)
if(NOT resumed STREQUAL full)
  message(FATAL_ERROR "the resumed profile differs:\n${resumed}\nfrom the uninterrupted fit's:\n${full}")
endif()
run_fit("${total} of ${total} figure searches resumed from ")
message(STATUS "resumed 5 of ${total} figure searches; the profile matches the uninterrupted fit's")
