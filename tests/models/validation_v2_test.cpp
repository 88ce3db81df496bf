// SPDX-License-Identifier: Apache-2.0
// Suite format version 2 (../shared/validation/README.md): node-group systems, explicit plans,
// their cross-checks with file:line:col messages, the Cluster/Plan they become, and the
// --emit-dir inputs read back by the loaders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "catalog.hpp"
#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "input_writers.hpp"
#include "plan_writer.hpp"
#include "predictor.hpp"
#include "suite_emit.hpp"
#include "validation_suite.hpp"

namespace hetsim::models {
namespace {

using ::testing::HasSubstr;

// Line numbers matter: the bad-suite tests below expect messages at lines of this text.
// Line 1 is "format: 2".
const std::string kHead = R"(format: 2
suite: tiny-v2
source: "test"
metric: iteration_time_s
system:
  nodes:
    - {gpu: v100-sxm2-16gb, count: 2, gpus_per_node: 4, intra_node_bandwidth: "100GB/s", nic_bandwidth: "1.25GB/s"}
    - {gpu: t4, count: 1, gpus_per_node: 4, intra_node_bandwidth: "15.75GB/s", nic_bandwidth: "6.25GB/s"}
  inter_node_latency: "50us"
defaults:
  model: {layers: 24, hidden: 1024, heads: 16, seq_len: 1024, vocab: 50304}
  training: {dtype: fp16, recompute: none, schedule: 1f1b}
rows:
)";
// kHead has 13 lines; the first row starts on line 14.

std::string suite_with(const std::string& rows) { return kHead + rows; }

/// One version-2 row whose plan has the given stages (each as written after "        - "), with
/// `micro_batches: <micro_batches>` when that is not empty. The rows keep one key a line, as the
/// file:line:col expectations below count them: `id` on the row's first line, `stages[0]` on
/// its fifth.
std::string plan_row(int global, int micro, const std::vector<std::string>& stages,
                     const std::string& micro_batches = "", const std::string& id = "a",
                     const std::string& measured = "1.5") {
  std::string row = "  - id: " + id + "\n    batch: {global: " + std::to_string(global) +
                    ", micro: " + std::to_string(micro) + "}\n    plan:\n      stages:\n";
  for (const std::string& stage : stages) row += "        - " + stage + "\n";
  if (!micro_batches.empty()) row += "      micro_batches: " + micro_batches + "\n";
  return row + "    measured: " + measured + "\n";
}

std::string first_error(const std::string& text) {
  try {
    parse_suite(text, Catalog::builtin(), "s.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ValidationV2, ReadsNodeGroupsAndExplicitPlans) {
  const Suite s = parse_suite(suite_with(plan_row(32, 2,
                                                  {"{layers: 10, replicas: [{gpus: [0, 1]}, {gpus: [2, 3]}]}",
                                                   "{layers: 14, replicas: [{gpus: [8, 9]}, {gpus: [10, 11]}]}"})),
                              Catalog::builtin(), "s.yaml");
  ASSERT_EQ(s.format, 2);
  ASSERT_EQ(s.rows.size(), 1u);
  const SuiteRow& row = s.rows[0];
  ASSERT_EQ(row.system.nodes.size(), 2u);
  EXPECT_EQ(row.system.nodes[1].gpu, "t4");
  EXPECT_DOUBLE_EQ(row.system.nodes[1].nic_Bps, 6.25e9);
  EXPECT_DOUBLE_EQ(row.system.inter_node_latency_s, 50e-6);
  ASSERT_TRUE(row.plan.has_value());
  EXPECT_EQ(row.pp, 2);
  EXPECT_EQ(row.dp, 2);
  ASSERT_EQ(row.plan->replicas.size(), 2u);
  // Replica 1 of every stage forms pipeline 1.
  EXPECT_EQ(row.plan->replicas[1].stages[0].gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(row.plan->replicas[1].stages[1].gpus, (std::vector<int>{10, 11}));
  EXPECT_EQ(row.plan->replicas[1].stages[1].layers, 14);

  const Cluster c = suite_cluster(row.system, suite_row_gpus(row), Catalog::builtin());
  ASSERT_EQ(c.gpu_count(), 12);
  EXPECT_EQ(c.gpu_type(7).name, "v100-sxm2-16gb");
  EXPECT_EQ(c.gpu_type(8).name, "t4");
  EXPECT_EQ(c.node_of_gpu(8), 2);
  // The NIC figure is per node: one NIC with the node's bandwidth.
  EXPECT_EQ(c.node_type_of_gpu(8).nics.count, 1);
  EXPECT_DOUBLE_EQ(c.node_type_of_gpu(8).nics.node_bandwidth_Bps(), 6.25e9);
  EXPECT_EQ(c.node_type_of_gpu(0).intra.kind, IntraFabricKind::kNvlink);  // 100 GB/s > PCIe
  EXPECT_EQ(c.node_type_of_gpu(8).intra.kind, IntraFabricKind::kPcie);

  const Workload w = suite_workload(s, row);
  auto plan = suite_plan(row, c, w, 2);
  ASSERT_TRUE(std::holds_alternative<Plan>(plan)) << std::get<Infeasible>(plan).reason;
  EXPECT_EQ(std::get<Plan>(plan).replicas[0].micro_batches, 8);  // 32 / (2 replicas x 2)
  EXPECT_EQ(std::get<Plan>(plan).global_batch(), 32);
}

TEST(ValidationV2, UnevenMicroBatchCountsAndTpAcrossNodes) {
  // A TP group spanning two nodes (GPUs 3 and 4) is slow, not invalid.
  const Suite s =
      parse_suite(suite_with(plan_row(32, 1, {"{layers: 24, replicas: [{gpus: [3, 4]}, {gpus: [8, 9]}]}"}, "[20, 12]")),
                  Catalog::builtin(), "s.yaml");
  const SuiteRow& row = s.rows[0];
  const Cluster c = suite_cluster(row.system, suite_row_gpus(row), Catalog::builtin());
  auto plan = suite_plan(row, c, suite_workload(s, row), 1);
  ASSERT_TRUE(std::holds_alternative<Plan>(plan)) << std::get<Infeasible>(plan).reason;
  EXPECT_EQ(std::get<Plan>(plan).replicas[0].micro_batches, 20);
  EXPECT_EQ(std::get<Plan>(plan).replicas[1].micro_batches, 12);
  EXPECT_NE(c.node_of_gpu(3), c.node_of_gpu(4));
  const Report r = predict(c, suite_workload(s, row), std::get<Plan>(plan));
  EXPECT_TRUE(r.feasible) << r.infeasible_reason;
  EXPECT_GT(r.iteration_time_s, 0);
}

TEST(ValidationV2, ParallelBesidePlanGivesWhatStagesCannot) {
  // ZeRO, sequence parallelism and TP-comm overlap are no part of a stage list: `parallel` may
  // give them beside a plan. Its degrees are the plan's, so they are errors.
  const std::string row = R"(  - id: a
    batch: {global: 32, micro: 2}
    parallel: {zero: 1, sequence_parallel: true}
    plan:
      stages:
        - {layers: 24, replicas: [{gpus: [0, 1]}, {gpus: [2, 3]}]}
    measured: 1.5
)";
  const Suite s = parse_suite(suite_with(row), Catalog::builtin(), "s.yaml");
  const SuiteRow& r = s.rows.at(0);
  EXPECT_EQ(r.zero, 1);
  EXPECT_TRUE(r.sequence_parallel);
  const Cluster c = suite_cluster(r.system, suite_row_gpus(r), Catalog::builtin());
  auto plan = suite_plan(r, c, suite_workload(s, r), 2);
  ASSERT_TRUE(std::holds_alternative<Plan>(plan)) << std::get<Infeasible>(plan).reason;
  EXPECT_EQ(std::get<Plan>(plan).zero, 1);
  EXPECT_TRUE(std::get<Plan>(plan).sequence_parallel);

  std::string with_degree = row;
  with_degree.replace(with_degree.find("zero: 1"), 7, "zero: 1, tp: 2, dp: 2");
  const std::string e = first_error(suite_with(with_degree));
  EXPECT_THAT(e, HasSubstr("s.yaml:16:"));
  EXPECT_THAT(e, HasSubstr("rows[0].parallel: unknown key 'tp' (expected one of: interleave, sequence_parallel, "
                           "tp_comm_overlap, overlap_grad_sync, overlap_p2p_comm, zero, sharded_collectives)"));
  EXPECT_THAT(e, HasSubstr("unknown key 'dp'"));

  // The stack's ZeRO-3 flavour (Plan::sharded_collectives) is no part of a stage list either.
  std::string fsdp = row;
  fsdp.replace(fsdp.find("zero: 1"), 7, "zero: 3, sharded_collectives: node_nics");
  const Suite f = parse_suite(suite_with(fsdp), Catalog::builtin(), "s.yaml");
  auto fsdp_plan = suite_plan(f.rows.at(0), c, suite_workload(f, f.rows.at(0)), 2);
  ASSERT_TRUE(std::holds_alternative<Plan>(fsdp_plan)) << std::get<Infeasible>(fsdp_plan).reason;
  EXPECT_EQ(std::get<Plan>(fsdp_plan).sharded_collectives, ShardedCollectives::kNodeNics);
}

TEST(ValidationV2, GpuIndexOutOfRange) {
  const std::string e = first_error(suite_with(plan_row(32, 1, {"{layers: 24, replicas: [{gpus: [11, 12]}]}"})));
  EXPECT_THAT(e, HasSubstr("s.yaml:18:47: error: rows[0].plan.stages[0].replicas[0].gpus[1]: GPU 12 does not exist "
                           "(expected an index in 0..11: the system has 12 GPUs)"));
}

// A GPU index that does not read (negative) no longer hides the row's other errors: the
// out-of-range GPU and the layer sum came out only once it was fixed (s24 audit).
TEST(ValidationV2, AnUnreadableGpuIndexHidesNoOtherError) {
  const std::string e = first_error(suite_with(
      plan_row(32, 1, {"{layers: 12, replicas: [{gpus: [-1]}]}", "{layers: 11, replicas: [{gpus: [12]}]}"})));
  EXPECT_THAT(e, HasSubstr("rows[0].plan.stages[0].replicas[0].gpus[0]: value -1 out of range"));
  EXPECT_THAT(e, HasSubstr("rows[0].plan.stages[1].replicas[0].gpus[0]: GPU 12 does not exist"));
  EXPECT_THAT(e, HasSubstr("rows[0].plan.stages: the stages' layers sum to 23 (expected model.layers = 24)"));
}

// Each group was in range but not their total: 65536 nodes of 65536 GPUs were built as one
// cluster of 2^32 GPUs (a minute, then std::bad_alloc).
TEST(ValidationV2, SystemAboveTheClusterBound) {
  std::string text = suite_with("  - {id: a, batch: {global: 32}, parallel: {tp: 1, pp: 1, dp: 1}, measured: 1.5}\n");
  text.replace(text.find("count: 2, gpus_per_node: 4"), 26, "count: 65536, gpus_per_node: 1024");
  EXPECT_THAT(first_error(text), HasSubstr("s.yaml:7:5: error: system.nodes: the node groups have 67108868 GPUs, "
                                           "above the cluster bound of 1048576"));
}

TEST(ValidationV2, GpuUsedTwice) {
  const std::string e = first_error(
      suite_with(plan_row(32, 1, {"{layers: 12, replicas: [{gpus: [0]}]}", "{layers: 12, replicas: [{gpus: [0]}]}"})));
  EXPECT_THAT(e, HasSubstr("s.yaml:19:43: error: rows[0].plan.stages[1].replicas[0].gpus[0]: GPU 0 is already used "
                           "by rows[0].plan.stages[0].replicas[0].gpus[0] (expected each GPU at most once)"));
}

TEST(ValidationV2, UnequalReplicaCounts) {
  const std::string e = first_error(suite_with(plan_row(
      32, 1, {"{layers: 12, replicas: [{gpus: [0]}, {gpus: [1]}]}", "{layers: 12, replicas: [{gpus: [2]}]}"})));
  EXPECT_THAT(e, HasSubstr("s.yaml:19:34: error: rows[0].plan.stages[1].replicas: stage 1 has 1 replicas but stage 0 "
                           "has 2 (expected the same number of replicas in every stage)"));
}

TEST(ValidationV2, LayersNotSummingToTheModels) {
  const std::string e = first_error(
      suite_with(plan_row(32, 1, {"{layers: 12, replicas: [{gpus: [0]}]}", "{layers: 11, replicas: [{gpus: [1]}]}"})));
  EXPECT_THAT(e, HasSubstr("s.yaml:18:9: error: rows[0].plan.stages: the stages' layers sum to 23 (expected "
                           "model.layers = 24)"));
}

TEST(ValidationV2, MicroBatchCountsNotSummingToTheGlobalBatch) {
  const std::string e =
      first_error(suite_with(plan_row(32, 2, {"{layers: 24, replicas: [{gpus: [0]}, {gpus: [1]}]}"}, "[10, 5]")));
  EXPECT_THAT(e, HasSubstr("s.yaml:19:22: error: rows[0].plan.micro_batches: micro-batch counts sum to 15, times "
                           "batch.micro 2 = 30 sequences (expected batch.global = 32)"));
}

// A batch.global out of range is its own error; the counts are not checked against the 0 it
// leaves (s59 hunt: "micro-batch counts sum to 33554432 ... (expected batch.global = 0)").
TEST(ValidationV2, MicroBatchCountsAreNotCheckedAgainstAnInvalidGlobalBatch) {
  const std::string e = first_error(suite_with(
      plan_row(33554432, 1, {"{layers: 24, replicas: [{gpus: [0]}, {gpus: [1]}]}"}, "[16777216, 16777216]")));
  EXPECT_THAT(e, HasSubstr("rows[0].batch.global: value 33554432 out of range"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("expected batch.global = 0")));
}

TEST(ValidationV2, AllErrorsOfAFileAtOnceAndPlanOnlyInVersion2) {
  // Two bad rows: both reported. `plan:` in a version-1 file is an unknown key.
  std::string text = suite_with(plan_row(32, 1, {"{layers: 24, replicas: [{gpus: [99]}]}"}) +
                                plan_row(32, 1, {"{layers: 24, replicas: [{gpus: [0]}]}"}, "[16, 16]", "b"));
  const std::string e = first_error(text);
  EXPECT_THAT(e, HasSubstr("GPU 99 does not exist"));
  EXPECT_THAT(e, HasSubstr("rows[1].plan.micro_batches: gives 2 counts for 1 replicas"));
  // Without `format: 2` the file is refused once, at its first version-2 key (system.nodes,
  // line 5 once the format line is gone), and still read as version 2 for its other errors,
  // instead of an "unknown key" error on every row.
  const std::string v1 = first_error(text.substr(text.find('\n') + 1));
  EXPECT_THAT(v1, HasSubstr("s.yaml:5:3: error: format: a version-2 key (system.nodes, or a row's plan or system.nodes) in a file "
                            "without a format (expected `format: 2` at the top of the file)"));
  EXPECT_THAT(v1, HasSubstr("GPU 99 does not exist"));
  EXPECT_THAT(v1, ::testing::Not(HasSubstr("unknown key")));
}

/// A one-row version-2 suite whose first line is `format: <value>` (kHead's line 1 replaced).
std::string one_row_suite_with_format(const std::string& value) {
  const std::string text = suite_with(plan_row(32, 1, {"{layers: 24, replicas: [{gpus: [0]}]}"}));
  return "format: " + value + text.substr(text.find('\n'));
}

TEST(ValidationV2, MalformedFormatIsOneErrorNotOnePerRow) {
  const std::string e = first_error(one_row_suite_with_format("\"2\""));
  EXPECT_THAT(e, HasSubstr("s.yaml:1:9: error: format: expected an integer between 1 and 2"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("unknown key")));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("missing key")));
}

TEST(ValidationV2, Format1OnAVersion2FileIsOneErrorNotOnePerKey) {
  // `format: 1` written over a version-2 file: one error at the format, naming the version-2
  // key's line, not "unknown key 'nodes'" and "missing key 'parallel'" on every row.
  const std::string e = first_error(one_row_suite_with_format("1"));
  EXPECT_THAT(e, HasSubstr("s.yaml:1:9: error: format: 1, but the file uses version-2 keys (system.nodes, or a row's "
                           "plan or system.nodes; the first at line 6) (expected `format: 2`)"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("unknown key")));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("missing key")));
}

TEST(ValidationV2, ARowWithoutPlanOrParallelMissesItsPlan) {
  const std::string e = first_error(suite_with(R"(  - id: a
    batch: {global: 32, micro: 1}
    measured: 1.5
)"));
  EXPECT_THAT(e, HasSubstr("s.yaml:14:5: error: rows[0]: missing key 'plan' (expected a map)"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("'parallel'")));
}

TEST(ValidationV2, Version1FilesKeepWorking) {
  const Suite s = parse_suite(R"(suite: v1
source: "test"
metric: iteration_time_s
system: {gpu: a100-sxm4-80gb, gpus_per_node: 8, intra_node_bandwidth: "300GB/s", inter_node_bandwidth: "25GB/s"}
rows:
  - id: r
    model: {layers: 24, hidden: 2304, heads: 24, seq_len: 2048, vocab: 51200}
    training: {dtype: fp16, recompute: full, schedule: 1f1b}
    parallel: {tp: 2, pp: 2, dp: 4}
    batch: {global: 64}
    measured: 2.0
)",
                              Catalog::builtin(), "v1.yaml");
  ASSERT_EQ(s.format, 1);
  EXPECT_FALSE(s.rows[0].plan.has_value());
  EXPECT_TRUE(s.rows[0].system.nodes.empty());
  EXPECT_EQ(suite_row_gpus(s.rows[0]), 16);
  const Cluster c = suite_cluster(s.rows[0].system, 16, Catalog::builtin());
  EXPECT_EQ(c.gpu_count(), 16);
}

TEST(ValidationV2, EmittedInputsLoadBackToTheSamePrediction) {
  const Suite s = parse_suite(suite_with(plan_row(32, 1,
                                                  {"{layers: 10, replicas: [{gpus: [0]}, {gpus: [1]}]}",
                                                   "{layers: 14, replicas: [{gpus: [8, 9]}, {gpus: [10, 11]}]}"},
                                                  "", "row/one")),
                              Catalog::builtin(), "s.yaml");
  const auto engine = [](const Cluster& c, const Workload& w, const Plan& p) { return predict(c, w, p); };
  const SuiteResult res = validate_suite(s, Catalog::builtin(), engine);
  ASSERT_EQ(res.rows_failed, 0) << res.rows[0].reason;
  const std::string dir = testing::TempDir() + "emit-" + std::to_string(::getpid());
  ASSERT_EQ(emit_suite_inputs(s, res, Catalog::builtin(), dir), 1);
  const std::string folder = dir + "/tiny-v2/row_one/";
  const Cluster c = load_cluster(folder + "cluster.yaml", Catalog::builtin());
  const Workload w = load_workload(folder + "workload.yaml");
  const Plan p = load_plan(folder + "plan.yaml", c, w);
  EXPECT_EQ(c.gpu_count(), 12);
  EXPECT_DOUBLE_EQ(c.node_type_of_gpu(8).nics.bandwidth_Bps, 6.25e9);
  EXPECT_DOUBLE_EQ(c.zones[0].fabric.latency_s, 50e-6);
  EXPECT_EQ(w.model.vocab, 50304);
  EXPECT_EQ(p.replicas[1].stages[1].gpus, (std::vector<int>{10, 11}));
  const Report r = predict(c, w, p);
  EXPECT_DOUBLE_EQ(r.iteration_time_s, *res.rows[0].predicted);
  // The rows are staged in a hidden folder and moved into place once written (an interrupted run
  // left a row folder without its plan.yaml; s63 CLI hunt). Emitted again over the folder: its
  // files are replaced, a user's own file in it stays, and no staging folder stays behind, a
  // killed run's included (no process has pid 2^31 - 2).
  std::ofstream(folder + "notes.txt") << "mine";
  std::ofstream(folder + "plan.yaml") << "an older plan";
  std::filesystem::create_directories(dir + "/tiny-v2/.row_one.tmp.2147483646");
  ASSERT_EQ(emit_suite_inputs(s, res, Catalog::builtin(), dir), 1);
  EXPECT_TRUE(std::filesystem::exists(folder + "notes.txt"));
  EXPECT_EQ(load_plan(folder + "plan.yaml", c, w).replicas[1].stages[1].gpus, (std::vector<int>{10, 11}));
  std::vector<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/tiny-v2")) entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, (std::vector<std::string>{"row_one"}));
  // Rows predicted with a profile: the plan's header names it (the files alone predict with the
  // catalog's figures, and nothing said so; s65 hunt).
  ASSERT_EQ(emit_suite_inputs(s, res, Catalog::builtin(), dir, "cal/v100.yaml"), 1);
  std::ifstream plan_file(folder + "plan.yaml");
  const std::string plan_text((std::istreambuf_iterator<char>(plan_file)), std::istreambuf_iterator<char>());
  EXPECT_THAT(plan_text, HasSubstr("# predicted by validate with --profile cal/v100.yaml: give predict and simulate "
                                   "the same --profile for the same figure"));
  std::filesystem::remove_all(dir);
}

/// The two shared heterogeneous suites load and every row is predicted (accuracy is reported
/// by `hetsim validate`; see the issue's figures).
TEST(ValidationV2, SharedHeterogeneousSuitesLoadAndPredict) {
  const std::string dir = HETSIM_SHARED_VALIDATION_DIR;
  if (dir.empty() || !std::filesystem::exists(dir + "/amp-v100-t4.yaml"))
    GTEST_SKIP() << "../shared/validation is absent (suites are not shipped with the project)";
  const auto engine = [](const Cluster& c, const Workload& w, const Plan& p) { return predict(c, w, p); };
  for (const auto& [name, rows] : {std::pair<std::string, int>{"amp-v100-t4", 43}, {"sailor-mit-rtx", 7}}) {
    const Suite s = load_suite(dir + "/" + name + ".yaml", Catalog::builtin());
    EXPECT_EQ(static_cast<int>(s.rows.size()), rows) << name;
    const SuiteResult res = validate_suite(s, Catalog::builtin(), engine);
    EXPECT_EQ(res.rows_failed, 0) << name;
  }
}

// --emit-dir's targets are checked before any row is predicted (s26 audit F2, F3): ids that share a
// folder once '/' is replaced, an id too long for a folder name, a file where a row's folder goes
// and a folder where one of its files goes. They were found after every row, or never (one row's
// files written over the other's with exit 0).
TEST(ValidationV2, EmitTargetsAreCheckedBeforePredicting) {
  const auto row = [](const std::string& id) {
    return plan_row(32, 1, {"{layers: 24, replicas: [{gpus: [0]}]}"}, "", "\"" + id + "\"");
  };
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / ("emit-targets-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    const Suite s = parse_suite(suite_with(row("x/y") + row("x_y") + row(std::string(300, 'a'))), Catalog::builtin(), "s.yaml");
    DiagnosticCollector errors;
    EXPECT_TRUE(check_emit_targets({s}, dir.string(), errors).empty());
    std::vector<std::string> lines;
    try {
      errors.throw_if_any();
    } catch (const ConfigError& e) {
      for (const auto& d : e.get_diagnostics()) lines.push_back(d.to_string());
    }
    ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
    EXPECT_THAT(lines[0], HasSubstr("error: rows[1].id: row 'x_y' and row 'x/y' (line "));
    EXPECT_THAT(lines[1], HasSubstr("is 300 bytes, too long for the folder --emit-dir names after it (expected at most 255)"));
  }
  const Suite s = parse_suite(suite_with(row("a") + row("b")), Catalog::builtin(), "s.yaml");
  fs::create_directories(dir / s.name / "b" / "plan.yaml");
  std::ofstream(dir / s.name / "a") << "in the way\n";
  DiagnosticCollector errors;
  const std::vector<std::string> problems = check_emit_targets({s}, dir.string(), errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_THAT(problems, ElementsAre(HasSubstr("/a is a file (expected a folder, or nothing)"),
                                    HasSubstr("/b/plan.yaml is a folder (expected a file, or nothing)")));
  // The suite file (or the profile) where an emitted file goes: it was replaced, exit 0.
  fs::remove_all(dir);
  fs::create_directories(dir / s.name / "a");
  const fs::path suite_file = dir / s.name / "a" / "plan.yaml";
  std::ofstream(suite_file) << suite_with(row("a") + row("b"));
  Suite read = parse_suite(suite_with(row("a") + row("b")), Catalog::builtin(), suite_file.string());
  read.file = suite_file.string();
  const std::vector<std::string> overwrite = check_emit_targets({read}, dir.string(), errors, {""});
  EXPECT_THAT(overwrite, ElementsAre(HasSubstr("/a/plan.yaml is the input file " + suite_file.string())));
  fs::remove_all(dir);
}

// A suite row takes what a cluster or workload file takes, no more: `validate` predicted rows
// (and --emit-dir wrote files) that `predict` then rejected (s26 audit F4).
TEST(ValidationV2, SuiteRangesAreThoseOfTheInputFiles) {
  std::string message;
  try {
    parse_suite(R"(suite: v1
source: "test"
metric: iteration_time_s
system: {gpu: a100-sxm4-80gb, gpus_per_node: 2048, intra_node_bandwidth: "300GB/s", inter_node_bandwidth: "25GB/s"}
rows:
  - id: r
    model: {layers: 200000, hidden: 4194304, heads: 24, seq_len: 2048, vocab: 51200}
    training: {dtype: fp16, recompute: full, schedule: 1f1b}
    parallel: {tp: 2, pp: 2, dp: 4}
    batch: {global: 64}
    measured: 2.0
)",
                Catalog::builtin(), "v1.yaml");
  } catch (const ConfigError& e) {
    message = e.what();
  }
  EXPECT_THAT(message, HasSubstr("system.gpus_per_node: value 2048 out of range (expected an integer between 1 and 1024)"));
  EXPECT_THAT(message, HasSubstr("model.layers: value 200000 out of range (expected an integer between 1 and 100000)"));
  EXPECT_THAT(message, HasSubstr("model.hidden: value 4194304 out of range (expected an integer between 1 and 1048576)"));
}

// A rejected node group left its GPUs uncounted, and every row using them got a false "GPU 8 does
// not exist" beside the group's own error (s26 audit F8): the group's error comes alone.
TEST(ValidationV2, RejectedNodeGroupGivesOneError) {
  std::string text = suite_with(plan_row(32, 1, {"{layers: 24, replicas: [{gpus: [0]}, {gpus: [8]}]}"}));
  text.replace(text.find("{gpu: t4, count: 1,"), 19, "{gpu: t4, count: 0,");
  const std::string e = first_error(text);
  EXPECT_THAT(e, HasSubstr("s.yaml:8:24: error: system.nodes[1].count: value 0 out of range"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("does not exist"))) << e;
}

// A row's own `system: {nodes: ...}` is a version-2 key too: in a file without `format` it gave
// five errors (missing gpu, gpus_per_node, ...; unknown key 'nodes') instead of naming it (s26 audit F10).
TEST(ValidationV2, RowSystemNodesWithoutFormatIsOneError) {
  const std::string e = first_error(R"(suite: t1
source: "test"
metric: iteration_time_s
system: {gpu: a100-sxm4-80gb, gpus_per_node: 8, intra_node_bandwidth: "300GB/s", inter_node_bandwidth: "25GB/s"}
rows:
  - id: b
    system: {nodes: [{gpu: a100-sxm4-80gb, count: 4, gpus_per_node: 8, intra_node_bandwidth: "300GB/s", nic_bandwidth: "25GB/s"}]}
    model: {layers: 24, hidden: 2304, heads: 24, seq_len: 2048, vocab: 51200}
    training: {dtype: fp16, recompute: full, schedule: 1f1b}
    parallel: {tp: 1, pp: 1, dp: 32}
    batch: {global: 512}
    measured: 3.5
)");
  EXPECT_THAT(e, HasSubstr("s.yaml:7:14: error: format: a version-2 key"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("missing key"))) << e;
  EXPECT_THAT(e, ::testing::Not(HasSubstr("unknown key"))) << e;
}

// A plan that cannot be built is reported at the stage and replica of the row, in the suite's
// order (stages, then replicas), not the converted Plan's (s26 audit F9).
TEST(ValidationV2, InvalidPlanRowsNameTheSuitesPath) {
  const Suite s = parse_suite(suite_with(plan_row(32, 2,
                                                  {"{layers: 12, replicas: [{gpus: [0, 1, 2, 3]}]}",
                                                   "{layers: 12, replicas: [{gpus: [4, 5, 6, 7, 8]}]}"},
                                                  "", "a", "2.0")),
                              Catalog::builtin(), "s.yaml");
  const RowResult r = validate_row(s, s.rows[0], Catalog::builtin(), predict);
  EXPECT_EQ(r.status, "invalid");
  EXPECT_THAT(r.reason, ::testing::StartsWith("plan.stages[1].replicas[0].gpus: tp 5 does not divide model.heads (16)"));
  EXPECT_EQ(r.location, "s.yaml:19:42");  // the value of gpus in the second stage
}

TEST(ValidationV2, AMicroBatchThatDoesNotDivideIsTheRowsResultNotTheSuites) {
  // Two replicas of micro-batch 3 cannot share 32 sequences evenly: row a is invalid at its
  // batch.micro (as in version 1), and row b is still predicted. This was a load error that
  // dropped the whole suite, at `plan`.
  const Suite s = parse_suite(suite_with(plan_row(32, 3,
                                                  {"{layers: 12, replicas: [{gpus: [0]}, {gpus: [1]}]}",
                                                   "{layers: 12, replicas: [{gpus: [2]}, {gpus: [3]}]}"},
                                                  "", "a", "2.0") +
                                         plan_row(32, 2,
                                                  {"{layers: 12, replicas: [{gpus: [0]}, {gpus: [1]}]}",
                                                   "{layers: 12, replicas: [{gpus: [2]}, {gpus: [3]}]}"},
                                                  "", "b", "2.0")),
                              Catalog::builtin(), "s.yaml");
  const SuiteResult res = validate_suite(s, Catalog::builtin(), predict);
  ASSERT_EQ(res.rows.size(), 2u);
  EXPECT_EQ(res.rows[0].status, "invalid");
  EXPECT_EQ(res.rows[0].reason,
            "batch.micro: batch.global (32) is not divisible by replicas x micro (6) (expected plan.micro_batches "
            "for an uneven split)");
  EXPECT_EQ(res.rows[0].location, "s.yaml:15:32");  // the value of micro
  EXPECT_EQ(res.rows[1].status, "ok");
}


TEST(ValidationV2, ParallelBesidePlanMayInterleaveItsStages) {
  // "Everything of version 1 holds": interleave splits each of the plan's stages into chunks
  // (Megatron-LM's interleaved 1F1B), as parallel.interleave does for a version-1 row.
  const std::string row = R"(  - id: a
    batch: {global: 32, micro: 2}
    parallel: {interleave: 2}
    plan:
      stages:
        - {layers: 12, replicas: [{gpus: [0, 1]}]}
        - {layers: 12, replicas: [{gpus: [2, 3]}]}
    measured: 1.5
)";
  const Suite s = parse_suite(suite_with(row), Catalog::builtin(), "s.yaml");
  const SuiteRow& r = s.rows.at(0);
  const Cluster c = suite_cluster(r.system, suite_row_gpus(r), Catalog::builtin());
  auto plan = suite_plan(r, c, suite_workload(s, r), 2);
  ASSERT_TRUE(std::holds_alternative<Plan>(plan)) << std::get<Infeasible>(plan).reason;
  EXPECT_EQ(std::get<Plan>(plan).schedule, Schedule::kInterleaved);
  EXPECT_EQ(std::get<Plan>(plan).interleave, 2);
  EXPECT_TRUE(predict(c, suite_workload(s, r), std::get<Plan>(plan)).feasible);
  // A stage whose layers do not split into the chunks is a row with a reason, not a crash.
  std::string odd = row;
  odd.replace(odd.find("layers: 12"), 10, "layers: 13");
  odd.replace(odd.find("layers: 12"), 10, "layers: 11");
  const Suite o = parse_suite(suite_with(odd), Catalog::builtin(), "s.yaml");
  auto odd_plan = suite_plan(o.rows.at(0), c, suite_workload(o, o.rows.at(0)), 2);
  ASSERT_TRUE(std::holds_alternative<Infeasible>(odd_plan));
  EXPECT_THAT(std::get<Infeasible>(odd_plan).reason, HasSubstr("not divisible by interleave (2)"));
}

}  // namespace
}  // namespace hetsim::models
