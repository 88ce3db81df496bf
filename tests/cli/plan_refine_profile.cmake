# SPDX-License-Identifier: Apache-2.0
# `hetsim plan --refine` simulates the plans on the cluster the planner ranked them on, --profile
# applied, from a folder whose name holds a quote (the refinement once ran `hetsim simulate` in a
# shell, which both lost the profile and broke on such a path). The profile slows every GEMM about
# 4x, so a simulation without it would give about 3x the predicted tokens/s; with it the two
# engines agree within 20%.
#   cmake -DHETSIM=<exe> -DCLUSTER=<yaml> -DWORKLOAD=<yaml> -DPROFILE=<yaml> -DWORK=<dir> -P plan_refine_profile.cmake
set(dir "${WORK}/it's a folder")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${dir}")
file(COPY_FILE "${CLUSTER}" "${dir}/cluster.yaml")
file(COPY_FILE "${PROFILE}" "${dir}/profile.yaml")
execute_process(COMMAND ${HETSIM} plan --cluster "${dir}/cluster.yaml" --workload ${WORKLOAD} --profile "${dir}/profile.yaml"
                        --top 1 --refine 1 --threads 1 --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hetsim plan failed (${rc}):\n${out}\n${err}")
endif()
string(JSON predicted GET "${out}" plans 0 tokens_per_s)
string(JSON simulated ERROR_VARIABLE missing GET "${out}" plans 0 simulated_tokens_per_s)
if(missing OR simulated STREQUAL "null")
  message(FATAL_ERROR "no simulated_tokens_per_s:\n${out}")
endif()
# CMake's math() is integer only: drop the fractions (tokens/s are far above 1).
string(REGEX REPLACE "[.].*" "" simulated_int "${simulated}")
string(REGEX REPLACE "[.].*" "" predicted_int "${predicted}")
math(EXPR ratio_percent "${simulated_int} * 100 / ${predicted_int}")
if(ratio_percent LESS 80 OR ratio_percent GREATER 120)
  message(FATAL_ERROR "simulated ${simulated} vs predicted ${predicted} tokens/s (${ratio_percent}%): "
                      "the simulation did not use the profile")
endif()
message(STATUS "predicted ${predicted}, simulated ${simulated} tokens/s (${ratio_percent}%)")
