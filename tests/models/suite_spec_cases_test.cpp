// SPDX-License-Identifier: Apache-2.0
// Suite rows written from the spec (../shared/validation/README.md) in ways another author may
// choose, which a conformance audit found mis-read: a row's own `system` (it replaces the
// suite's whole), `micro_batches` without `batch.micro`, and one hardware written in both
// versions of the format.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "catalog.hpp"
#include "predictor.hpp"
#include "validation_suite.hpp"

namespace hetsim::models {
namespace {

TEST(SuiteSpecCases, ARowSystemReplacesTheSuitesWhole) {
  // The suite's 40 us latency must not leak into a row system that does not give one.
  const Suite s = parse_suite(R"(suite: rowsys
source: "test"
metric: iteration_time_s
system: {gpu: a100-sxm4-80gb, gpus_per_node: 8, intra_node_bandwidth: "300GB/s", inter_node_bandwidth: "25GB/s", inter_node_latency: "40us"}
defaults:
  model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}
  training: {dtype: fp16, recompute: none, schedule: 1f1b}
rows:
  - {id: suite-system, parallel: {tp: 1, pp: 1, dp: 16}, batch: {global: 32, micro: 1}, measured: 1}
  - id: own-system
    system: {gpu: v100-sxm2-32gb, gpus_per_node: 4, intra_node_bandwidth: "150GB/s", inter_node_bandwidth: "12.5GB/s"}
    parallel: {tp: 1, pp: 1, dp: 8}
    batch: {global: 32, micro: 1}
    measured: 1
)",
                              Catalog::builtin(), "rowsys.yaml");
  EXPECT_DOUBLE_EQ(s.rows[0].system.inter_node_latency_s, 40e-6);
  EXPECT_EQ(s.rows[1].system.gpu, "v100-sxm2-32gb");
  EXPECT_DOUBLE_EQ(s.rows[1].system.inter_node_latency_s, SuiteSystem{}.inter_node_latency_s);
}

const std::string kV2Head = R"(format: 2
suite: spec
source: "test"
metric: iteration_time_s
system:
  nodes:
    - {gpu: h100-sxm5-80gb, count: 4, gpus_per_node: 8, intra_node_bandwidth: "450GB/s", nic_bandwidth: "400GB/s"}
defaults:
  model: {layers: 8, hidden: 4096, heads: 32, seq_len: 2048, vocab: 51200}
  training: {dtype: bf16, recompute: full, schedule: 1f1b}
rows:
)";

TEST(SuiteSpecCases, MicroBatchCountsWithoutBatchMicroFixIt) {
  // 24 + 8 = 32 micro-batches for a global batch of 64: two sequences each.
  const Suite s = parse_suite(kV2Head + R"(  - id: a
    batch: {global: 64}
    plan:
      stages:
        - {layers: 8, replicas: [{gpus: [0]}, {gpus: [1]}]}
      micro_batches: [24, 8]
    measured: 1
)",
                              Catalog::builtin(), "mb.yaml");
  ASSERT_TRUE(s.rows[0].micro.has_value());
  EXPECT_EQ(*s.rows[0].micro, 2);
}

TEST(SuiteSpecCases, OneHardwareInBothFormatsPredictsTheSame) {
  // Four H100 nodes with 400 GB/s of NICs each: version 1 gives it per GPU (50 GB/s), version 2
  // per node. An RDMA-class node figure is split over one NIC per GPU, as the version-1 form.
  const Suite v1 = parse_suite(R"(suite: v1
source: "test"
metric: iteration_time_s
system: {gpu: h100-sxm5-80gb, gpus_per_node: 8, intra_node_bandwidth: "450GB/s", inter_node_bandwidth: "50GB/s"}
defaults:
  model: {layers: 8, hidden: 4096, heads: 32, seq_len: 2048, vocab: 51200}
  training: {dtype: bf16, recompute: full, schedule: 1f1b}
rows:
  - {id: dp32, parallel: {tp: 1, pp: 1, dp: 32}, batch: {global: 64, micro: 1}, measured: 1}
  - {id: tp16, parallel: {tp: 16, pp: 1, dp: 2}, batch: {global: 64, micro: 2}, measured: 1}
)",
                               Catalog::builtin(), "v1.yaml");
  const Suite v2 = parse_suite(kV2Head + R"(  - {id: dp32, parallel: {tp: 1, pp: 1, dp: 32}, batch: {global: 64, micro: 1}, measured: 1}
  - {id: tp16, parallel: {tp: 16, pp: 1, dp: 2}, batch: {global: 64, micro: 2}, measured: 1}
)",
                               Catalog::builtin(), "v2.yaml");
  for (std::size_t i = 0; i < 2; ++i) {
    const RowResult a = validate_row(v1, v1.rows[i], Catalog::builtin(), predict);
    const RowResult b = validate_row(v2, v2.rows[i], Catalog::builtin(), predict);
    ASSERT_EQ(a.status, "ok") << a.reason;
    ASSERT_EQ(b.status, "ok") << b.reason;
    EXPECT_NEAR(*b.predicted / *a.predicted, 1.0, 1e-9) << v1.rows[i].id;
  }
  // A socket-class node figure (<= 100 Gb/s) stays one shared NIC without GPUDirect.
  const Cluster slow = suite_cluster(
      [] {
        SuiteSystem s;
        s.nodes.push_back({"v100-sxm2-16gb", 2, 4, 100e9, 1.25e9});
        return s;
      }(),
      8, Catalog::builtin());
  EXPECT_EQ(slow.node_types[0].nics.count, 1);
  EXPECT_FALSE(slow.node_types[0].nics.gpu_direct);
}

}  // namespace
}  // namespace hetsim::models
