# SPDX-License-Identifier: Apache-2.0
# Checks `hetsim run` end to end.
#   cmake -DHETSIM=... -DMPIEXEC=... -DSOURCE=<repo> -DWORK=<dir> -DMODE=json|mpi|mpi_out_is_input|mpi_fault_out|fault -P cli_run_check.cmake
set(inputs --cluster ${SOURCE}/clusters/local-cpu.yaml --workload ${SOURCE}/workloads/tiny-gpt.yaml)
file(MAKE_DIRECTORY ${WORK})
set(out ${WORK}/run_${MODE}.jsonl)
if(MODE STREQUAL "json")
  execute_process(COMMAND ${HETSIM} run ${inputs} --tp 2 --pp 2 --steps 2 --format json --out ${out}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 120)
elseif(MODE STREQUAL "mpi")
  execute_process(COMMAND ${MPIEXEC} --oversubscribe -n 4 ${HETSIM} run ${inputs} --tp 2 --pp 2 --steps 2
                          --format json --out ${out}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 120)
elseif(MODE STREQUAL "mpi_out_is_input")
  # Each rank writes --out with %r replaced by its rank: rank 0's file is the plan given. Refused
  # on every rank before the run (it overwrote the plan with rank 0's log), the plan untouched.
  configure_file(${SOURCE}/plans/local-cpu-tp1-pp1-dp2.yaml ${WORK}/plan0.yaml COPYONLY)
  file(MD5 ${WORK}/plan0.yaml before)
  execute_process(COMMAND ${MPIEXEC} --oversubscribe -n 2 ${HETSIM} run ${inputs} --plan ${WORK}/plan0.yaml
                          --steps 1 --out ${WORK}/plan%r.yaml
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 120)
  file(MD5 ${WORK}/plan0.yaml after)
  if(NOT before STREQUAL after OR rc EQUAL 0
     OR NOT stderr MATCHES "hetsim run: error: --out \\(rank 0\\): '[^']*plan0.yaml' is the input file")
    message(FATAL_ERROR "expected a refusal that leaves the plan as it was; rc ${rc}, plan ${before} -> ${after}:\n${stderr}")
  endif()
  return()
elseif(MODE STREQUAL "mpi_fault_out")
  # A rank that throws ends the job through MPI_Abort, which does not unwind: its --out
  # temporary (NAME.rankR.tmp.<pid>) stayed beside the outputs. The failed rank's must be gone.
  # (mpirun may then SIGKILL the other ranks, which cannot clean up; the next write to the same
  # name removes what dead processes left.)
  file(REMOVE_RECURSE ${WORK}/fault_out)
  file(MAKE_DIRECTORY ${WORK}/fault_out)
  execute_process(COMMAND ${MPIEXEC} --oversubscribe -n 4 ${HETSIM} run ${inputs} --tp 2 --pp 2 --steps 2
                          --out ${WORK}/fault_out/o.jsonl --inject-fault 2:throw:2
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 120)
  file(GLOB left ${WORK}/fault_out/*)
  if(rc EQUAL 0 OR NOT stderr MATCHES "rank 2 failed")
    message(FATAL_ERROR "expected a non-zero exit naming rank 2; got ${rc}:\n${stderr}")
  endif()
  foreach(f ${left})
    if(f MATCHES "o\\.jsonl\\.rank2\\.tmp\\.")
      message(FATAL_ERROR "the failed rank left its temporary ${f}")
    endif()
  endforeach()
  return()
elseif(MODE STREQUAL "fault")
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${HETSIM} run ${inputs} --pp 2 --dp 2 --steps 3 --inject-fault 3:throw:2
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 60)
  string(TIMESTAMP end "%s")
  math(EXPR elapsed "${end} - ${start}")
  if(rc EQUAL 0 OR elapsed GREATER 30 OR NOT stderr MATCHES "rank 3 failed")
    message(FATAL_ERROR "expected a non-zero exit within 30 s naming rank 3; got ${rc} after ${elapsed} s:\n${stderr}")
  endif()
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hetsim run failed (${rc}):\n${stdout}\n${stderr}")
endif()
foreach(key iteration_time_s samples_per_s tokens_per_s tflops_per_gpu mfu hfu feasible infeasible_reason
            memory_peak_bytes cost_per_hour cost_per_million_tokens breakdown compute_s tp_comm_s pp_comm_s
            dp_comm_s bubble_s optimizer_s stages)
  if(NOT stdout MATCHES "\"${key}\"")
    message(FATAL_ERROR "Report key ${key} missing from:\n${stdout}")
  endif()
endforeach()
if(NOT stdout MATCHES "\"engine\": *\"exec\"")
  message(FATAL_ERROR "engine is not exec:\n${stdout}")
endif()
if(MODE STREQUAL "mpi")
  set(files ${out}.rank0 ${out}.rank1 ${out}.rank2 ${out}.rank3)
else()
  set(files ${out})
endif()
foreach(f ${files})
  file(STRINGS ${f} lines)
  list(LENGTH lines n)
  list(GET lines 0 first)
  if(n LESS 20 OR NOT first MATCHES "\"op\":" OR NOT first MATCHES "\"micro_batch\":")
    message(FATAL_ERROR "${f}: ${n} lines, first: ${first}")
  endif()
  file(REMOVE ${f})
endforeach()
