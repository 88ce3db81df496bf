# SPDX-License-Identifier: Apache-2.0
# `hetsim calibrate --refit` fits a checkpoint without running anything: the H200's cuBLAS samples
# (full grid, tests/calibration/fixtures) on this machine, which has no GPU; then the misuses.
#   cmake -DHETSIM=... -DSOURCE=<repo> -DWORK=<dir> -P cli_calibrate_refit.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(fixtures ${SOURCE}/tests/calibration/fixtures)
set(cluster ${fixtures}/h200_one_device.yaml)
# Refits CHECKPOINT into PROFILE and expects the H200's 132 samples all resumed; sets err (the fit's report).
function(refit_all checkpoint profile what)
  execute_process(COMMAND ${HETSIM} calibrate --cluster ${cluster} --refit --out ${profile} --checkpoint ${checkpoint}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\\(132 microbenchmarks, 132 resumed")
    message(FATAL_ERROR "hetsim calibrate --refit ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(err "${err}" PARENT_SCOPE)
endfunction()
refit_all(${fixtures}/h200_cublas_samples.jsonl ${WORK}/h200.yaml "")
if(NOT err MATCHES "fitting h200-sxm-141gb \\(108 GEMMs")
  message(FATAL_ERROR "expected the H200's 108 GEMMs fitted:\n${err}")
endif()
if(err MATCHES "link classes not measured")
  message(FATAL_ERROR "one device has no link class to measure, so nothing to say of links:\n${err}")
endif()
# Least squares on a GPU (calibration/gemm_fit.cpp): the asymptote near the ~51 TFLOP/s the
# large GEMMs ran at (e ~0.77 of 66.9), where minimax put it at 66 (e 0.99).
file(READ ${WORK}/h200.yaml profile)
if(NOT profile MATCHES "gemm_fp32: 0\\.([0-9]+)")
  message(FATAL_ERROR "no gemm_fp32 in the refitted profile:\n${profile}")
endif()
set(e "0.${CMAKE_MATCH_1}")
if(e LESS 0.72 OR e GREATER 0.85)
  message(FATAL_ERROR "gemm_fp32 ${e}: expected 0.72-0.85 (least squares on the H200's cuBLAS samples)\n${profile}")
endif()
if(NOT profile MATCHES "source: \"fitted by `hetsim calibrate --cluster [^`]* --refit` on ")
  message(FATAL_ERROR "the refitted profile's source does not say it was fitted, not measured:\n${profile}")
endif()
# Misuse: no checkpoint; a checkpoint of another grid (the quick grid's, fitted as the full one);
# both exit 2 with the reason and write no profile.
foreach(case "missing" "other-grid")
  if(case STREQUAL "missing")
    set(args --checkpoint ${WORK}/none.jsonl)
    set(want "--refit fits the samples of '[^']*none.jsonl', which does not exist")
  else()
    file(COPY ${fixtures}/h200_exec_samples.jsonl DESTINATION ${WORK})
    set(args --checkpoint ${WORK}/h200_exec_samples.jsonl)
    set(want "--refit: the checkpoint [^ ]* has no microbenchmark ")
  endif()
  execute_process(COMMAND ${HETSIM} calibrate --cluster ${cluster} --refit --out ${WORK}/x.yaml ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "hetsim calibrate: error: .*${want}" OR EXISTS ${WORK}/x.yaml)
    message(FATAL_ERROR "refit ${case}: expected exit 2 and '${want}', got ${rc}:\n${out}\n${err}")
  endif()
endforeach()
# A damaged record (line 2's time 1e400, which no double holds): --refit names every damaged
# line with its microbenchmark and why, at once, instead of calling the first one missing.
file(STRINGS ${fixtures}/h200_cublas_samples.jsonl lines)
list(GET lines 1 second)
string(REGEX REPLACE "\"time_s\": [^,]*," "\"time_s\": 1e400," damaged "${second}")
list(REMOVE_AT lines 1)
list(INSERT lines 1 "${damaged}")
list(JOIN lines "\n" text)
file(WRITE ${WORK}/damaged.jsonl "${text}\n")
execute_process(COMMAND ${HETSIM} calibrate --cluster ${cluster} --refit --out ${WORK}/x.yaml
                        --checkpoint ${WORK}/damaged.jsonl
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
set(want "--refit: the checkpoint has 1 damaged line [^\n]*\n  [^ ]*damaged.jsonl:2: microbenchmark memory/h200-sxm-141gb/axpy/262144x0x0/3145728/0/r7: time_s 1e400 is no call's time")
if(NOT rc EQUAL 2 OR NOT err MATCHES "${want}" OR EXISTS ${WORK}/x.yaml)
  message(FATAL_ERROR "refit damaged: expected exit 2 and '${want}', got ${rc}:\n${out}\n${err}")
endif()
# Lines cut short by kills (each followed by the complete line a resumed run appended): no
# sample, wherever they are; the refit uses the complete ones (it took only a last one).
file(STRINGS ${fixtures}/h200_cublas_samples.jsonl lines)
foreach(at 50 10)
  list(GET lines ${at} whole)
  string(SUBSTRING "${whole}" 0 40 torn)
  list(INSERT lines ${at} "${torn}")
endforeach()
list(JOIN lines "\n" text)
file(WRITE ${WORK}/torn.jsonl "${text}\n")
refit_all(${WORK}/torn.jsonl ${WORK}/torn.yaml "over two torn lines")
# Two such boxes: the GPUs compute in device memory, so the Ethernet link class between them is
# not benchmarked, and the profile says so (s60 hunt: a cluster with one type that could not
# run dropped every link class without a word).
file(READ ${cluster} one_box)
string(REPLACE "{type: box, count: 1}" "{type: box, count: 2}" two_boxes "${one_box}")
file(WRITE ${WORK}/two-boxes.yaml "${two_boxes}")
execute_process(COMMAND ${HETSIM} calibrate --cluster ${WORK}/two-boxes.yaml --refit --out ${WORK}/two.yaml
                        --checkpoint ${fixtures}/h200_cublas_samples.jsonl
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
set(want "link classes not measured \\(their benchmarks run every rank as a thread on host memory\\): h200-sxm-141gb computes in device memory")
if(NOT rc EQUAL 0 OR NOT err MATCHES "${want}")
  message(FATAL_ERROR "refit of two boxes: expected exit 0 and '${want}', got ${rc}:\n${out}\n${err}")
endif()
