// SPDX-License-Identifier: Apache-2.0
// The terminal table of a Report (one line per stage of a run of alike replicas) and its JSON.
#include <gtest/gtest.h>

#include <string>

#include "report.hpp"

namespace hetsim::models {
namespace {

StageReport stage(int replica, int index, const std::string& gpu, double forward_s) {
  StageReport s;
  s.replica = replica;
  s.stage = index;
  s.gpu_type = gpu;
  s.layers = 4;
  s.tp = 2;
  s.forward_s = forward_s;
  s.backward_s = 2 * forward_s;
  s.memory_bytes = 10e9;
  s.memory_capacity_bytes = 80e9;
  return s;
}

std::string stage_lines(const Report& r) { return to_table(r).substr(to_table(r).find("stages\n")); }

TEST(ReportTable, ConsecutiveAlikeReplicasShareTheirLines) {
  Report r;
  r.iteration_time_s = 1;
  for (int rep = 0; rep < 4; ++rep)
    for (int s = 0; s < 2; ++s) r.stages.push_back(stage(rep, s, "a100", 0.01 * (s + 1)));
  // Replica 4 differs (another GPU type), replicas 5 and 6 are alike again but apart from 0-3.
  for (int s = 0; s < 2; ++s) r.stages.push_back(stage(4, s, "v100", 0.01 * (s + 1)));
  for (int rep = 5; rep < 7; ++rep)
    for (int s = 0; s < 2; ++s) r.stages.push_back(stage(rep, s, "a100", 0.01 * (s + 1)));
  const std::string t = stage_lines(r);
  EXPECT_NE(t.find("\n  0-3     0     a100"), std::string::npos) << t;
  EXPECT_NE(t.find("\n  0-3     1     a100"), std::string::npos) << t;
  EXPECT_NE(t.find("\n  4       0     v100"), std::string::npos) << t;
  EXPECT_NE(t.find("\n  5-6     1     a100"), std::string::npos) << t;
  int lines = 0;
  for (char c : t) lines += c == '\n';
  EXPECT_EQ(lines, 2 + 2 * 3) << t;  // "stages", the column names, two stages of three runs
}

TEST(ReportTable, ReplicasThatDifferInOneFigureKeepTheirOwnLines) {
  Report r;
  r.iteration_time_s = 1;
  r.stages = {stage(0, 0, "a100", 0.010), stage(1, 0, "a100", 0.012)};
  const std::string t = stage_lines(r);
  EXPECT_NE(t.find("\n  0       0"), std::string::npos) << t;
  EXPECT_NE(t.find("\n  1       0"), std::string::npos) << t;
}

TEST(ReportTable, TheReplicaColumnWidensForLongRanges) {
  Report r;
  r.iteration_time_s = 1;
  for (int rep = 0; rep < 131072; ++rep) r.stages.push_back(stage(rep, 0, "h100", 0.02));
  const std::string t = stage_lines(r);
  EXPECT_NE(t.find("\n  0-131071  0     h100"), std::string::npos) << t;
  EXPECT_NE(t.find("  replica   stage"), std::string::npos) << t;
}

// Memory is a sum of model terms (8946719129.6 bytes): JSON gives whole bytes.
// The peak over stages of GPUs of several sizes names its GPU and the tightest stage when it is
// more than that stage's GPU holds ("141 GiB" read as on an 80 GB part: s49 walkthrough).
TEST(ReportTable, AMemoryPeakAboveAnotherGpusCapacityNamesTheTightestStage) {
  Report r;
  r.iteration_time_s = 1;
  StageReport big = stage(0, 0, "mi300x", 0.01), tight = stage(0, 1, "h100", 0.01);
  big.memory_bytes = 141.0 * (1 << 30);
  big.memory_capacity_bytes = 192.0 * (1 << 30);
  tight.memory_bytes = 76.75 * (1 << 30);
  tight.memory_capacity_bytes = 80.0 * (1 << 30);
  r.stages = {big, tight};
  r.memory_peak_bytes = big.memory_bytes;
  EXPECT_NE(to_table(r).find("memory peak per GPU      141 GiB (mi300x; tightest: h100 76.8 GiB of 80.0 GiB)\n"),
            std::string::npos)
      << to_table(r);
  r.stages[0].memory_bytes = r.memory_peak_bytes = 70.0 * (1 << 30);  // fits every GPU: the figure alone
  EXPECT_NE(to_table(r).find("memory peak per GPU      70.0 GiB\n"), std::string::npos) << to_table(r);
}

TEST(ReportJson, MemoryFiguresAreWholeBytes) {
  Report r;
  r.iteration_time_s = 1;
  r.memory_peak_bytes = 8946719129.6;
  r.stages.push_back(stage(0, 0, "a100", 0.01));
  r.stages.back().memory_bytes = 8946719129.4;
  const std::string j = to_json(r);
  EXPECT_NE(j.find("\"memory_peak_bytes\": 8946719130,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"memory_bytes\": 8946719129,"), std::string::npos) << j;
}

// A plan refused before it was priced has no figures: null, not 0 (a $0/h plan's real cost),
// and the same keys as a priced Report (s51 JSON hunt: by_gpu_type and stage_ops were missing).
TEST(ReportJson, AnUnpricedPlanHasNullFiguresAndEveryKey) {
  Report r;
  r.feasible = false;
  r.infeasible_reason = "training.global_batch (1024) is not divisible by dp (400)";
  const std::string j = to_json(r);
  for (const char* key : {"iteration_time_s", "tokens_per_s", "mfu", "memory_peak_bytes", "cost_per_hour",
                          "cost_per_million_tokens", "micro_batch", "compute_s", "bubble_s"})
    EXPECT_NE(j.find("\"" + std::string(key) + "\": null"), std::string::npos) << key << "\n" << j;
  EXPECT_NE(j.find("\"by_gpu_type\": []"), std::string::npos) << j;
  EXPECT_NE(j.find("\"stage_ops\": []"), std::string::npos) << j;
  // Over memory, the plan was priced: its figures stay numbers.
  r.stages.push_back(stage(0, 0, "a100", 0.01));
  r.iteration_time_s = 2.5;
  r.micro_batch = 1;
  const std::string priced = to_json(r);
  EXPECT_NE(priced.find("\"iteration_time_s\": 2.5,"), std::string::npos) << priced;
  EXPECT_NE(priced.find("\"micro_batch\": 1,"), std::string::npos) << priced;
}

// Past 2^53 a whole-valued double is written with an exponent: a 22-digit integer literal
// overflows the 64-bit integers typed JSON readers parse it into (s51 JSON hunt).
TEST(ReportJson, HugeFiguresKeepAnExponent) {
  Report r;
  r.feasible = false;
  r.stages.push_back(stage(0, 0, "a100", 0.01));
  r.iteration_time_s = 1868617104000319225856.0;
  r.memory_peak_bytes = 8946719129.6;
  const std::string j = to_json(r);
  EXPECT_NE(j.find("\"iteration_time_s\": 1.8686171040003192e+21,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"memory_peak_bytes\": 8946719130,"), std::string::npos) << j;
}

}  // namespace
}  // namespace hetsim::models
