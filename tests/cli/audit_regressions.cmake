# SPDX-License-Identifier: Apache-2.0
# CLI regressions found by the audits and walkthroughs of sessions 25-26 and later: each test says
# what the verb did wrong before. Included from tests/cli/CMakeLists.txt (its hetsim_cli_test and
# input sets: mixed, copies, tiny_copies, tiny_plan).
# run trains FP32 Adam only: an SGD (or 16-bit) workload ran as FP32 Adam with exit 0 (s25 audit).
hetsim_cli_test(run_refuses_an_optimizer_it_does_not_run EXPECT_RC 1 ARGS run --cluster clusters/local-cpu.yaml
  --workload tests/cli/tiny-gpt-sgd.yaml --tp 1 --pp 1 --dp 1
  STDERR "cannot execute the plan: the execution engine's optimizer is Adam, and the workload says sgd")
# ... and starts nothing that does not fit the devices' memory (it allocated the host's memory).
hetsim_cli_test(run_refuses_a_plan_over_device_memory EXPECT_RC 1 ARGS run --cluster clusters/local-cpu.yaml
  --workload tests/cli/workload-over-cpu-memory.yaml --tp 1 --pp 1 --dp 1
  STDERR "the model finds the plan infeasible: stage 0 needs 7.9 GiB of 4.0 GiB")
# ... nor ranks that are threads of this process and need more of the host's memory in all than
# it has (each fits its 4-GiB device; 512 ranks of a tiny model took 19.9 GB of a 23 GB machine).
# 1.25 TiB (the engine keeps no dropout masks): more than any machine this runs on has available.
hetsim_cli_test(run_refuses_ranks_over_host_memory EXPECT_RC 1 ARGS run --cluster tests/cli/cpu-512-ranks.yaml
  --workload tests/cli/gpt-3gib-per-rank-batch-512.yaml --tp 1 --pp 1 --dp 512
  STDERR "512 ranks on CPU devices need 1.25 TiB of host memory in all .*nothing was started")
hetsim_cli_test(run_steps_bounded EXPECT_RC 2 ARGS run --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --tp 1 --pp 1 --dp 1 --steps 2147483647 STDERR "--steps")
# A flag no searched plan can use is a mistake (it was accepted and did nothing; s25 audit).
hetsim_cli_test(plan_overlap_p2p_without_interleave EXPECT_RC 2 ARGS plan --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --overlap-p2p-comm --interleave 1
  STDERR "--overlap-p2p-comm overlaps the sends of the interleaved schedule, and the search has no interleave factor above 1")
hetsim_cli_test(plan_tp_comm_overlap_without_tp EXPECT_RC 2 ARGS plan --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --tp-comm-overlap --tp-degrees 1
  STDERR "--tp-comm-overlap overlaps the tensor-parallel collectives, and the search has no TP degree above 1")
# A Report made with a profile says so (a saved one could not be traced to calibrated figures; s25).
hetsim_cli_test(predict_names_its_profile EXPECT_RC 0 ARGS predict --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --tp 1 --pp 1 --dp 2 --profile clusters/profiles/local-cpu.yaml
  STDOUT "note: figures of profile 'local-cpu' \\(clusters/profiles/local-cpu.yaml\\) over the catalog's: (fitted|measured) by")
# sweep appended its rows to any JSONL file, a calibrate checkpoint among them (s25 audit 7).
hetsim_cli_test(sweep_refuses_a_foreign_checkpoint EXPECT_RC 2 ARGS sweep sweeps/geo-wan.yaml
  --checkpoint tests/cli/calibrate-checkpoint.jsonl
  STDERR "--checkpoint: 'tests/cli/calibrate-checkpoint.jsonl' holds 1 JSON lines and none is a sweep row")
# strtod read "0x10" as 16; no other number of the inputs is hexadecimal (s25 audit).
hetsim_cli_test(plan_time_limit_not_hexadecimal EXPECT_RC 2 ARGS plan --cluster clusters/local-cpu.yaml
  --workload workloads/tiny-gpt.yaml --time-limit 0x10 STDERR "--time-limit: expected a non-negative number, got '0x10'")
# Integers are decimal: CLI11 read a leading zero as octal (`--dp 010` ran dp 8 with exit 0, and
# `--tp 08` said "Could not convert"; s26 audit F1).
hetsim_cli_test(integer_with_leading_zero_is_decimal EXPECT_RC 1 ARGS predict --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-1.3b.yaml --tp 1 --pp 1 --dp 010
  STDERR "is not divisible by dp \\(10\\)")
hetsim_cli_test(integer_08_is_eight EXPECT_RC 0 ARGS predict --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-1.3b.yaml --tp 08 --pp 1 --dp 1 --micro 01
  STDOUT "micro-batch +1\n.*\n  0 +0 +a100-sxm4-80gb +24 +8 ")
# Row ids that share an --emit-dir folder once '/' is replaced: the second row's files were written
# over the first's with exit 0; now an error at the row, before anything is predicted (s26 audit F2).
hetsim_cli_test(validate_emit_dir_ids_share_a_folder EXPECT_RC 2
  ARGS validate tests/config/suites/emit-collide.yaml --emit-dir ${CMAKE_CURRENT_BINARY_DIR}/emit-collide
  STDERR "emit-collide.yaml:13:10: error: rows\\[1\\].id: row 'x_y' and row 'x/y' \\(line 12\\) would share the --emit-dir folder 'x_y'")
# simulate on an infeasible plan prints the analytic figures: the Report says nothing was simulated,
# and --trace says it was not written (it was dropped without a word; s26 audit F6).
hetsim_cli_test(simulate_infeasible_says_not_simulated EXPECT_RC 1 ARGS simulate --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-175b.yaml --tp 8 --pp 1 --dp 4 --micro 1 --trace ${CMAKE_CURRENT_BINARY_DIR}/never.json
  STDOUT "note: not simulated \\(the plan is infeasible\\): the figures are the analytic model's"
  STDERR "note: --trace .*never.json not written: nothing was simulated")
# --cluster wins over a plan's header, as documented; a header naming another file is noted (it may
# be a slip: the plan ran on the --cluster given without a word; s26 audit F14).
hetsim_cli_test(predict_plan_header_names_another_cluster EXPECT_RC 0 ARGS predict --cluster ${copies}/dgx-a100.yaml
  --workload workloads/llama2-7b.yaml --plan plans/dgx-a100-tp8-pp1-dp4.yaml
  STDERR "note: plans/dgx-a100-tp8-pp1-dp4.yaml: the plan's header names cluster 'clusters/dgx-a100.yaml'; it was checked against --cluster '.*input-copies/dgx-a100.yaml'")
# describe on a suite said "missing key 'kind'"; it says what the file is and which verbs read it (s26 audit F12).
hetsim_cli_test(describe_a_suite EXPECT_RC 2 ARGS describe tests/config/suites/tiny-v2.yaml
  STDERR "tiny-v2.yaml:[0-9]+:1: error: a validation suite \\(it has 'suite:' and 'rows:', no 'kind:'\\), read by `hetsim validate`")
# describe of a well-formed plan that predict, simulate and run refuse says so (it printed
# "checked against ..." alone; s26 audit F13).
hetsim_cli_test(describe_infeasible_plan EXPECT_RC 0 ARGS describe tests/cli/local-cpu-zero3-uneven.yaml
  --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml
  STDOUT "  infeasible: replicas\\[1\\]: ZeRO-3 needs every replica to run the same number of micro-batches .*\\(predict, simulate and run refuse it\\)")
hetsim_cli_test(plan_min_headroom_bounded EXPECT_RC 2 ARGS plan ${mixed} --min-headroom 95 STDERR "--min-headroom")
# describe gave a plan's pp as replica 0's depth ("pp 1" for replicas of 1 and 2 stages; s68 hunt).
hetsim_cli_test(describe_plan_depth_range EXPECT_RC 0 ARGS describe plans/local-cpu-dp2-different-depths.yaml
  --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml
  STDOUT "  dp 2, pp 1-2 \\(the replicas' pipelines differ in depth\\)")
hetsim_cli_test(describe_plan_depth_range_json EXPECT_RC 0 ARGS describe plans/local-cpu-dp2-different-depths.yaml
  --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml --format json
  STDOUT "\"pp\": 1,\n +\"pp_min\": 1,\n +\"pp_max\": 2,")
# A profile's launch and host times are bounded (s68 hunt: "framework_op_host: 1e9s" loaded, and
# predict printed 4.59e+09 h with exit 0); the three are reported at once.
hetsim_cli_test(profile_host_times_bounded EXPECT_RC 2 ARGS describe tests/cli/profile-host-out-of-range.yaml
  STDERR "9:22: error: devices.cpu-avx2.efficiency.kernel_launch: value out of range in \"2ms\" \\(expected a time such as \"2us\", at most 1ms\\)\n.*10:26: error: devices.cpu-avx2.efficiency.framework_op_host: value out of range in \"1e9s\" .*at most 10ms\\)\n.*11:28: error: .*framework_pass_host: .*at most 1s\\)")
# hetsim's own outputs given as inputs are named (they read "several YAML documents" and "invalid
# YAML: illegal map value", with no expected form: s68 hunt).
hetsim_cli_test(describe_a_checkpoint EXPECT_RC 2 ARGS describe tests/cli/lines.jsonl
  STDERR "lines.jsonl:1:1: error: a JSON-lines file \\(one JSON object a line, as the checkpoints of calibrate, fit and sweep are\\), not a YAML input \\(expected a YAML map starting with 'kind:'\\)")
hetsim_cli_test(profile_is_a_csv EXPECT_RC 2 ARGS predict --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml
  --tp 1 --pp 1 --dp 2 --profile tests/cli/table.csv
  STDERR "table.csv:1:1: error: a CSV table \\(as sweep and validate write them\\), not a YAML input")
# run --lr below float's range trained at a rate of 0 and said nothing (s68 hunt).
hetsim_cli_test(run_lr_below_float EXPECT_RC 2 ARGS run --cluster clusters/local-cpu.yaml --workload workloads/tiny-gpt.yaml
  --tp 1 --pp 1 --dp 2 --lr 1e-300 --steps 2
  STDERR "--lr: expected a learning rate of at least 1.2e-38 \\(the engine trains in float: below that the rate is 0\\), got '1e-300'")
# --min-headroom takes "10%" as well as "10" (it refused the percent sign, and "0.1" meant 0.1%
# without saying so: s68). A stage's headroom is then at least 10% of its GPU.
hetsim_cli_test(plan_min_headroom_percent_sign EXPECT_RC 0 ARGS plan ${mixed} --min-headroom 10% --top 1
  STDOUT "\n1 +[0-9]+ +0\\.[0-9]+ +[0-9.]+ GiB \\((1[0-9]|[2-9][0-9])%\\)")
hetsim_cli_test(plan_min_headroom_percent_sign_bounded EXPECT_RC 2 ARGS plan ${mixed} --min-headroom 95%
  STDERR "--min-headroom: expected a percentage from 0 to 90 \\(\"10\" or \"10%\"\\), got '95%'")
# Command-line errors CLI11 finds come in the verbs' form, not as CLI11's bare text (s26 audit F15).
hetsim_cli_test(cli11_errors_in_the_verbs_form EXPECT_RC 2 ARGS predict --format JSON --cluster clusters/dgx-a100.yaml
  --workload workloads/gpt3-1.3b.yaml --tp 1 --pp 1 --dp 8
  STDERR "^hetsim predict: error: --format: unknown value 'JSON' \\(expected one of: table, json\\) \\(see `hetsim predict --help`\\)")
# A misspelt required option is named as unknown, with a suggestion, not as the required one
# missing (CLI11 checks required options first: s51).
hetsim_cli_test(misspelt_required_option_is_named EXPECT_RC 2 ARGS plan --clustr clusters/dgx-a100.yaml
  --workload workloads/gpt3-6.7b.yaml STDERR "unknown arguments '--clustr', 'clusters/dgx-a100.yaml' \\(did you mean '--cluster'\\?")
# A plan of two GPU types shows each type's throughput against its own peak (s26 walkthrough 9).
hetsim_cli_test(predict_per_type_utilisation EXPECT_RC 0 ARGS predict --cluster clusters/mixed-a100-v100.yaml
  --workload workloads/gpt3-6.7b.yaml --plan plans/mixed-a100-v100-tp8-pp3-dp2.yaml
  STDOUT "MFU / HFU +33.1% / 33.9%\n  a100-sxm4-80gb +16 GPUs +101.5 TFLOP/s  MFU 32.5%\n  v100-sxm2-32gb +32 GPUs +42.2 TFLOP/s  MFU 33.8%\n")
hetsim_cli_test(predict_per_type_utilisation_json EXPECT_RC 0 ARGS predict --format json --cluster clusters/mixed-a100-v100.yaml
  --workload workloads/gpt3-6.7b.yaml --plan plans/mixed-a100-v100-tp8-pp3-dp2.yaml
  STDOUT "\"by_gpu_type\": \\[\n +\\{\n +\"gpu_type\": \"a100-sxm4-80gb\",\n +\"gpus\": 16,\n +\"tflops_per_gpu\": 101\\.[0-9]+,\n +\"mfu\": 0\\.325")
# Under objective cost the baselines are compared by $/Mtok (the objective), not tokens/s
# (s26 walkthrough 11): point 0's L40S plan at $0.130/Mtok is 0.51x the uniform plan's and 0.97x
# the fastest type's (all four L40S nodes, $0.134).
hetsim_cli_test(sweep_cost_compares_dollars_per_token EXPECT_RC 0 ARGS sweep sweeps/spot-preemption.yaml --threads 1
  STDOUT "\\$/Mtok vs uniform  \\$/Mtok vs fastest type  best plan\n0  gpt3-6.7b +0.05/h +0.03/h +80  \\$118.42/h +77237  0.391   0.130 +0.51x +0.97x  8x\\[g6e")
hetsim_cli_test(plan_cost_baselines_by_dollars_per_token EXPECT_RC 0 ARGS plan --cluster clusters/h100-mi300x.yaml
  --workload workloads/llama2-70b.yaml --objective cost --threads 1
  STDOUT "  uniform: 31834 tokens/s, \\$0.676/Mtok, best plan has 0.61x its tokens/s at 0.63x its \\$/Mtok")
# A --tp/--pp/--dp plan over memory names the flags the shorthand leaves off (s26 walkthrough 14d).
hetsim_cli_test(predict_memory_flags_hint EXPECT_RC 1 ARGS predict --cluster clusters/h100-mi300x.yaml
  --workload workloads/llama2-70b.yaml --tp 8 --pp 2 --dp 2
  STDOUT "needs 102.4 GiB of 80.0 GiB \\(the --tp/--pp/--dp plan has ZeRO 0, no sequence parallelism and no recompute unless flags say otherwise: --zero 1, --sequence-parallel and --recompute selective \\(or full\\) shrink it")
# simulate says the same (it printed only "needs 102.4 GiB of 80.0 GiB": s65 trace hunt).
hetsim_cli_test(simulate_memory_flags_hint EXPECT_RC 1 ARGS simulate --cluster clusters/h100-mi300x.yaml
  --workload workloads/llama2-70b.yaml --tp 8 --pp 2 --dp 2
  STDOUT "needs 102.4 GiB of 80.0 GiB \\(the --tp/--pp/--dp plan has ZeRO 0, no sequence parallelism and no recompute unless flags say otherwise")
# With --zero 3 given, the hint named ZeRO 0 among the shorthand's defaults: it names what the flags left.
hetsim_cli_test(predict_memory_flags_hint_names_only_the_defaults_left EXPECT_RC 1 ARGS predict
  --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-13b.yaml --tp 1 --pp 1 --dp 32 --zero 3 --micro 2
  STDOUT "\\(the --tp/--pp/--dp plan has no recompute unless flags say otherwise: --recompute selective \\(or full\\) shrinks it; `hetsim plan` searches them\\)")
# Under an address-space limit (ulimit -v, as in some containers) the simulator's actor stacks or
# heap run out: SimGrid aborted the process ("Failed to allocate stack", or "Uncaught exception
# std::bad_alloc" in an actor) with a raw backtrace, and the planner's worker threads ended in
# std::terminate. Now an error that says so, exit 1 (session 48). Not under ASan (its shadow
# memory needs terabytes of address space): scripts/asan_tests.sh skips "address_space".
hetsim_cli_test(simulate_address_space_limit EXPECT_RC 1 ADDRESS_SPACE_KB 200000 ARGS simulate
  --cluster clusters/bench1024.yaml --workload workloads/gpt3-175b.yaml --tp 8 --pp 8 --dp 16 --micro 1 --zero 1
  STDERR "the simulation needs more (address space than the process may map|memory than the process could get)")
hetsim_cli_test(plan_threads_address_space_limit EXPECT_RC 1 ADDRESS_SPACE_KB 110000 ARGS plan
  --cluster clusters/bench1024.yaml --workload workloads/gpt3-175b.yaml --threads 2
  STDERR "hetsim plan: error: out of memory: the inputs need more memory than this process could get")
# Plans that join NVIDIA and AMD GPUs were listed by `plan` without a word (predict said it), and
# no option kept a plan on one vendor's GPUs (s49 walkthrough); a budget search compared its
# plans with a baseline the budget rules out, unmarked.
set(mi300x --cluster|clusters/h100-mi300x.yaml|--workload|workloads/llama2-70b.yaml|--top|2|--threads|1)
hetsim_cli_test(plan_names_plans_joining_vendors EXPECT_RC 0 ARGS plan ${mi300x}
  STDOUT "note: plan 1, plan 2 and the uniform baseline exchange data between NVIDIA and AMD GPUs: only hetsim's execution engine")
hetsim_cli_test(plan_one_vendor EXPECT_RC 0 ARGS plan ${mi300x} --one-vendor --format json
  STDOUT "\"one_vendor\": true.*\"rank\": 1,.*\"joins_vendors\": false.*\"rank\": 2,.*\"joins_vendors\": false.*\"uniform\": {.*\"joins_vendors\": false")
hetsim_cli_test(plan_baseline_over_budget EXPECT_RC 0 ARGS plan ${mi300x} --budget-per-hour 50
  STDOUT "uniform: 31834 tokens/s, best plan has 0.61x its tokens/s \\(over the budget: \\$77.44/h\\)")
# ... and a sweep keeps to one vendor with `one_vendor: true` (its plans end without the (*) mark).
hetsim_cli_test(sweep_one_vendor EXPECT_RC 0 ARGS sweep tests/cli/sweep-one-vendor.yaml --threads 1
  STDOUT "\n0  llama2-70b [^\n]*x\\[mi300x-platform tp1 x8 [^|\n]*zero 1\\)\n1  llama2-70b [^|\n]*zero 1\\)\n")
hetsim_cli_test(sweep_marks_plans_joining_vendors EXPECT_RC 0 ARGS sweep sweeps/h100-mi300x-mix.yaml --threads 1
  STDOUT "\\| hgx-h100 tp4 x1 L36\\] m256 \\([^\n]*\\) \\(\\*\\)\n.*\\(\\*\\) the plan exchanges data between NVIDIA and AMD GPUs")
# The rows rest on the catalog's assumed figures as plan's do: the sweep notes the types its points
# have at them, a `gpu` axis's too (s67 walkthrough).
hetsim_cli_test(sweep_notes_assumed_efficiency EXPECT_RC 0 ARGS sweep tests/config/fixtures/sweep-gpu-axis-default-gemm.yaml
  --threads 1 STDOUT "\nnote: l40s has no `efficiency.gemm` in the catalog or a profile")
hetsim_cli_test(sweep_notes_assumed_efficiency_json EXPECT_RC 0 ARGS sweep tests/config/fixtures/sweep-gpu-axis-default-gemm.yaml
  --threads 1 --format json STDOUT "\"notes\": \\[\n +\"l40s has no `efficiency.gemm`")
# --spot on a cluster without spot prices reported 100% goodput and said nothing (s49 walkthrough).
hetsim_cli_test(predict_spot_without_spot_prices EXPECT_RC 0 ARGS predict ${mixed} --tp 2 --pp 2 --dp 8 --zero 1
  --recompute full --spot STDOUT "note: --spot: no node type of the cluster has a spot_price, so every node is priced on demand")
hetsim_cli_test(plan_spot_without_spot_prices EXPECT_RC 0 ARGS plan ${mixed} --top 1 --threads 1 --spot
  STDOUT "note: --spot: no node type of the cluster has a spot_price")
# describe says when a workload runs without FlashAttention (the default), which at long
# sequences changes a step severalfold.
hetsim_cli_test(describe_says_no_flash_attention EXPECT_RC 0 ARGS describe workloads/gpt3-6.7b.yaml
  STDOUT "fp16, adam, no flash attention \\(training.flash_attention: true for stacks that use it\\)")
# --zero read hexadecimal and spaces ("0x3" was ZeRO-3) where the degrees refuse them (s49 hunt).
hetsim_cli_test(predict_zero_hex EXPECT_RC 2 ARGS predict ${mixed} --tp 1 --pp 1 --dp 48 --zero 0x3
  STDERR "--zero: expected a non-negative integer, got '0x3'")
# A plan's backwards GPU range was lost while the cluster file had errors (s49 hunt).
hetsim_cli_test(plan_errors_beside_a_bad_cluster EXPECT_RC 2 ARGS predict --cluster tests/config/bad/cluster-unknown-gpu.yaml
  --workload workloads/gpt3-6.7b.yaml --plan tests/cli/plan-backwards-range.yaml
  STDERR "cluster-unknown-gpu.yaml:6:10: error: .*plan-backwards-range.yaml:7:[0-9]+: error: replicas\\[0\\].stages\\[0\\].gpus: range 3-1 in 'gpu\\[3-1\\]' runs backwards")
# --format json of an infeasible plan printed nothing on stdout for run (predict prints the Report
# with "feasible": false and its reason: s50 hunt F4).
hetsim_cli_test(run_json_reports_an_infeasible_plan EXPECT_RC 1 ARGS run --cluster clusters/local-cpu.yaml
  --workload tests/cli/workload-over-cpu-memory.yaml --tp 1 --pp 1 --dp 1 --format json
  STDOUT "\"feasible\": false,.*\"infeasible_reason\": \"stage 0 needs 7.9 GiB of 4.0 GiB")

# s52 bad-input hunt: `--profile=` (an unset variable in `--profile=$P`) took the next argument
# as its value, and `--profile ""` ran without the profile (tests/cli/cli_options_test.cpp);
# `--schedule interleaved` without `--interleave` was priced as plain 1F1B.
hetsim_cli_test(empty_equals_value EXPECT_RC 2
  ARGS predict --plan plans/local-cpu-tp2-pp2-dp1.yaml --profile= --format table
  STDERR "hetsim predict: error: --profile: empty value \\(expected a value; an unset shell variable gives an empty one\\)")
hetsim_cli_test(interleaved_one_chunk EXPECT_RC 2
  ARGS predict --cluster clusters/dgx-a100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 2 --dp 2 --schedule interleaved
  STDERR "--schedule interleaved with --interleave 1 is plain 1F1B \\(expected --interleave 2 or more, or --schedule 1f1b\\)")
# Without --micro, an interleaved plan no micro-batch size makes reported the largest size's
# reason ("micro_batches: 1 is no multiple of the 6 stages"), as if asked for one micro-batch.
hetsim_cli_test(no_micro_size_makes_the_plan EXPECT_RC 1
  ARGS predict --cluster clusters/mixed-a100-v100.yaml --workload workloads/gpt3-1.3b.yaml --tp 8 --pp 6 --dp 1
       --schedule interleaved --interleave 2
  STDERR "no micro-batch size dividing the 512 sequences of a replica makes this plan \\(10 tried\\); with --micro 1: replicas\\[0\\].micro_batches: 512 is no multiple of the 6 stages")
# A reason that holds at every micro-batch size is said alone: "no micro-batch size dividing the
# 128 sequences ... (8 tried); with --micro 1: tp*pp*dp (64) exceeds the cluster's 32 GPUs" read
# as if the size were the problem.
hetsim_cli_test(predict_reason_of_every_micro_batch_size EXPECT_RC 1 ARGS predict --cluster clusters/dgx-a100.yaml
  --workload workloads/llama2-7b.yaml --tp 8 --pp 1 --dp 8
  STDOUT "feasible +no: tp\\*pp\\*dp \\(64\\) exceeds the cluster's 32 GPUs\n")
# A plan header with two problems reported the missing workload only; the cluster it names, a
# workload file, came up once that was fixed (s52 bad-input hunt).
hetsim_cli_test(predict_plan_header_two_problems EXPECT_RC 2
  ARGS predict --plan tests/cli/plan-header-wrong-kind-and-missing.yaml
  STDERR "plan-header-wrong-kind-and-missing.yaml:4:1: error: header names workload 'no-such-workload'.*tiny-gpt.yaml:[0-9]+:[0-9]+: error: kind: this file is a 'workload' \\(expected 'cluster'\\)")
# Two suite files of one name: the error had no position (s52 bad-input hunt).
hetsim_cli_test(validate_two_files_one_suite_name EXPECT_RC 2
  ARGS validate tests/config/suites/emit-collide.yaml tests/config/suites/emit-collide-same-name.yaml
  STDERR "emit-collide-same-name.yaml:[0-9]+:8: error: suite: suite 'emit-collide' is also the suite of")
# calibrate --refit opened its checkpoint to read before checking what it was: a FIFO made the
# verb wait forever for a writer (s56 bad-input hunt); without --refit it was already refused.
add_test(NAME cli_make_checkpoint_fifo COMMAND sh -c "rm -f ck.fifo && mkfifo ck.fifo"
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(cli_make_checkpoint_fifo PROPERTIES LABELS cpu FIXTURES_SETUP checkpoint_fifo)
hetsim_cli_test(calibrate_refit_refuses_a_fifo EXPECT_RC 2 ARGS calibrate --cluster clusters/local-cpu.yaml --refit
  --checkpoint ${CMAKE_CURRENT_BINARY_DIR}/ck.fifo --out ${CMAKE_CURRENT_BINARY_DIR}/fifo-profile.yaml
  STDERR "--checkpoint: --refit: '[^']*ck.fifo' is not a regular file \\(expected the checkpoint file of a calibrate run\\)")
set_tests_properties(cli_calibrate_refit_refuses_a_fifo PROPERTIES FIXTURES_REQUIRED checkpoint_fifo TIMEOUT 60)
