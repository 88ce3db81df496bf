# SPDX-License-Identifier: Apache-2.0
# End-to-end checks of validate, fit, sweep and calibrate's resume (included by tests/cli/CMakeLists.txt, which defines hetsim_cli_test,
# ${bad} and ${mixed}).
# hetsim validate, suite format version 2 (issue 7): node groups and explicit plans, a bad
# plan row reported at its line:col, --emit-dir.
set(suites ${PROJECT_SOURCE_DIR}/tests/config/suites)
hetsim_cli_test(validate_v2 EXPECT_RC 0 ARGS validate ${suites}/tiny-v2.yaml
  STDOUT "tiny-v2: 2 rows, 0 failed, MAPE [0-9.]+%, max error [0-9.]+%, spearman")
hetsim_cli_test(validate_v2_rows EXPECT_RC 0 ARGS validate ${suites}/tiny-v2.yaml --rows
  STDOUT "row +micro +measured +predicted +error +rank measured/predicted \\(in its model size\\)\n  [^ ]+ +[0-9]+ +[0-9.e+-]+ +[0-9.e+-]+ +[+-][0-9.]+% +[0-9.]+/[0-9.]+\n")
hetsim_cli_test(validate_v2_bad_plan EXPECT_RC 2 ARGS validate ${suites}/bad-v2.yaml
  STDERR "bad-v2.yaml:18:43: error: rows\\[0\\].plan.stages\\[1\\].replicas\\[0\\].gpus\\[0\\]: GPU 0 is already used")
hetsim_cli_test(validate_emit_dir_unwritable EXPECT_RC 2 ARGS validate ${suites}/tiny-v2.yaml --emit-dir /proc/hetsim-emit
  STDERR "--emit-dir: cannot create files in folder '/proc'")
hetsim_cli_test(validate_v2_emit_dir EXPECT_RC 0
  ARGS validate ${suites}/tiny-v2.yaml --format json --emit-dir ${CMAKE_CURRENT_BINARY_DIR}/emitted-suites
  STDOUT "\"suite\": \"tiny-v2\".*\"spearman\"")

# A suite given twice counted its rows twice (and --emit-dir wrote it over itself).
hetsim_cli_test(validate_same_suite_twice EXPECT_RC 2 ARGS validate ${suites}/tiny-v2.yaml ${suites}/tiny-v2.yaml
  STDERR "tiny-v2.yaml:3:8: error: suite: the file is given twice \\(expected each suite file once\\)")

# hetsim fit: efficiency figures fitted to a suite's measured times, written as a profile;
# validate --profile with that profile prints the MAPE fit reported (fit_then_validate.cmake).
hetsim_cli_test(fit_tiny EXPECT_RC 0 ARGS fit ${suites}/tiny-v2.yaml --params gemm,host
  --out ${CMAKE_CURRENT_BINARY_DIR}/fitted-tiny.yaml
  STDOUT "fit: 2 rows of 1 suite.*t4 +gemm .*v100-sxm2-16gb +host .*tiny-v2 +2 +0 .*wrote ")
add_test(NAME cli_fit_then_validate_profile
  COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DSUITE=${suites}/tiny-v2.yaml -DPARAMS=gemm,host,links
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/fit-then-validate -P ${CMAKE_CURRENT_SOURCE_DIR}/fit_then_validate.cmake
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_fit_then_validate_profile PROPERTIES LABELS cpu)
add_test(NAME cli_fit_resumes_a_killed_run
  COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DSUITE=${suites}/tiny-v2.yaml -DPARAMS=gemm,host
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/fit-resume -P ${CMAKE_CURRENT_SOURCE_DIR}/fit_resume.cmake)
set_tests_properties(cli_fit_resumes_a_killed_run PROPERTIES LABELS cpu)
add_test(NAME cli_fit_params_order
  COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DSUITE=${suites}/tiny-v2.yaml
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/fit-params-order -P ${CMAKE_CURRENT_SOURCE_DIR}/fit_params_order.cmake)
set_tests_properties(cli_fit_params_order PROPERTIES LABELS cpu)
# The checkpoint is another verb's (appending a fit's steps to it would spoil it) or an input.
hetsim_cli_test(fit_checkpoint_of_something_else EXPECT_RC 2 ARGS fit ${suites}/tiny-v2.yaml
  --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml --checkpoint ${CMAKE_CURRENT_SOURCE_DIR}/calibrate-checkpoint.jsonl
  STDERR "--checkpoint: '.*calibrate-checkpoint.jsonl' holds 1 JSON lines and none is a step of hetsim fit")
hetsim_cli_test(fit_checkpoint_is_the_suite EXPECT_RC 2 ARGS fit ${suites}/tiny-v2.yaml
  --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml --checkpoint ${suites}/tiny-v2.yaml
  STDERR "--checkpoint: .* is the input file")
hetsim_cli_test(fit_unknown_figure EXPECT_RC 2 ARGS fit ${suites}/tiny-v2.yaml --params gemm,speed
  --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml STDERR "--params: unknown figure 'speed' \\(expected gemm, memory, host, flash or links\\)")
# --format json when nothing can be fitted: the reason on stdout as JSON too (stdout was empty: s50 hunt F4).
hetsim_cli_test(fit_json_when_no_row_can_be_predicted EXPECT_RC 1 ARGS fit tests/cli/suite-no-row-predictable.yaml
  --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml --format json
  STDOUT "\"fitted\": false,\n *\"reason\": \"no row of the suites can be predicted")
# A failed fit is a result with a reason (exit 1), said without "error:" (kept for exit 2).
hetsim_cli_test(fit_nothing_fitted_is_not_an_input_error EXPECT_RC 1 ARGS fit tests/cli/suite-no-row-predictable.yaml
  --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml STDERR "^hetsim fit: nothing fitted: no row of the suites")
# A profile without one of the plan's device types: that part is priced at the catalog's figures,
# which a calibrated `check` read as the model's miss with nothing said (s57 bad-input hunt).
hetsim_cli_test(predict_profile_missing_a_device_of_the_plan EXPECT_RC 0
  ARGS predict --plan plans/local-cpu-tp1-pp1-dp2-uneven.yaml --profile tests/cli/profile-cpu-avx2-only.yaml
  STDERR "note: tests/cli/profile-cpu-avx2-only.yaml: no figures for cpu-scalar, which the plan runs on: priced at the catalog's figures")
# A TP group over two device types is labelled with both, as predict labels it (run said cpu-avx2,
# hiding the slower cpu-scalar that sets the pace; s57 bad-input hunt).
hetsim_cli_test(run_mixed_type_tp_stage_label EXPECT_RC 0
  ARGS run --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml
       --plan ${CMAKE_CURRENT_SOURCE_DIR}/plan-local-cpu-mixed-type-tp.yaml --steps 2
  STDOUT "cpu-avx2\\+cpu-scalar")
# A plan the engine cannot run (TP 3 over 4 heads) with --format json: a Report saying why on
# stdout, as for an infeasible one (there was nothing; s57 bad-input hunt).
hetsim_cli_test(run_cannot_execute_json EXPECT_RC 1
  ARGS run --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --tp 3 --format json
  STDOUT "\"feasible\": false,\n *\"infeasible_reason\": \"[^\"]*tp 3 does not divide model.heads")
# Every figure left at the catalog's (no Korthikanti row uses FlashAttention): no profile, which
# would name nothing and be refused by every verb (s57 bad-input hunt: it was written).
hetsim_cli_test(fit_every_figure_unchanged_writes_no_profile EXPECT_RC 1
  ARGS fit validation/korthikanti-mlsys23-table5.yaml --params flash --out ${CMAKE_CURRENT_BINARY_DIR}/unchanged.yaml
  STDERR "^hetsim fit: nothing fitted: no figure fits the rows better than the catalog's"
  ABSENT_FILE ${CMAKE_CURRENT_BINARY_DIR}/unchanged.yaml)
# describe's cluster JSON: a zone's node groups and its node count under their own keys (the
# zone held "nodes" twice, and readers kept the count: s51 JSON hunt).
hetsim_cli_test(describe_json_zone_node_groups EXPECT_RC 0 ARGS describe clusters/dgx-a100.yaml --format json
  STDOUT "\"node_groups\": \\[\n *\\{\n *\"type\": \"dgx-a100\",\n *\"count\": 4\n *\\}\n *\\],\n *\"nodes\": 4,")
hetsim_cli_test(fit_bad_suite EXPECT_RC 2 ARGS fit ${suites}/bad-v2.yaml --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml
  STDERR "bad-v2.yaml:18:43: error: ")
hetsim_cli_test(validate_missing_profile EXPECT_RC 2 ARGS validate ${suites}/tiny-v2.yaml --profile no/such/profile.yaml
  STDERR "no/such/profile.yaml")
# The profile's errors and the suites' together (s60 hunt: a missing profile hid the suite's).
hetsim_cli_test(validate_missing_profile_and_bad_suite EXPECT_RC 2 ARGS validate ${suites}/bad-v2.yaml
  --profile no/such/profile.yaml STDERR "no/such/profile.yaml: error: .*bad-v2.yaml:18:43: error: ")

# hetsim sweep: a what-if grid of cluster variants, planned point by point; a killed sweep resumes.
hetsim_cli_test(sweep_example EXPECT_RC 0 ARGS sweep sweeps/h100-mi300x-mix.yaml --threads 1 --format csv
  STDOUT "point,workload,hgx-h100.nodes,mi300x-platform.nodes,mi300x-platform.nic_bandwidth,gpus,.*17,llama2-70b,2,4,400Gbps,48,107.0[0-9]*,true,")
# At spot prices, as nodes are reclaimed more often the best plan leaves their type out
# (docs/sweep.md, sweeps/spot-preemption.yaml): L40S nodes at 1/h give way to an A100 node
# (the cheapest per token: three of the four L40S nodes, then one of the two A100 nodes).
hetsim_cli_test(sweep_spot_preemption EXPECT_RC 0 ARGS sweep sweeps/spot-preemption.yaml --threads 1 --format csv
  STDOUT "\n0,gpt3-6.7b,0.05/h,0.03/h,80,[0-9.]+,true,77[0-9][0-9][0-9][.][0-9]+,[^\n]*,24,36[.]15,0[.]130[0-9]*,[^\n]*\"8x\\[g6e-48xlarge tp1 x3 [^\n]*\n1,gpt3-6.7b,0.05/h,1/h,80,[0-9.]+,true,33[0-9][0-9][0-9][.][0-9]+,[^\n]*\"8x\\[p4de-24xlarge")
# A100 and L40S nodes reclaimed 4 times an hour: the search, which estimates each shape's
# goodput, finds the four V100 nodes (reclaimed 0.02/h), not the A100 pair the ranking alone kept.
hetsim_cli_test(sweep_spot_search EXPECT_RC 0 ARGS sweep sweeps/spot-preemption.yaml --threads 1 --format csv
  STDOUT "\n8,gpt3-6.7b,4/h,4/h,80,[0-9.]+,true,5[0-9][0-9][0-9][0-9][.][0-9]+,[^\n]*\"16x\\[p3dn-24xlarge")
# The boxes' port at 10 Gb/s (sweeps/consumer-nic.yaml): the best plan passes pipeline sends of
# one parity through the ports at once, and the row gives its tokens/s if they coincide
# (lockstep_tokens_per_s, below tokens_per_s; simulated: between the two, ParitySends tests).
hetsim_cli_test(sweep_lockstep_figure EXPECT_RC 0 ARGS sweep sweeps/consumer-nic.yaml --threads 1 --format csv
  STDOUT "tokens_per_s,simulated_tokens_per_s,lockstep_tokens_per_s,mfu,[^\n]*\n0,llama2-7b,10Gbps,40,36[.]4,true,6[0-9][0-9][0-9][0-9][.][0-9]+,,5[0-9][0-9][0-9][0-9][.][0-9]+,")
# A search --time-limit stopped before it reached a baseline: the table said "none fits". (Megatron's
# plans on the fastest type's GPUs answer where one fits, as on geo-wan; with one H100 box, point 8,
# none of Llama-2 70B does.)
hetsim_cli_test(sweep_stopped_baseline EXPECT_RC 0 ARGS sweep sweeps/h100-mi300x-mix.yaml --threads 1 --time-limit 1e-300
  STDOUT "\n 8  llama2-70b [^\n]* stopped  [^\n]*\\[search stopped at --time-limit\\]")
# --refine 1: every row with a plan carries the simulator's figure of it (point 15's best plan
# is the one the README's tour shows, 36177 tokens/s predicted, 36176 simulated).
hetsim_cli_test(sweep_refine EXPECT_RC 0 ARGS sweep sweeps/h100-mi300x-mix.yaml --threads 1 --refine 1 --format csv
  STDOUT "tokens_per_s,simulated_tokens_per_s,.*15,llama2-70b,2,2,400Gbps,32,77.44,true,36[0-9][0-9][0-9][.][0-9]+,36[0-9][0-9][0-9][.][0-9]+,")
# 18 searches and 16 simulations: about 15 s alone, past run_cli.cmake's 60 s when ctest runs
# many jobs on two cores. Its result does not depend on time, so it may take longer.
set_tests_properties(cli_sweep_refine PROPERTIES ENVIRONMENT HETSIM_CLI_TIMEOUT_S=600)
hetsim_cli_test(sweep_bad_spec EXPECT_RC 2 ARGS sweep ${bad}/sweep-unknown-node-type.yaml
  STDERR "sweep-unknown-node-type.yaml:[0-9]+:[0-9]+: error: axes\\[0\\].node_type: cluster 'h100-mi300x' has no node type 'hgx-h10'")
hetsim_cli_test(sweep_missing_cluster EXPECT_RC 2 ARGS sweep ${bad}/sweep-missing-cluster.yaml
  STDERR "sweep-missing-cluster.yaml:5:10: error: cluster: no file '.*no-such-cluster.yaml'")
hetsim_cli_test(sweep_checkpoint_is_the_csv EXPECT_RC 2
  ARGS sweep sweeps/h100-mi300x-mix.yaml --out ${CMAKE_CURRENT_BINARY_DIR}/same.csv --checkpoint ${CMAKE_CURRENT_BINARY_DIR}/same.csv
  STDERR "--checkpoint: .*same.csv' is the --out file")
# Neither file exists yet and one is spelled relative, the other with ./: still the same file
# (the checkpoint's records went into the CSV, which its rewrites then replaced).
hetsim_cli_test(sweep_checkpoint_is_the_csv_spelled_otherwise EXPECT_RC 2
  ARGS sweep sweeps/h100-mi300x-mix.yaml --out never-written-same.csv --checkpoint ./never-written-same.csv
  STDERR "--checkpoint: './never-written-same.csv' is the --out file")
# A profile of other GPUs changes nothing: sweep and validate refuse it as predict and plan do.
hetsim_cli_test(sweep_profile_of_other_gpus EXPECT_RC 2 ARGS sweep sweeps/h100-mi300x-mix.yaml
  --profile clusters/profiles/local-cpu.yaml STDERR "names no device type or link class of cluster 'h100-mi300x'")
# ... and names the GPU types a `gpu` axis swaps in among those it expected (it listed the
# cluster's own only, though a profile of a swept-in type is accepted).
hetsim_cli_test(sweep_profile_of_other_gpus_names_swept_types EXPECT_RC 2 ARGS sweep tests/config/fixtures/sweep-gpu-axis.yaml
  --profile tests/config/fixtures/profile-mi300x-only.yaml
  STDERR "of cluster 'dgx-a100' or of the GPU types its sweep swaps in and would change nothing \\(expected a profile of its device types a100-sxm4-80gb, h100-sxm5-80gb or")
hetsim_cli_test(validate_a_cluster_file EXPECT_RC 2 ARGS validate clusters/dgx-a100.yaml
  STDERR "dgx-a100.yaml:[0-9]+:[0-9]+: error: kind: a 'cluster' file, not a validation suite")
hetsim_cli_test(validate_profile_of_other_gpus EXPECT_RC 2 ARGS validate ${suites}/tiny-v2.yaml
  --profile tests/config/fixtures/profile-mi300x-only.yaml STDERR "names no device type or link class of any row's system")
hetsim_cli_test(sweep_unwritable_checkpoint EXPECT_RC 2 ARGS sweep sweeps/h100-mi300x-mix.yaml --checkpoint /proc/version
  STDERR "--checkpoint: cannot create files in folder '/proc'")
add_test(NAME cli_sweep_resumes_a_killed_run
  COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DSPEC=${PROJECT_SOURCE_DIR}/sweeps/h100-mi300x-mix.yaml
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/sweep-resume -P ${CMAKE_CURRENT_SOURCE_DIR}/sweep_resume.cmake
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_sweep_resumes_a_killed_run PROPERTIES LABELS cpu)
add_test(NAME cli_calibrate_resumes_only_samples_timed_alike
  COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DCLUSTER=${PROJECT_SOURCE_DIR}/clusters/local-cpu.yaml
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/calibrate-resume -P ${CMAKE_CURRENT_SOURCE_DIR}/calibrate_resume.cmake)
set_tests_properties(cli_calibrate_resumes_only_samples_timed_alike PROPERTIES LABELS cpu)
