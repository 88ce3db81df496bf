# SPDX-License-Identifier: Apache-2.0
# `hetsim fit` then `hetsim validate --profile` with the profile it wrote: the suite's MAPE that
# validate prints is the "after" figure fit printed, and differs from the catalog's (the profile
# is applied, not ignored).
#   cmake -DHETSIM=<exe> -DSUITE=<suite.yaml> -DPARAMS=gemm,host -DWORK=<dir> -P fit_then_validate.cmake
file(MAKE_DIRECTORY ${WORK})
set(profile ${WORK}/fitted-profile.yaml)
file(REMOVE ${profile} ${profile}.checkpoint.jsonl)  # a fresh fit, not one resumed from the last test run
execute_process(COMMAND ${HETSIM} fit ${SUITE} --params ${PARAMS} --out ${profile} --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE fit ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0 OR NOT EXISTS ${profile})
  message(FATAL_ERROR "hetsim fit failed (${rc}):\n${fit}\n${err}")
endif()
string(JSON before GET "${fit}" suites 0 mape_before)
string(JSON after GET "${fit}" suites 0 mape_after)
foreach(with "" "--profile;${profile}")
  execute_process(COMMAND ${HETSIM} validate ${SUITE} --format json ${with}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsim validate ${with} failed (${rc}):\n${out}\n${err}")
  endif()
  string(JSON mape GET "${out}" suites 0 mape)
  if(with STREQUAL "")
    set(expected ${before})
  else()
    set(expected ${after})
  endif()
  if(NOT mape STREQUAL expected)
    message(FATAL_ERROR "validate ${with}: MAPE ${mape}, fit reported ${expected}")
  endif()
endforeach()
if(before STREQUAL after)
  message(FATAL_ERROR "the fit changed nothing (MAPE ${before} before and after): the test shows nothing")
endif()
message(STATUS "MAPE ${before} -> ${after}, as validate reports with and without the profile")
