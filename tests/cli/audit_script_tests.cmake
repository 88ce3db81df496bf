# SPDX-License-Identifier: Apache-2.0
# Misuse found by audits, and the scripts that keep the docs and engines true (included by tests/cli/CMakeLists.txt, which defines hetsim_cli_test,
# ${bad} and ${mixed}).
# Misuse found by a hostile-user audit (beyond scripts/fuzz_inputs.py). An output file that is
# one of the inputs is refused before any work: it used to be overwritten (the inputs here are
# copies in the build folder, so that a regression harms no source file).
set(copies ${CMAKE_CURRENT_BINARY_DIR}/input-copies)
foreach(f clusters/local-cpu.yaml workloads/tiny-gpt.yaml tests/config/suites/tiny-v2.yaml
          tests/cli/not-a-calibrate-checkpoint.jsonl clusters/dgx-a100.yaml)
  get_filename_component(name ${f} NAME)
  configure_file(${PROJECT_SOURCE_DIR}/${f} ${copies}/${name} COPYONLY)
endforeach()
set(tiny_copies --cluster|${copies}/local-cpu.yaml|--workload|${copies}/tiny-gpt.yaml)
hetsim_cli_test(plan_emit_plan_is_the_cluster EXPECT_RC 2 ARGS plan ${tiny_copies} --emit-plan ${copies}/../input-copies/local-cpu.yaml
  STDERR "hetsim plan: error: --emit-plan: '.*' is the input file '.*local-cpu.yaml' \\(expected another file: it would be overwritten\\)")
hetsim_cli_test(simulate_trace_is_the_workload EXPECT_RC 2 ARGS simulate ${tiny_copies} --tp 1 --trace ${copies}/tiny-gpt.yaml
  STDERR "--trace: '.*tiny-gpt.yaml' is the input file")
hetsim_cli_test(run_out_is_the_cluster EXPECT_RC 2 ARGS run ${tiny_copies} --tp 1 --out ${copies}/local-cpu.yaml
  STDERR "--out: '.*local-cpu.yaml' is the input file")
hetsim_cli_test(fit_out_is_the_suite EXPECT_RC 2 ARGS fit ${copies}/tiny-v2.yaml --out ${copies}/tiny-v2.yaml
  STDERR "--out: '.*tiny-v2.yaml' is the input file")
hetsim_cli_test(calibrate_out_is_the_cluster EXPECT_RC 2 ARGS calibrate --cluster ${copies}/local-cpu.yaml --quick
  --out ${copies}/local-cpu.yaml STDERR "--out: '.*local-cpu.yaml' is the input file")
# A calibration that stops before its first microbenchmark (no device it can run) left an empty
# samples file beside --out; so did sweep and fit stopped by an error after their checks.
hetsim_cli_test(calibrate_no_device_leaves_no_checkpoint EXPECT_RC 1 ARGS calibrate --cluster tests/cli/mi300x-only.yaml
  --quick --out ${CMAKE_CURRENT_BINARY_DIR}/no-device.yaml
  ABSENT_FILE ${CMAKE_CURRENT_BINARY_DIR}/no-device.yaml.samples.jsonl
  STDERR "no device type of the cluster can be benchmarked")
hetsim_cli_test(calibrate_checkpoint_is_the_out_file EXPECT_RC 2 ARGS calibrate --cluster ${copies}/local-cpu.yaml --quick
  --out ${CMAKE_CURRENT_BINARY_DIR}/never-profile.yaml --checkpoint ${CMAKE_CURRENT_BINARY_DIR}/never-profile.yaml
  STDERR "--checkpoint: '.*never-profile.yaml' is the --out file")
hetsim_cli_test(calibrate_unwritable_checkpoint EXPECT_RC 2 ARGS calibrate --cluster ${copies}/local-cpu.yaml --quick
  --out ${CMAKE_CURRENT_BINARY_DIR}/never-profile.yaml --checkpoint /proc/version
  STDERR "--checkpoint: cannot create files in folder '/proc'")
# --refit only reads the checkpoint: checked as an input (one in a read-only folder was refused).
hetsim_cli_test(calibrate_refit_checkpoint_is_a_folder EXPECT_RC 2 ARGS calibrate --cluster clusters/local-cpu.yaml --refit
  --out ${CMAKE_CURRENT_BINARY_DIR}/never-profile.yaml --checkpoint clusters STDERR "--refit: 'clusters' is a folder")
# A checkpoint that is not one (--out and --checkpoint swapped: the CSV or profile of an earlier
# run) got records appended while nothing in it was resumed.
hetsim_cli_test(sweep_checkpoint_is_no_checkpoint EXPECT_RC 2 ARGS sweep sweeps/h100-mi300x-mix.yaml --checkpoint ${copies}/tiny-v2.yaml
  STDERR "--checkpoint: '.*tiny-v2.yaml' is no checkpoint: it does not start with a JSON record")
hetsim_cli_test(calibrate_checkpoint_is_no_checkpoint EXPECT_RC 2 ARGS calibrate --cluster ${copies}/local-cpu.yaml --quick
  --out ${CMAKE_CURRENT_BINARY_DIR}/never-profile.yaml --checkpoint ${copies}/tiny-gpt.yaml
  STDERR "--checkpoint: '.*tiny-gpt.yaml' is no checkpoint")
# JSON lines of something else got calibrate's samples appended (s24 audit).
hetsim_cli_test(calibrate_checkpoint_of_something_else EXPECT_RC 2 ARGS calibrate --cluster ${copies}/local-cpu.yaml --quick
  --out ${CMAKE_CURRENT_BINARY_DIR}/never-profile.yaml --checkpoint ${copies}/not-a-calibrate-checkpoint.jsonl
  STDERR "--checkpoint: '.*not-a-calibrate-checkpoint.jsonl' holds 2 JSON lines and none is a calibrate sample")
# Options of the --tp/--pp/--dp shorthand given with --plan were silently ignored (the plan
# file's own settings were predicted); --interleave 2 turned --schedule gpipe into interleaved.
set(tiny_plan --plan|plans/local-cpu-tp2-pp2-dp1.yaml)
foreach(opt "zero:--zero|3" "micro:--micro|2" "schedule:--schedule|gpipe" "recompute:--recompute|full"
            "sequence_parallel:--sequence-parallel" "interleave:--interleave|2" "tp_comm_overlap:--tp-comm-overlap"
            "overlap_p2p_comm:--overlap-p2p-comm")
  string(REGEX REPLACE "^([a-z0-9_]+):(.*)$" "\\1" id "${opt}")
  string(REGEX REPLACE "^([a-z0-9_]+):(.*)$" "\\2" given "${opt}")
  string(REGEX REPLACE "\\|.*" "" option "${given}")
  hetsim_cli_test(predict_plan_with_${id} EXPECT_RC 2 ARGS predict ${tiny_copies} ${tiny_plan} ${given}
    STDERR "hetsim predict: error: ${option}: goes with the shorthand --tp/--pp/--dp \\(expected it in the --plan file\\)")
endforeach()
hetsim_cli_test(predict_tp_comm_overlap_without_sequence_parallel EXPECT_RC 2 ARGS predict ${tiny_copies} --tp 2
  --tp-comm-overlap STDERR "--tp-comm-overlap overlaps the sequence-parallel collectives \\(expected --sequence-parallel too\\)")
hetsim_cli_test(predict_tp_comm_overlap_shorthand EXPECT_RC 0 ARGS predict --cluster clusters/dgx-a100.yaml
  --workload workloads/llama2-7b.yaml --tp 8 --dp 4 --micro 2 --sequence-parallel --tp-comm-overlap STDOUT "iteration time")
hetsim_cli_test(predict_overlap_p2p_comm_without_interleaving EXPECT_RC 2 ARGS predict ${tiny_copies} --pp 2
  --overlap-p2p-comm STDERR "--overlap-p2p-comm overlaps the interleaved schedule's sends \\(expected --interleave 2 or more\\)")
hetsim_cli_test(plan_overlap_p2p_comm EXPECT_RC 0 ARGS plan --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-13b.yaml
  --top 5 --overlap-p2p-comm STDOUT "interleaved x[0-9]+ p2p-overlap")
# Replicas of different TP degrees run (they were refused): the same losses as the TP+PP plan.
hetsim_cli_test(run_replicas_of_different_tp EXPECT_RC 0 ARGS run --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --plan plans/local-cpu-dp2-mixed-tp.yaml --steps 2
  STDOUT "step 1: loss 5.5615,.*step 2: loss 5.35702,.*engine +exec")
# Replicas of different pipeline depths run (they were refused): the same losses again.
hetsim_cli_test(run_replicas_of_different_depths EXPECT_RC 0 ARGS run --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --plan plans/local-cpu-dp2-different-depths.yaml --steps 2
  STDOUT "step 1: loss 5.5615,.*step 2: loss 5.35702,.*engine +exec")
# ZeRO-3 runs (it was refused), here beside replicas of different TP degrees: the same losses again.
hetsim_cli_test(run_zero3 EXPECT_RC 0 ARGS run --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --plan plans/local-cpu-dp2-zero3.yaml --steps 2
  STDOUT "step 1: loss 5.5615,.*step 2: loss 5.35702,.*engine +exec")
# ... but not with replicas that run different numbers of micro-batches (its collectives pair up).
# --lr 1e308 became an inf float: the run printed "loss -nan" and exited 0.
hetsim_cli_test(run_lr_beyond_one EXPECT_RC 2 ARGS run --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml
  --plan plans/local-cpu-tp1-pp1-dp2.yaml --lr 1e308 STDERR "--lr: expected a positive number up to 1, got '1e308'")
hetsim_cli_test(run_zero3_uneven_micro_batches EXPECT_RC 1 ARGS run --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --plan tests/cli/local-cpu-zero3-uneven.yaml --steps 1
  STDERR "cannot execute the plan: replicas\\[1\\]: ZeRO-3 needs every replica to run the same number of micro-batches \\(3 here, 5 on replicas\\[0\\]\\)")
# A plan of another cluster fails at every selector; its header says which cluster it was for.
hetsim_cli_test(predict_plan_of_another_cluster EXPECT_RC 2 ARGS predict --cluster clusters/geo-two-zones.yaml
  --workload workloads/llama2-7b.yaml --plan plans/dgx-a100-tp4-pp2-dp4.yaml
  STDERR "dgx-a100-tp4-pp2-dp4.yaml:1:1: error: cluster: the plan was written for 'clusters/dgx-a100.yaml', not for --cluster")
hetsim_cli_test(simulate_interleave_contradicts_schedule EXPECT_RC 2 ARGS simulate ${tiny_copies} --pp 2 --interleave 2 --schedule gpipe
  STDERR "--interleave 2 needs --schedule interleaved \\(got --schedule gpipe\\)")
# More rank threads than the process may start (here: 512 8-MiB stacks in a 2 GB address space)
# ended in std::terminate (SIGABRT) with the started threads unjoined; now exit 1 with the reason.
hetsim_cli_test(run_more_ranks_than_threads EXPECT_RC 1 ADDRESS_SPACE_KB 2000000
  ARGS run --cluster tests/cli/cpu-512-ranks.yaml --workload tests/cli/tiny-gpt-batch-512.yaml --dp 512 --steps 1
  STDERR "hetsim run: error: cannot start the thread of rank [0-9]+ of 512: ")
# Search threads the process may not start (1024 8-MiB stacks in 2 GB) aborted `plan` (SIGABRT);
# the threads that start take every task and find the plan of --threads 1 (cli_plan_one_thread),
# and the search line counts those threads (at most a few hundred here), not the 1024 asked for.
hetsim_cli_test(plan_more_threads_than_the_process_may_start EXPECT_RC 0 ADDRESS_SPACE_KB 2000000
  ARGS plan ${mixed} --threads 1024 --top 1
  STDOUT "1 +115583 .*16x\\[dgx1-v100 tp1 x2 L8,7 \\| dgx-a100 tp1 x1 L17\\] m64.*search: [0-9.]+ s on [1-9][0-9]?[0-9]? threads,")
# A --time-limit beyond the clock's range (1e10 s) overflowed into the past: every search stopped
# at once and a worse plan (83787 tokens/s) was printed as the best found.
hetsim_cli_test(plan_time_limit_beyond_the_clock EXPECT_RC 0 ARGS plan ${mixed} --time-limit 1e10 --threads 1 --top 1
  STDOUT "1 +115583 .*16x\\[dgx1-v100 tp1 x2 L8,7 \\| dgx-a100 tp1 x1 L17\\] m64")
# A profile of another cluster changed nothing and the catalog's figures were printed as if calibrated.
hetsim_cli_test(predict_profile_of_another_cluster EXPECT_RC 2
  ARGS predict --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --profile clusters/profiles/local-cpu.yaml
  STDERR "^clusters/profiles/local-cpu.yaml:16:1: error: devices: profile 'local-cpu' names no device type or link class of cluster 'dgx-a100'")
# Results that do not reach standard output (a full disk) are an error, not exit code 0.
hetsim_cli_test(describe_stdout_full EXPECT_RC 1 ARGS describe clusters/dgx-a100.yaml STDOUT_FILE /dev/full
  STDERR "hetsim: error: cannot write the results to standard output: No space left on device")

# A small, fixed slice of the adversarial-input audit (scripts/fuzz_inputs.py; the full run is
# `/usr/bin/python3 scripts/fuzz_inputs.py`): mutants of every example input and misuse of the
# command line; fails on a crash, hang, malformed error, accepted bad value or partial output.
set(HETSIM_PYTHON /usr/bin/python3 CACHE FILEPATH "Python 3 with PyYAML, for script-driven tests")
add_test(NAME cli_fuzz_inputs
         COMMAND ${HETSIM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/fuzz_inputs.py --hetsim $<TARGET_FILE:hetsim>
                 --seed 1 --max-mutants 150 --jobs 2
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_fuzz_inputs PROPERTIES LABELS cpu TIMEOUT 300)

# The README and docs stay true: every `$ hetsim ...` command shown there (except the verbs that
# measure wall time) is run and must still print the lines shown under it (scripts/check_readme.py).
add_test(NAME cli_readme_outputs_are_current
         COMMAND ${HETSIM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/check_readme.py --hetsim $<TARGET_FILE:hetsim>
                 --shared ${HETSIM_SHARED_VALIDATION_DIR}/..
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_readme_outputs_are_current PROPERTIES LABELS cpu TIMEOUT 600)
# The checker's own rules: a printed line left out without a `...`, a shown line no longer printed.
add_test(NAME scripts_check_readme_self_test
         COMMAND ${HETSIM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/check_readme.py --self-test)
set_tests_properties(scripts_check_readme_self_test PROPERTIES LABELS cpu)

# The annotated examples of the input reference load as written (scripts/check_doc_examples.py).
add_test(NAME cli_doc_examples_load
         COMMAND ${HETSIM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/check_doc_examples.py --hetsim $<TARGET_FILE:hetsim>
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_doc_examples_load PROPERTIES LABELS cpu TIMEOUT 120)
# The walk-through of adding a GPU type, cluster, workload and sweep: each step's file where it says.
add_test(NAME cli_tutorial_examples_load
         COMMAND ${HETSIM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/check_doc_examples.py --hetsim $<TARGET_FILE:hetsim>
                 --doc ${PROJECT_SOURCE_DIR}/docs/adding-inputs.md --tutorial
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_tutorial_examples_load PROPERTIES LABELS cpu TIMEOUT 120)

# Per-layer times of Sailor's GH200 profile (FP32 in TF32, NVLink mesh) against the cost model:
# the figures docs/validation.md shows; fails past 25% at micro-batch 16 and 32.
add_test(NAME scripts_layer_profile_check
         COMMAND ${HETSIM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/layer_profile_check.py --hetsim $<TARGET_FILE:hetsim>
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(scripts_layer_profile_check PROPERTIES LABELS cpu TIMEOUT 120)
# The plan `hetsim plan` finds best for each example cluster and workload, predicted and simulated:
# the engines agree within 2% (they were 8% apart on spot-mix's and 4% on the 4090 + A100 cluster's
# before the ZeRO-1 gather fixes of 2026-12-04; the git log of sim/ has them).
add_test(NAME scripts_engine_diff_planned
         COMMAND ${HETSIM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/engine_diff.py --hetsim $<TARGET_FILE:hetsim>
                 --planned --time-limit 2 --show 3 --max-diff 0.02
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(scripts_engine_diff_planned PROPERTIES LABELS cpu TIMEOUT 600)

include(audit_regressions.cmake)
