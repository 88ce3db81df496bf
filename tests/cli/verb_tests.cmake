# SPDX-License-Identifier: Apache-2.0
# End-to-end checks of describe, predict, simulate, run, check and plan (included by tests/cli/CMakeLists.txt, which defines hetsim_cli_test,
# ${bad} and ${mixed}).
hetsim_cli_test(version EXPECT_RC 0 ARGS --version STDOUT "hetsim ${PROJECT_VERSION}\nGPU catalog: .*clusters/catalog \\(set by the build")
hetsim_cli_test(help EXPECT_RC 0 ARGS --help STDOUT "describe")
# --help on every verb (the list in cli/verbs.hpp); each verb that prints data takes --format.
foreach(verb describe predict plan validate run simulate check fit sweep)
  hetsim_cli_test(${verb}_help EXPECT_RC 0 ARGS ${verb} --help STDOUT "Usage: .*${verb}.*--format")
endforeach()
# calibrate writes a profile file, not data on stdout: --help only.
hetsim_cli_test(calibrate_help EXPECT_RC 0 ARGS calibrate --help STDOUT "Usage: .*calibrate.*--out")
hetsim_cli_test(no_verb EXPECT_RC 2)
hetsim_cli_test(unknown_option EXPECT_RC 2 ARGS describe --no-such-option clusters/dgx-a100.yaml)
hetsim_cli_test(bad_format EXPECT_RC 2 ARGS describe --format xml clusters/dgx-a100.yaml STDERR "xml")
hetsim_cli_test(describe_bad_file EXPECT_RC 2
  ARGS describe ${bad}/cluster-unknown-gpu.yaml
  STDERR "cluster-unknown-gpu.yaml:6:10: error: node_types.box.gpu: unknown GPU 'a100x'")
# Errors of several files are reported together.
hetsim_cli_test(describe_errors_of_all_files EXPECT_RC 2
  ARGS describe ${bad}/workload-unknown-dtype.yaml clusters/dgx-a100.yaml ${bad}/kind-unknown.yaml
  STDERR "workload-unknown-dtype.yaml:12:10: error: training.dtype: .*kind-unknown.yaml:2:7: error: kind: unknown value 'clustr'")
hetsim_cli_test(describe_missing_file EXPECT_RC 2 ARGS describe no/such/file.yaml STDERR "no/such/file.yaml: error: cannot open")
# Misuse found by scripts/fuzz_inputs.py: a folder given as an input, NaN and non-numeric
# option values, an output file in a folder that does not exist (refused before the work).
hetsim_cli_test(describe_directory EXPECT_RC 2 ARGS describe clusters STDERR "^clusters: error: is a directory")
hetsim_cli_test(describe_profile EXPECT_RC 0 ARGS describe clusters/profiles/local-cpu.yaml
  STDOUT "profile local-cpu .*cpu-avx2: peak fp32 [0-9.]+ GFLOP/s, gemm .*links \\(2, .*ethernet: [0-9.]+ GB/s")
hetsim_cli_test(describe_profile_json EXPECT_RC 0 ARGS describe clusters/profiles/local-cpu.yaml --format json
  STDOUT "\"kind\": \"profile\".*\"gemm_efficiency\".*\"links\"")
hetsim_cli_test(describe_gpu_profile EXPECT_RC 0 ARGS describe tests/config/fixtures/gpu-fp32-profile.yaml
  STDOUT "h200-sxm-141gb: gemm fp32 0.300, half-work")
hetsim_cli_test(predict_missing_inputs_reported_together EXPECT_RC 2
  ARGS predict --cluster clusters --workload no/such.yaml --tp 1
  STDERR "^clusters: error: is a directory .*no/such.yaml: error: cannot open file")
hetsim_cli_test(plan_budget_nan EXPECT_RC 2 ARGS plan ${mixed} --budget-per-hour nan
  STDERR "--budget-per-hour: expected a positive number, got 'nan'")
hetsim_cli_test(predict_sharded_collectives_without_zero EXPECT_RC 2
  ARGS predict --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-2.7b.yaml --dp 16 --sharded-collectives node_nics
  STDERR "--sharded-collectives node_nics: only ZeRO-2 and ZeRO-3 run per-pass sharded collectives \\(expected --zero 2 or 3\\)")
# FSDP's gathers over a node's NICs hide under the compute where DeepSpeed's per-GPU ones do not.
hetsim_cli_test(predict_sharded_collectives_node_nics EXPECT_RC 0
  ARGS predict --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-13b.yaml --dp 32 --zero 3 --micro 1
       --recompute full --sharded-collectives node_nics
  STDOUT "dp comm +0 s ")
# An unknown or mistyped verb got CLI11's "A subcommand is required".
hetsim_cli_test(unknown_verb EXPECT_RC 2 ARGS Predict --cluster clusters/local-cpu.yaml
  STDERR "hetsim: error: unknown verb 'Predict' \\(did you mean 'predict'\\? expected one of: describe predict")
hetsim_cli_test(predict_tp_beyond_int EXPECT_RC 2
  ARGS predict --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --tp 99999999999999999999
  STDERR "--tp: expected a positive integer up to 2147483647, got '99999999999999999999'")
hetsim_cli_test(predict_no_plan EXPECT_RC 2  # was "give either --plan or ... (not both)"
  ARGS predict --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml
  STDERR "no plan given \\(expected --plan FILE, or the shorthand --tp/--pp/--dp\\)")
hetsim_cli_test(predict_tp_not_a_number EXPECT_RC 2
  ARGS predict --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --tp abc
  STDERR "--tp: expected a positive integer, got 'abc'")
hetsim_cli_test(run_lr_nan EXPECT_RC 2
  ARGS run --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --tp 1 --lr nan STDERR "--lr: expected a positive number")
hetsim_cli_test(run_seed_negative EXPECT_RC 2
  ARGS run --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --tp 1 --seed -1
  STDERR "--seed: expected an integer between 0 and 18446744073709551615, got '-1'")
# Read through a double, 2^64 .. 2^64 + 2047 became 2^64 - 1 and ran (s24 audit).
hetsim_cli_test(run_seed_beyond_64_bits EXPECT_RC 2
  ARGS run --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --tp 1 --seed 18446744073709551616
  STDERR "--seed: expected an integer between 0 and 18446744073709551615, got '18446744073709551616'")
hetsim_cli_test(check_steps_in_the_project_format EXPECT_RC 2
  ARGS check --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --plan plans/local-cpu-tp1-pp1-dp2.yaml
       --profile clusters/profiles/local-cpu.yaml --steps 1
  STDERR "--steps: expected an integer between 2 and 10000, got '1'")
# check's JSON lists what the engine says of its kernels (a GPU rank: which GEMM library ran;
# nothing on the CPU backend).
hetsim_cli_test(check_json_lists_the_engine_notes EXPECT_RC 0
  ARGS check --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --plan plans/local-cpu-tp1-pp1-dp2.yaml
       --profile clusters/profiles/local-cpu.yaml --steps 2 --tolerance 10000% --format json
  STDOUT "\"pass\": true,[^}]*\"measured_notes\": \\[\\],")
# --tolerance takes a percentage too; a bare number above 1 was read as a fraction, so "25" passed
# every run at 2500% (s68 hunt).
hetsim_cli_test(check_tolerance_percent_bare_above_one EXPECT_RC 2
  ARGS check --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --plan plans/local-cpu-tp1-pp1-dp2.yaml
       --profile clusters/profiles/local-cpu.yaml --tolerance 25
  STDERR "--tolerance: expected a positive fraction \\(\"0.25\"\\) or percentage \\(\"25%\"\\), got '25': as a fraction that is 2500%; write \"25%\" for 25 percent, or \"2500%\"")
# --grad-buckets acts on an overlapped sync only, and 2^31 - 1 of them ran out of memory (s24 audit).
# --time-limit: a run still going at the limit ends the verb (exit 1) with a Report of a failed
# simulation, how far it got, and no trace (here 306M unfolded flows, minutes at the fastest); one
# that ends in time is untouched; the limit is a number of seconds.
hetsim_cli_test(simulate_time_limit_stops_a_long_run EXPECT_RC 1
  ARGS simulate --cluster clusters/bench1024.yaml --workload workloads/gpt3-175b.yaml --tp 8 --pp 8 --dp 16 --recompute full
       --no-fold --time-limit 1 --trace ${CMAKE_CURRENT_BINARY_DIR}/time-limit-trace.json
  STDOUT "engine +sim\nfeasible +no: simulation failed: stopped at --time-limit 1 s of wall time"
  STDERR "hetsim simulate: error: simulation failed: stopped at --time-limit 1 s of wall time \\(last report: about [0-9.]+M flows to simulate[^\n]*\\); no --trace was written[^\n]*without --no-fold"
  ABSENT_FILE ${CMAKE_CURRENT_BINARY_DIR}/time-limit-trace.json)
hetsim_cli_test(simulate_time_limit_stops_a_long_run_json EXPECT_RC 1
  ARGS simulate --cluster clusters/bench1024.yaml --workload workloads/gpt3-175b.yaml --tp 8 --pp 8 --dp 16 --recompute full
       --no-fold --time-limit 1 --format json
  STDOUT "^{\n  \"engine\": \"sim\",\n  \"feasible\": false,\n  \"infeasible_reason\": \"simulation failed: stopped at --time-limit 1 s")
hetsim_cli_test(simulate_time_limit_reached_by_no_short_run EXPECT_RC 0
  ARGS simulate --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 1 --dp 4 --time-limit 600
  STDOUT "engine +sim\niteration time +3[.]26 s")
hetsim_cli_test(simulate_time_limit_huge_is_none EXPECT_RC 0
  ARGS simulate --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 1 --dp 4 --time-limit 1e300
  STDOUT "engine +sim\niteration time +3[.]26 s")
# A duration takes its unit as the inputs do (cli/option_checks.hpp); a unit of no duration is refused.
hetsim_cli_test(simulate_time_limit_takes_a_unit EXPECT_RC 0
  ARGS simulate --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 1 --dp 4 --time-limit 5min
  STDOUT "engine +sim\niteration time +3[.]26 s")
hetsim_cli_test(simulate_time_limit_unit_must_be_a_time EXPECT_RC 2
  ARGS simulate --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 1 --dp 4 --time-limit 5GB
  STDERR "--time-limit: .GB. in .5GB. is a unit of a size")
hetsim_cli_test(simulate_grad_buckets_without_overlap EXPECT_RC 2
  ARGS simulate --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 1 --dp 4 --grad-buckets 4
  STDERR "--grad-buckets: the plan's gradient sync is one collective after the backward pass")
# ZeRO-3 reduce-scatters per pass: buckets were refused as "one collective after the backward"
# without overlap and silently changed nothing with it (s65 trace hunt).
hetsim_cli_test(simulate_grad_buckets_zero3 EXPECT_RC 2
  ARGS simulate --plan plans/dgx-a100-fsdp-dp32.yaml --grad-buckets 4
  STDERR "--grad-buckets: under ZeRO-3 each pass reduce-scatters its own gradients")
hetsim_cli_test(simulate_grad_buckets_bounded EXPECT_RC 2
  ARGS simulate --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-6.7b.yaml
       --plan plans/dgx-a100-tp8-pp1-dp4-overlap.yaml --grad-buckets 2147483647
  STDERR "--grad-buckets: expected an integer between 1 and 4096, got '2147483647'")
# --inject-fault that names a rank or step the run does not have would never fire: bad input.
set(run_tiny run|--cluster|clusters/local-cpu.yaml|--workload|workloads/tiny-gpt.yaml|--pp|2|--dp|2|--steps|2)
# A failed run with --format json says so on stdout too (it printed nothing there: s51 JSON hunt).
hetsim_cli_test(run_failed_json EXPECT_RC 1 ARGS ${run_tiny} --inject-fault 1 --format json
  STDOUT "\"completed\": false,\n *\"reason\": \"rank 1 failed: injected fault at step 1\""
  STDERR "hetsim run: rank 1 failed")
hetsim_cli_test(run_inject_fault_rank_outside_plan EXPECT_RC 2 ARGS ${run_tiny} --inject-fault 9
  STDERR "--inject-fault: rank 9 is outside the plan's ranks 0\\.\\.3")
hetsim_cli_test(run_inject_fault_negative_rank EXPECT_RC 2 ARGS ${run_tiny} --inject-fault -1:throw
  STDERR "--inject-fault: rank -1 is outside the plan's ranks 0\\.\\.3")
hetsim_cli_test(run_inject_fault_step_outside_run EXPECT_RC 2 ARGS ${run_tiny} --inject-fault 1:kill:3
  STDERR "--inject-fault: step 3 is outside the run's steps 1\\.\\.2 \\(--steps\\)")
# A step beyond int's range is outside the run too, as written (it read as malformed).
hetsim_cli_test(run_inject_fault_step_beyond_int EXPECT_RC 2 ARGS ${run_tiny} --inject-fault 1:kill:99999999999
  STDERR "--inject-fault: step 99999999999 is outside the run's steps 1\\.\\.2 \\(--steps\\)")
hetsim_cli_test(run_inject_fault_trailing_text EXPECT_RC 2 ARGS ${run_tiny} --inject-fault 1x
  STDERR "--inject-fault: expected RANK.*STEP.*, got '1x'")
foreach(case "trailing_colon:1:throw:2:" "plus:+1" "space: 1")
  string(REGEX REPLACE "^([a-z_]+):(.*)$" "\\1" id "${case}")
  string(REGEX REPLACE "^([a-z_]+):(.*)$" "\\2" fault "${case}")
  hetsim_cli_test(run_inject_fault_malformed_${id} EXPECT_RC 2 ARGS ${run_tiny} --inject-fault ${fault}
    STDERR "--inject-fault: expected RANK")
endforeach()
hetsim_cli_test(plan_emit_into_missing_folder EXPECT_RC 2 ARGS plan ${mixed} --emit-plan no/such/folder/p.yaml
  STDERR "--emit-plan: folder 'no/such/folder' does not exist")
# The catalog table shows the sustained GEMM rate the cost model uses (peak x efficiency), and
# the JSON every efficiency key.
hetsim_cli_test(describe_catalog_sustained EXPECT_RC 0 ARGS describe clusters/catalog/amd.yaml
  STDOUT "mi300x +amd +1.31 PFLOP/s +601 TFLOP/s")
hetsim_cli_test(describe_catalog_json_efficiency EXPECT_RC 0 ARGS describe --format json clusters/catalog/nvidia.yaml
  STDOUT "\"gemm\": 0.63,[^}]*\"gemm_fp32\": 0.8,[^}]*\"flash\": 0.59")
# A catalog file outside the folder GPU types are read from reads fine, but no cluster finds its
# types: describe says so (s67 walkthrough); a file of the folder gets no note.
hetsim_cli_test(describe_catalog_elsewhere_notes_it EXPECT_RC 0 ARGS describe tests/config/fixtures/extra-gpu-catalog.yaml
  STDOUT "rtx5090 +nvidia.*note: this file is not in the folder GPU types are read from")
hetsim_cli_test(describe_catalog_elsewhere_json EXPECT_RC 0 ARGS describe --format json tests/config/fixtures/extra-gpu-catalog.yaml
  STDOUT "\"in_active_catalog\": false")
hetsim_cli_test(describe_catalog_in_folder_no_note EXPECT_RC 0 ARGS describe clusters/catalog/amd.yaml
  STDOUT_NOT "note: this file is not in the folder")
hetsim_cli_test(describe_cluster EXPECT_RC 0 ARGS describe clusters/mixed-a100-v100.yaml
  STDOUT "total: 6 nodes, 48 GPUs \\(16 a100-sxm4-80gb, 32 v100-sxm2-32gb\\)")
hetsim_cli_test(describe_workload_json EXPECT_RC 0 ARGS describe --format json workloads/llama2-7b.yaml
  STDOUT "\"kind\": \"workload\".*\"layers\": 32")
hetsim_cli_test(describe_plan_with_inputs EXPECT_RC 0
  ARGS describe tests/config/fixtures/ok-plan.yaml --cluster tests/config/fixtures/two-boxes.yaml
       --workload tests/config/fixtures/tiny-model.yaml
  STDOUT "dp 2, pp 1-2 \\(the replicas' pipelines differ in depth\\), 9 GPUs")
# --cluster/--workload check plans; with no plan among the files they are loaded and said to be unused.
hetsim_cli_test(describe_option_files_unused EXPECT_RC 0
  ARGS describe clusters/mixed-a100-v100.yaml --workload workloads/llama2-7b.yaml
  STDERR "note: --workload 'workloads/llama2-7b.yaml' was loaded but not used: it checks plans, and no plan is among the files")
# A plan whose header cluster and workload both fail to load: the errors of both (s60 hunt: the
# cluster's hid the workload's).
hetsim_cli_test(describe_plan_with_broken_header_files EXPECT_RC 2 ARGS describe tests/config/broken-context/plan.yaml
  STDERR "broken-context/cluster.yaml:22:11: error: .*broken-context/workload.yaml:8:11: error: model.layers")
hetsim_cli_test(describe_plan_zero3_keys EXPECT_RC 0 ARGS describe tests/config/fixtures/fsdp-plan.yaml
  STDOUT "zero 3 \\(no prefetch\\) \\(gathers over node NICs\\), grad_sync auto")
hetsim_cli_test(describe_plan_zero3_keys_json EXPECT_RC 0 ARGS describe tests/config/fixtures/fsdp-plan.yaml --format json
  STDOUT "\"zero3_prefetch\": false,\n *\"sharded_collectives\": \"node_nics\"")
hetsim_cli_test(describe_plan_header_missing_cluster EXPECT_RC 2
  ARGS describe tests/cli/plan-header-names-missing-cluster.yaml
  STDERR "plan-header-names-missing-cluster.yaml:2:1: error: header names cluster 'no-such-cluster'")
# predict/simulate/run take the cluster and workload the plan's header names when the flags are
# left out (they were required flags); a header naming none, or a missing file, says so.
hetsim_cli_test(predict_plan_header_gives_cluster_and_workload EXPECT_RC 0
  ARGS predict --plan plans/mixed-a100-v100-tp8-pp3-dp2.yaml
  STDOUT "iteration time +30.4 s\n.*a100-sxm4-80gb +16 GPUs")
hetsim_cli_test(predict_plan_header_names_missing_cluster EXPECT_RC 2
  ARGS predict --plan tests/cli/plan-header-names-missing-cluster.yaml
  STDERR "plan-header-names-missing-cluster.yaml:2:1: error: header names cluster 'no-such-cluster', but neither clusters/no-such-cluster.yaml nor no-such-cluster exists")
# --workload other than the header's is used, and said so as for --cluster (it was silent; s56 hunt).
hetsim_cli_test(predict_plan_header_other_workload_noted EXPECT_RC 0
  ARGS predict --plan plans/dgx-a100-tp4-pp2-dp4.yaml --workload workloads/gpt3-6.7b.yaml
  STDERR "hetsim: note: plans/dgx-a100-tp4-pp2-dp4.yaml: the plan's header names workload 'workloads/llama2-7b.yaml'; --workload 'workloads/gpt3-6.7b.yaml' is used instead")
# A header naming a missing cluster and no workload: both problems at once (only "--workload is
# required" was said; s56 bad-input hunt).
hetsim_cli_test(predict_plan_header_missing_cluster_and_no_workload EXPECT_RC 2
  ARGS predict --plan tests/cli/plan-header-names-only-a-missing-cluster.yaml
  STDERR "plan-header-names-only-a-missing-cluster.yaml:1:1: error: the header names no workload and --workload is not given[^\n]*\n[^\n]*plan-header-names-only-a-missing-cluster.yaml:2:1: error: header names cluster 'no-such-cluster'")
# A name given as a path: the message said "but no-such-folder/no-such-cluster.yaml exists" (s56 hunt).
hetsim_cli_test(predict_plan_header_missing_cluster_file EXPECT_RC 2
  ARGS predict --plan tests/cli/plan-header-names-missing-cluster-file.yaml
  STDERR "plan-header-names-missing-cluster-file.yaml:2:1: error: header names cluster 'no-such-folder/no-such-cluster.yaml', but no no-such-folder/no-such-cluster.yaml exists beside the plan")
hetsim_cli_test(simulate_plan_without_header_needs_the_flags EXPECT_RC 2
  ARGS simulate --plan tests/cli/plan-backwards-range.yaml --cluster clusters/dgx-a100.yaml
  STDERR "hetsim simulate: error: --workload is required \\(see `hetsim simulate --help`\\): the --plan's header names no workload")
# Two header lines naming different clusters: describe refused the file, predict took the first (s50 hunt).
hetsim_cli_test(predict_plan_header_two_clusters EXPECT_RC 2
  ARGS predict --plan tests/cli/plan-header-two-clusters.yaml
  STDERR "plan-header-two-clusters.yaml:3:1: error: cluster: the header names cluster 'dgx-a100' after '[^']*local-cpu.yaml' on line 2")
hetsim_cli_test(predict_missing_plan_without_flags EXPECT_RC 2 ARGS predict --plan no/such/plan.yaml
  STDERR "--cluster is required \\(see `hetsim predict --help`\\), or a --plan whose header names it, and --plan 'no/such/plan.yaml' does not exist")
# Two header lines naming different clusters: the first was taken without a word.
hetsim_cli_test(describe_plan_header_two_clusters EXPECT_RC 2
  ARGS describe tests/cli/plan-header-two-clusters.yaml
  STDERR "plan-header-two-clusters.yaml:3:1: error: cluster: the header names cluster 'dgx-a100' after '[^']*local-cpu.yaml' on line 2 \\(expected one cluster in the header\\)")
# A header naming a folder was reported as the folder's own error, not at the header's line.
hetsim_cli_test(describe_plan_header_names_a_folder EXPECT_RC 2
  ARGS describe tests/cli/plan-header-names-a-folder.yaml
  STDERR "plan-header-names-a-folder.yaml:2:1: error: header names cluster 'clusters', which is a folder \\(expected a cluster file, or its name\\)")
# A plan described with its header's inputs: every bundled plan names them (plans/README.md).
hetsim_cli_test(describe_plan_from_header EXPECT_RC 0 ARGS describe plans/local-cpu-tp2-pp2-dp1.yaml
  STDOUT "checked against clusters/local-cpu.yaml and workloads/tiny-gpt.yaml")
# The plan's header wins over the one cluster of the command line (a different one here).
hetsim_cli_test(describe_plan_header_before_other_files EXPECT_RC 0
  ARGS describe clusters/dgx-a100.yaml plans/mixed-a100-v100-tp8-pp3-dp2.yaml
  STDOUT "checked against clusters/mixed-a100-v100.yaml")

# hetsim plan (issue 5): JSON keys, baselines, infeasible input, usage errors, emitted plan
# accepted by predict, simulator refinement.
hetsim_cli_test(plan_json EXPECT_RC 0 ARGS plan ${mixed} --top 2 --format json
  STDOUT "\"search_time_s\".*\"plans_evaluated\".*\"plans_pruned\".*\"memory_headroom_bytes\".*\"baselines\".*\"uniform\".*\"tokens_per_s\".*\"fastest_type_only\"")
# A plan over capacity still prints its figures, and the assumed ones are noted (s67 walkthrough).
hetsim_cli_test(predict_infeasible_notes_assumed_efficiency EXPECT_RC 1 ARGS predict --cluster clusters/mixed-a100-v100.yaml
  --workload workloads/gpt3-13b.yaml --tp 1 --pp 1 --dp 32
  STDOUT "feasible +no: stage 0 of replica 16 needs.*note: v100-sxm2-32gb has no `efficiency.gemm`")
# The plans' ranking rests on the catalog's assumed figures as predict's does: plan says so too
# (s67 new-user walkthrough: a new GPU type at the default GEMM efficiency ranked first, unnoted).
hetsim_cli_test(plan_notes_assumed_efficiency EXPECT_RC 0 ARGS plan ${mixed} --top 1
  STDOUT "note: v100-sxm2-32gb has no `efficiency.gemm` in the catalog or a profile")
hetsim_cli_test(plan_notes_assumed_efficiency_json EXPECT_RC 0 ARGS plan ${mixed} --top 1 --format json
  STDOUT "\"notes\": \\[\n +\"v100-sxm2-32gb has no `efficiency.gemm`")
# A stage's GPUs as `describe` writes them: the selector and the global indices.
hetsim_cli_test(plan_json_stage_gpus EXPECT_RC 0 ARGS plan ${mixed} --top 1 --format json
  STDOUT "\"stages\": \\[\n +\\{\n +\"layers\": [0-9]+,\n +\"tp\": [0-9]+,\n +\"gpu_type\": \"[a-z0-9-]+\",\n +\"gpus_text\": \"[^\"]+/gpu\\[[0-9-]+\\]\",\n +\"gpus\": \\[\n +[0-9]+")
hetsim_cli_test(plan_table EXPECT_RC 0 ARGS plan ${mixed} STDOUT "uniform: [0-9]+ tokens/s, best plan has [0-9.]+x its tokens/s")
# At spot prices (spot-mix's node types are reclaimed 0.02-0.05 times an hour): the goodput the
# preemptions leave, which the plans and the baselines are compared by (models/preemption.hpp).
hetsim_cli_test(plan_spot_table EXPECT_RC 0 ARGS plan --cluster clusters/spot-mix.yaml --workload workloads/gpt3-6.7b.yaml
  --top 2 --spot STDOUT "tokens/s +goodput +reclaimed/h.*uniform: [0-9]+ goodput tokens/s, best plan has [0-9.]+x its goodput tokens/s")
hetsim_cli_test(plan_spot_json EXPECT_RC 0 ARGS plan --cluster clusters/spot-mix.yaml --workload workloads/gpt3-6.7b.yaml
  --top 1 --spot --format json
  STDOUT "\"goodput_tokens_per_s\": [0-9.e+]+,[^}]*\"spot\": {[^}]*\"preemptions_per_hour\": 0\\.[0-9]+[^}]*\"checkpoint_interval_s\"[^}]*\"goodput_fraction\": 0\\.9")
hetsim_cli_test(predict_spot_table EXPECT_RC 0 ARGS predict --cluster clusters/spot-mix.yaml --workload workloads/gpt3-6.7b.yaml
  --plan plans/spot-mix-tp4-pp2-dp4.yaml --spot
  STDOUT "cost +\\$[0-9.]+/h.*spot \\(preemptions\\)\n  reclaimed +0[.][0-9]+ per hour\n  checkpoint +[0-9.]+ GiB, [0-9.]+ s to write, every [0-9.]+ min\n  restart +5[.][0-9]+ min\n  goodput +9[0-9][.][0-9]% = [0-9]+ tokens/s")
hetsim_cli_test(predict_spot_json EXPECT_RC 0 ARGS predict --cluster clusters/spot-mix.yaml --workload workloads/gpt3-6.7b.yaml
  --plan plans/spot-mix-tp4-pp2-dp4.yaml --spot --format json
  STDOUT "\"extra\": {[^}]*\"goodput_tokens_per_s\": [0-9.e+]+,[^}]*\"spot_goodput_fraction\": 0[.]9[^}]*\"spot_preemptions_per_hour\": 0[.][0-9]+")
# --ops: the cost model's ops of each distinct stage (models/op_breakdown.hpp), after the stages.
hetsim_cli_test(predict_ops_table EXPECT_RC 0 ARGS predict --cluster clusters/mixed-a100-v100.yaml
  --workload workloads/gpt3-6.7b.yaml --plan plans/mixed-a100-v100-tp8-pp3-dp2.yaml --ops
  STDOUT "stages\n.*ops per micro-batch of replicas 0-1, stage 0 \\(a100-sxm4-80gb, 18 layers, tp 8\\): forward [0-9.]+ ms, backward [0-9.]+ ms \\(pipeline sends [0-9.]+ us and 0 s\\)\n  op +forward +recompute +backward +total +share +rate\n  mlp_[a-z]+ +[0-9.]+ ms +- +[0-9.]+ ms +[0-9.]+ ms +[0-9.]+% +[0-9.]+ TFLOP/s\n.*ops per micro-batch of replicas 0-1, stage 2 \\(v100-sxm2-32gb, 7 layers, tp 8\\).*  lm_head ")
# --as-executed prices what `run` trains (Runner.TheModelPricesWhatTheEngineRuns checks the ops),
# and the report says so.
hetsim_cli_test(predict_as_executed EXPECT_RC 0 ARGS predict --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --plan plans/local-cpu-tp1-pp2-dp1.yaml --as-executed --ops
  STDOUT "  qkv +[0-9.]+ us.*note: priced as `hetsim run` trains the plan: the execution engine's own kernels, no dropout")
# Exit 1 as `run` and `check` give for the same workload: valid inputs the engine cannot train.
hetsim_cli_test(predict_as_executed_refuses_what_run_cannot_train EXPECT_RC 1 ARGS predict --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-1.3b.yaml --tp 1 --pp 1 --dp 8 --as-executed
  STDERR "--as-executed: cannot execute the plan: the execution engine trains in FP32 only .*expected dtype: fp32")
# Without spot prices the spot total is the on-demand total, to the last digit (it was summed per
# node: 2257.2799999999984 against 2257.28).
hetsim_cli_test(describe_spot_total_without_spot_prices EXPECT_RC 0 ARGS describe clusters/bench1024.yaml --format json
  STDOUT "\"price_per_hour\": 2257.28,\n *\"spot_price_per_hour\": 2257.28\n")
# plan --spot on a cluster without spot prices: the table's note is in the JSON too.
hetsim_cli_test(plan_spot_note_json EXPECT_RC 0 ARGS plan --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-1.3b.yaml --spot --format json --threads 1
  STDOUT "\"spot_note\": \"--spot: no node type of the cluster has a spot_price")
# Nothing preempted: no checkpoint interval and no restart (null; 0 read as "checkpoint continuously").
hetsim_cli_test(predict_spot_never_preempted_json EXPECT_RC 0 ARGS predict --spot --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 1 --dp 4 --format json
  STDOUT "\"spot_checkpoint_interval_s\": null,.*\"spot_preemptions_per_hour\": 0,\n *\"spot_restart_s\": null")
# With --format json every exit-1 refusal is a Report on stdout (scripts found it empty: s65 hunt).
hetsim_cli_test(predict_as_executed_refusal_is_a_json_report EXPECT_RC 1 ARGS predict --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-1.3b.yaml --tp 1 --pp 1 --dp 8 --as-executed --format json
  STDOUT "^{\n  \"engine\": \"analytic\",\n  \"feasible\": false,\n  \"infeasible_reason\": \"--as-executed: cannot execute the plan: the execution engine trains in FP32 only")
hetsim_cli_test(check_cannot_execute_is_a_json_report EXPECT_RC 1 ARGS check --cluster clusters/local-cpu.yaml
  --workload tests/config/fixtures/tiny-gpt-sgd.yaml --plan plans/local-cpu-tp1-pp1-dp2.yaml
  --profile clusters/profiles/local-cpu.yaml --format json
  STDOUT "^{\n  \"engine\": \"exec\",\n  \"feasible\": false,\n  \"infeasible_reason\": \"cannot execute the plan: the execution engine's optimizer is Adam")
hetsim_cli_test(predict_ops_json EXPECT_RC 0 ARGS predict --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-13b.yaml
  --tp 8 --pp 1 --dp 4 --sequence-parallel --tp-comm-overlap --ops --format json
  STDOUT "\"stage_ops\": \\[[^]]*\"stages\": \"replicas 0-3, stage 0\",[^]]*\"name\": \"tp_attn\",[^}]*\"kind\": \"tp_reduce_scatter\",[^}]*\"overlapped\": true")
hetsim_cli_test(plan_tp_comm_overlap EXPECT_RC 0 ARGS plan --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-13b.yaml --top 1
  --tp-comm-overlap STDOUT "sp\\+overlap")
hetsim_cli_test(plan_nothing_fits EXPECT_RC 1 ARGS plan --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-175b.yaml
  STDOUT "no plan: .*does not fit")
# The search space restricted to what a stack runs (docs/planner.md "Restricting the search"):
# every listed plan and baseline uses the knobs given.
hetsim_cli_test(plan_search_space EXPECT_RC 0 ARGS plan ${mixed} --top 3 --tp-degrees 4 --interleave 1
  --recompute selective --zero 0 --micro-batches 2
  STDOUT "\n1 [^\n]*tp4 x[0-9][^\n]*\\(micro 2, selective, 1f1b, sp, zero 0\\)\n2 [^\n]*\\(micro 2, selective, 1f1b, sp, zero 0\\)\n3 [^\n]*\\(micro 2, selective, 1f1b, sp, zero 0\\)\nbaselines:\n  uniform: [^\n]*tp4[^\n]*\\(micro 2, selective, 1f1b, sp, zero 0\\)")
hetsim_cli_test(plan_search_space_json EXPECT_RC 0 ARGS plan ${mixed} --top 1 --zero 0 --interleave 1 --format json
  STDOUT "\"search_space\": {[^}]*\"interleave\": \\[\n *1\n *\\],[^}]*\"zero\": \\[\n *0\n *\\],\n *\"sequence_parallel\": true,\n *\"sharded_collectives\": \"member_nic\",\n *\"one_vendor\": false\n *}")
hetsim_cli_test(plan_search_zero2 EXPECT_RC 2 ARGS plan ${mixed} --zero 1,2
  STDERR "--zero: the planner does not search ZeRO-2: a rank keeps only its shard of the gradients")
# ZeRO-3 (FSDP) plans: one stage per replica, equal micro-batch counts (planner_zero3.cpp).
# A plan of one replica may stand beside them (its ZeRO stage changes nothing: docs/planner.md).
hetsim_cli_test(plan_search_zero3 EXPECT_RC 0 ARGS plan ${mixed} --zero 3 --top 2
  STDOUT "\n1 [^\n]*x1 L32\\] m[0-9]+ \\([^\n]*, zero 3\\)\n2 [^\n]*( 1x\\[[^\n]*|x1 L32\\] m[0-9]+ \\([^\n]*, zero 3\\))\n")
hetsim_cli_test(plan_sharded_collectives_without_zero3 EXPECT_RC 2 ARGS plan ${mixed} --sharded-collectives node_nics
  STDERR "--sharded-collectives prices the ZeRO-3 plans of the search, and it searches none \\(expected --zero with 3")
hetsim_cli_test(plan_search_bad_tp EXPECT_RC 2 ARGS plan ${mixed} --tp-degrees 2,0 STDERR "--tp-degrees: 0 is no TP degree \\(expected 1 to 1024\\)")
hetsim_cli_test(plan_search_bad_recompute EXPECT_RC 2 ARGS plan ${mixed} --recompute none,some STDERR "--recompute: unknown value 'some' \\(expected one of: none, selective, full\\)")
# CLI11's delimiter dropped empty items ("1,,2" searched 1,2) and a lone "," took the next
# argument as the list; items with spaces around them are what the user meant.
hetsim_cli_test(plan_search_empty_item EXPECT_RC 2 ARGS plan ${mixed} --tp-degrees 1,,2
  STDERR "--tp-degrees: empty item in '1,,2' \\(expected comma-separated values\\)")
hetsim_cli_test(plan_search_lone_comma EXPECT_RC 2 ARGS plan ${mixed} --micro-batches , --top 1
  STDERR "--micro-batches: empty item in ','")
# A value listed twice (searched once) is refused, as in a sweep's `search:` lists (s52 hunt).
hetsim_cli_test(plan_search_value_twice EXPECT_RC 2 ARGS plan ${mixed} --tp-degrees 1,01
  STDERR "--tp-degrees: '1' is listed twice in '1,01' \\(expected each value once\\)")
hetsim_cli_test(plan_search_spaced_items EXPECT_RC 0 ARGS plan ${mixed} --tp-degrees "4, 8" --top 1
  STDOUT "\n1 [^\n]*tp[48] ")
# Without --micro a dp that does not divide the global batch was reported as "not divisible by
# dp*micro (1023)", a micro-batch size the user never gave.
hetsim_cli_test(predict_dp_not_dividing_the_batch EXPECT_RC 1 ARGS predict ${mixed} --tp 1 --pp 1 --dp 3
  STDOUT "feasible +no: training.global_batch \\(1024\\) is not divisible by dp \\(3\\)")
# A shorthand plan that cannot be made is a Report like any infeasible one: JSON readers got an
# empty stdout (the reason went to stderr alone), and so did simulate's.
hetsim_cli_test(predict_tp_not_dividing_the_heads_json EXPECT_RC 1 ARGS predict --format json
  --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-6.7b.yaml --tp 3 --pp 1 --dp 1
  STDOUT "\"feasible\": false,[^}]*\"infeasible_reason\": \"[^\"]*tp 3 does not divide model.heads \\(32\\)")
hetsim_cli_test(simulate_tp_not_dividing_the_heads EXPECT_RC 1 ARGS simulate
  --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-6.7b.yaml --tp 3 --pp 1 --dp 1
  STDOUT "engine +sim\nfeasible +no: [^\n]*tp 3 does not divide model.heads")
# The same in a plan file: it was an error of the file (exit 2), as if the file were malformed.
set(tp3_plan --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-6.7b.yaml
  --plan ${CMAKE_CURRENT_SOURCE_DIR}/plan-tp3-gpt3-6.7b.yaml)
hetsim_cli_test(predict_plan_file_tp_not_dividing_the_heads EXPECT_RC 1 ARGS predict ${tp3_plan}
  STDOUT "feasible +no: [^\n]*plan-tp3-gpt3-6.7b.yaml:12:15: replicas\\[0\\].stages\\[0\\].gpus: tp 3 does not divide model.heads \\(32\\)")
hetsim_cli_test(run_plan_file_tp_not_dividing_the_heads EXPECT_RC 1 ARGS run ${tp3_plan}
  STDERR "hetsim run: infeasible plan: [^\n]*plan-tp3-gpt3-6.7b.yaml:12:15: [^\n]*tp 3 does not divide model.heads")
hetsim_cli_test(describe_plan_file_tp_not_dividing_the_heads EXPECT_RC 0 ARGS describe
  ${CMAKE_CURRENT_SOURCE_DIR}/plan-tp3-gpt3-6.7b.yaml
  STDOUT "infeasible: [^\n]*tp 3 does not divide model.heads [^\n]*\\(predict, simulate and run refuse it\\)")
# An interleave factor that does not divide a stage's layers: the same (it was an error of the file).
set(interleave3_plan --plan ${CMAKE_CURRENT_SOURCE_DIR}/plan-interleave3-llama2-7b.yaml)
hetsim_cli_test(predict_plan_file_interleave_not_dividing_the_layers EXPECT_RC 1 ARGS predict ${interleave3_plan}
  STDOUT "feasible +no: [^\n]*plan-interleave3-llama2-7b.yaml:12:18: replicas\\[0\\].stages\\[0\\].layers: 16 is not divisible by interleave \\(3\\)[^\n]*:13:18: replicas\\[0\\].stages\\[1\\].layers")
hetsim_cli_test(simulate_plan_file_interleave_not_dividing_the_layers EXPECT_RC 1 ARGS simulate ${interleave3_plan} --format json
  STDOUT "\"engine\": \"sim\",\n  \"feasible\": false,\n  \"infeasible_reason\": \"[^\"]*16 is not divisible by interleave \\(3\\)")
hetsim_cli_test(run_plan_file_interleave_not_dividing_the_layers EXPECT_RC 1 ARGS run ${interleave3_plan}
  STDERR "hetsim run: infeasible plan: [^\n]*plan-interleave3-llama2-7b.yaml:12:18: [^\n]*16 is not divisible by interleave \\(3\\)")
hetsim_cli_test(describe_plan_file_interleave_not_dividing_the_layers EXPECT_RC 0 ARGS describe
  ${CMAKE_CURRENT_SOURCE_DIR}/plan-interleave3-llama2-7b.yaml
  STDOUT "infeasible: [^\n]*16 is not divisible by interleave \\(3\\)[^\n]*\\(predict, simulate and run refuse it\\)")
hetsim_cli_test(plan_search_no_tp_left EXPECT_RC 1 ARGS plan ${mixed} --tp-degrees 3
  STDOUT "no plan: no TP degree searched \\(3\\) suits the model and the nodes \\(a TP degree divides the 32 heads")
hetsim_cli_test(plan_search_sp_and_overlap EXPECT_RC 2 ARGS plan ${mixed} --no-sequence-parallel --tp-comm-overlap
  STDERR "--tp-comm-overlap overlaps the sequence-parallel collectives: it needs sequence parallelism")
hetsim_cli_test(plan_search_no_micro_left EXPECT_RC 1 ARGS plan ${mixed} --micro-batches 3,5
  STDOUT "no plan: no micro-batch size searched \\(3, 5\\) divides the global batch of 1024")
hetsim_cli_test(plan_budget_needs_amount EXPECT_RC 2 ARGS plan ${mixed} --objective budget STDERR "--budget-per-hour")
# --budget-per-hour beside --objective cost was ignored, beside throughput it replaced it.
hetsim_cli_test(plan_budget_with_cost_objective EXPECT_RC 2 ARGS plan ${mixed} --objective cost --budget-per-hour 50
  STDERR "cannot be combined with --objective cost")
hetsim_cli_test(plan_budget EXPECT_RC 0 ARGS plan ${mixed} --budget-per-hour 50 --format json STDOUT "\"cost_per_hour\": 40.97")
# A folder that exists but takes no new file (/proc) failed only after the search, with exit 1
# and the OS's "No such file or directory".
hetsim_cli_test(plan_emit_into_unwritable_folder EXPECT_RC 2 ARGS plan ${mixed} --emit-plan /proc/hetsim-plan.yaml
  STDERR "--emit-plan: cannot create files in folder '/proc'")
hetsim_cli_test(plan_emit EXPECT_RC 0 ARGS plan ${mixed} --emit-plan ${CMAKE_CURRENT_BINARY_DIR}/planned.yaml
  STDOUT "best plan written to")
hetsim_cli_test(plan_emitted_predicts EXPECT_RC 0 ARGS predict ${mixed} --plan ${CMAKE_CURRENT_BINARY_DIR}/planned.yaml
  STDOUT "tokens/s")
set_tests_properties(cli_plan_emit PROPERTIES FIXTURES_SETUP planned_yaml)
set_tests_properties(cli_plan_emitted_predicts PROPERTIES FIXTURES_REQUIRED planned_yaml)
hetsim_cli_test(plan_one_thread EXPECT_RC 0 ARGS plan ${mixed} --threads 1 --top 1
  STDOUT "1 +115583 .*16x\\[dgx1-v100 tp1 x2 L8,7 \\| dgx-a100 tp1 x1 L17\\] m64")
hetsim_cli_test(plan_threads_out_of_range EXPECT_RC 2 ARGS plan ${mixed} --threads 5000
  STDERR "--threads: 5000 is out of range \\(expected 0 to 1024\\)")
hetsim_cli_test(plan_refine EXPECT_RC 0 ARGS plan ${mixed} --top 2 --refine 2 --format json
  STDOUT "\"simulated_tokens_per_s\": [0-9]")
# A baseline among the refined plans gets its simulation too: on the 4090 + A100 cluster the uniform
# plan's analytic figure ranks above the refined best ("best plan has 0.97x"), its simulation below.
hetsim_cli_test(plan_refine_simulates_the_baseline EXPECT_RC 0 ARGS plan --cluster clusters/consumer-4090-a100.yaml
  --workload workloads/llama2-7b.yaml --top 3 --refine 3 --threads 1
  STDOUT "uniform: 78471 tokens/s, best plan has 0.97x its tokens/s; simulated 68727 tokens/s, the best plan's simulation 1.10x it")
add_test(NAME cli_plan_refine_uses_the_profile
  COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DCLUSTER=${PROJECT_SOURCE_DIR}/clusters/mixed-a100-v100.yaml
          -DWORKLOAD=${PROJECT_SOURCE_DIR}/workloads/gpt3-6.7b.yaml
          -DPROFILE=${PROJECT_SOURCE_DIR}/tests/config/fixtures/slow-gemm-profile.yaml
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/plan-refine-profile -P ${CMAKE_CURRENT_SOURCE_DIR}/plan_refine_profile.cmake
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_plan_refine_uses_the_profile PROPERTIES LABELS cpu)
# --time-limit bounds the refinement's simulations too, not only the start of the next one: this
# plan's simulation takes ~8 s here; its child process is stopped at 0.5 s and no other is started.
hetsim_cli_test(plan_refine_time_limit_stops_a_running_simulation EXPECT_RC 0
  ARGS plan --cluster clusters/bench1024.yaml --workload workloads/gpt3-175b.yaml --top 2 --refine 2 --time-limit 0.5 --threads 1
  STDOUT "--refine: plan 1: the engine gave no figure: simulation failed: stopped at the time limit, after [0-9.e+-]+ s of wall time; the time limit \\(0[.]5 s\\) passed after 1 of the 2 plans asked for")
