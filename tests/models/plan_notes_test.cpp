// SPDX-License-Identifier: Apache-2.0
// Report notes (models/plan_notes.hpp): when a figure rests on a rule checked on other hardware.
#include <gtest/gtest.h>

#include <variant>

#include "cost_test_util.hpp"
#include "plan_notes.hpp"
#include "predictor.hpp"
#include "report.hpp"
#include "units.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::gpt_workload;
using testing::node_type;
using testing::round_gpu;

Plan zero_plan(const Cluster& c, const Workload& w, int tp, int dp, int zero, ShardedCollectives how) {
  UniformPlanOptions o;
  o.zero = zero;
  o.sharded_collectives = how;
  auto made = make_uniform_plan(c, w, tp, 1, dp, o);
  EXPECT_TRUE(std::holds_alternative<Plan>(made));
  return std::get<Plan>(made);
}

/// A GPU whose GEMM efficiency is given, as a catalog entry with `efficiency.gemm` has it.
GpuType measured_gpu(const std::string& name, Vendor vendor = Vendor::kNvidia) {
  GpuType g = round_gpu(name, 300e12, 80e9, vendor);
  g.efficiency.gemm_given = true;
  return g;
}

/// Four nodes of 8 GPUs; `nics` NICs of 25 GB/s each.
Cluster four_nodes(int nics) {
  NodeType nt = node_type("n8", measured_gpu("g"), 8, 300e9, 25e9);
  nt.nics.count = nics;
  return cluster_of({nt}, {{0, 4}});
}

TEST(PlanNotes, MemberNicOnSharedNicsGivesTheNodeNicsFigureBeside) {
  const Cluster shared = four_nodes(1);
  const Workload w = gpt_workload(24, 2048, 16, 2048, 64);
  const Plan p = zero_plan(shared, w, 1, 32, 3, ShardedCollectives::kMemberNic);
  const std::vector<std::string> notes = plan_notes(shared, w, p);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("n8 (1 NIC for 8 GPUs)"), std::string::npos) << notes[0];
  Plan fsdp = p;
  fsdp.sharded_collectives = ShardedCollectives::kNodeNics;
  const Report member = predict(shared, w, p), node = predict(shared, w, fsdp);
  ASSERT_TRUE(member.feasible && node.feasible);
  // The rule prices every gather at 1/8 of the one NIC, so the two figures are far apart, and
  // the note quotes the node_nics one.
  EXPECT_GT(member.iteration_time_s, 2 * node.iteration_time_s);
  EXPECT_NE(notes[0].find(format_time(node.iteration_time_s)), std::string::npos) << notes[0];
}

TEST(PlanNotes, NoNoteWhereTheRuleWasChecked) {
  const Workload w = gpt_workload(24, 2048, 16, 2048, 64);
  const Cluster one_nic_per_gpu = four_nodes(8);
  EXPECT_TRUE(plan_notes(one_nic_per_gpu, w, zero_plan(one_nic_per_gpu, w, 1, 32, 3, ShardedCollectives::kMemberNic)).empty());
  const Cluster shared = four_nodes(1);
  // node_nics already, ZeRO-1 (no per-pass collectives), or one node's group (no NIC crossed).
  EXPECT_TRUE(plan_notes(shared, w, zero_plan(shared, w, 1, 32, 3, ShardedCollectives::kNodeNics)).empty());
  EXPECT_TRUE(plan_notes(shared, w, zero_plan(shared, w, 1, 32, 1, ShardedCollectives::kMemberNic)).empty());
  EXPECT_TRUE(plan_notes(shared, w, zero_plan(shared, w, 1, 8, 3, ShardedCollectives::kMemberNic)).empty());
}

// A part left at the catalog's default GEMM efficiency (0.80, A100-era) is named: a user's MI355X
// came out at 66% MFU, above any published training run, with no word of it (s26 walkthrough).
TEST(PlanNotes, DefaultGemmEfficiencyIsNamed) {
  const Workload w = gpt_workload(24, 2048, 16, 2048, 64);
  NodeType nt = node_type("n8", round_gpu("new-part", 300e12), 8, 300e9, 25e9);
  const Cluster c = cluster_of({nt}, {{0, 4}});
  const std::vector<std::string> notes = plan_notes(c, w, zero_plan(c, w, 1, 32, 1, ShardedCollectives::kMemberNic));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("new-part has no `efficiency.gemm` in the catalog or a profile, so its matmuls run at the "
                           "default 0.80 of the dense peak",
                           0),
            0u)
      << notes[0];
}

// NCCL and RCCL join no communicator across vendors: a plan whose pipeline or data-parallel
// groups do says so (s26 walkthrough: every top plan on an H100 + MI355X cluster mixed them).
TEST(PlanNotes, PlansJoiningVendorsAreNamed) {
  const Workload w = gpt_workload(24, 2048, 16, 2048, 64);
  const NodeType nv = node_type("nv8", measured_gpu("nv"), 8, 300e9, 25e9);
  const NodeType amd = node_type("amd8", measured_gpu("amd", Vendor::kAmd), 8, 300e9, 25e9);
  const Cluster c = cluster_of({nv, amd}, {{0, 1}, {1, 1}});
  const auto mentions_vendors = [](const std::vector<std::string>& notes) {
    return notes.size() == 1 && notes[0].find("between NVIDIA and AMD GPUs") != std::string::npos;
  };
  UniformPlanOptions o;
  const auto dp16 = make_uniform_plan(c, w, 1, 1, 16, o);  // one data-parallel group over both nodes
  const auto pp2 = make_uniform_plan(c, w, 1, 2, 8, o);    // stage 0 on the NVIDIA node, stage 1 on the AMD one
  const auto one_node = make_uniform_plan(c, w, 1, 1, 8, o);
  ASSERT_TRUE(std::holds_alternative<Plan>(dp16) && std::holds_alternative<Plan>(pp2) &&
              std::holds_alternative<Plan>(one_node));
  EXPECT_TRUE(mentions_vendors(plan_notes(c, w, std::get<Plan>(dp16))));
  EXPECT_TRUE(mentions_vendors(plan_notes(c, w, std::get<Plan>(pp2))));
  EXPECT_TRUE(plan_notes(c, w, std::get<Plan>(one_node)).empty());
}

/// The JSON without the whitespace between its tokens (to_json indents).
std::string compact(const std::string& json) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"' && (i == 0 || json[i - 1] != '\\')) in_string = !in_string;
    if (in_string || (c != ' ' && c != '\n')) out += c;
  }
  return out;
}

TEST(PlanNotes, ReportsCarryNotesInBothFormats) {
  Report r;
  r.iteration_time_s = 1;
  r.notes = {"a note", "another"};
  EXPECT_NE(to_table(r).find("note: a note\nnote: another\n"), std::string::npos);
  EXPECT_NE(compact(to_json(r)).find(R"("notes":["a note","another"])"), std::string::npos) << to_json(r);
  r.notes.clear();
  EXPECT_NE(compact(to_json(r)).find(R"("notes":[])"), std::string::npos);
}

// Settings that change nothing are named, so a user does not read the figure as theirs (s26 audit
// F16): sequence parallelism with TP 1, interleaved with interleave 1, ZeRO/overlap with one replica.
TEST(PlanNotes, SettingsThatChangeNothingAreNamed) {
  const Workload w = gpt_workload(24, 2048, 16, 2048, 64);
  const Cluster c = four_nodes(8);
  Plan p = zero_plan(c, w, 1, 1, 1, ShardedCollectives::kMemberNic);
  p.sequence_parallel = true;
  p.schedule = Schedule::kInterleaved;
  p.overlap_grad_sync = true;
  std::vector<std::string> notes = plan_notes(c, w, p);
  ASSERT_EQ(notes.size(), 1u);
  for (const char* named : {"`sequence_parallel` (every stage runs TP 1", "`schedule: interleaved` (interleave is 1",
                            "`zero: 1` (one data-parallel replica", "`overlap_grad_sync` (one data-parallel replica"})
    EXPECT_NE(notes[0].find(named), std::string::npos) << named << " in " << notes[0];
  // The same settings where they act: TP 2, interleave 2, two replicas.
  Plan acting = zero_plan(c, w, 2, 2, 1, ShardedCollectives::kMemberNic);
  acting.sequence_parallel = true;
  acting.schedule = Schedule::kInterleaved;
  acting.interleave = 2;
  acting.overlap_grad_sync = true;
  EXPECT_TRUE(plan_notes(c, w, acting).empty());
  // The note never changes a figure: the plan without the idle settings predicts the same time.
  Plan plain = zero_plan(c, w, 1, 1, 0, ShardedCollectives::kMemberNic);
  EXPECT_DOUBLE_EQ(predict(c, w, p).iteration_time_s, predict(c, w, plain).iteration_time_s);
}

}  // namespace
}  // namespace hetsim::models
