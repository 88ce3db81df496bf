# SPDX-License-Identifier: Apache-2.0
# Runs bench/plot_trace.py on a small `hetsim simulate --trace` and on a trace it must refuse.
#   cmake -DHETSIM=... -DPYTHON=/usr/bin/python3 -DSOURCE=<repo> -DWORK=<dir> -P plot_trace_check.cmake
file(MAKE_DIRECTORY ${WORK})
set(trace ${WORK}/plot_trace_small.json)
set(png ${WORK}/plot_trace_small.png)
file(REMOVE ${png})
execute_process(COMMAND ${HETSIM} simulate --cluster ${SOURCE}/clusters/dgx-a100.yaml --workload ${SOURCE}/workloads/gpt3-1.3b.yaml
                        --tp 8 --pp 2 --dp 2 --trace ${trace}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "simulate --trace failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${PYTHON} ${SOURCE}/bench/plot_trace.py ${trace} ${png} --links 2
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
  message(FATAL_ERROR "plot_trace.py failed (${rc}): ${err}")
endif()
file(WRITE ${WORK}/plot_trace_empty.json "{\"traceEvents\": []}\n")
execute_process(COMMAND ${PYTHON} ${SOURCE}/bench/plot_trace.py ${WORK}/plot_trace_empty.json ${WORK}/plot_trace_empty.png
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 2 OR NOT err MATCHES "plot_trace.py: error: .*no spans in the trace" OR err MATCHES "Traceback")
  message(FATAL_ERROR "an empty trace: expected exit 2 and one line, got ${rc}:\n${err}")
endif()
