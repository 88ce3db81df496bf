# SPDX-License-Identifier: Apache-2.0
# `hetsim fit` writes the same profile whatever order --params lists the figures in: the search
# fits one figure at a time, and on rows that do not pin each figure down the order it took them
# in decided which of several equally good profiles it wrote (s68 hunt: `gemm,memory,host` and
# `host,memory,gemm` gave different T4 and V100 figures on this suite).
#   cmake -DHETSIM=<exe> -DSUITE=<suite.yaml> -DWORK=<dir> -P fit_params_order.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# The profile of one order, without the line that records when it was fitted.
function(fit_figures params var)
  set(profile ${WORK}/${params}.yaml)
  execute_process(COMMAND ${HETSIM} fit ${SUITE} --params ${params} --out ${profile}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsim fit --params ${params} failed (${rc}):\n${out}\n${err}")
  endif()
  file(STRINGS ${profile} lines)
  list(FILTER lines EXCLUDE REGEX "^source:")
  set(${var} "${lines}" PARENT_SCOPE)
endfunction()

fit_figures(gemm,memory,host forward)
fit_figures(host,memory,gemm backward)
if(NOT forward STREQUAL backward)
  message(FATAL_ERROR "--params host,memory,gemm fitted:\n${backward}\n--params gemm,memory,host fitted:\n${forward}")
endif()
message(STATUS "one profile for both orders of --params")
