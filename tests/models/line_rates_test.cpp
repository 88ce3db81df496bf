// SPDX-License-Identifier: Apache-2.0
// Nominal vs measured link figures: the line-rate rule the suite converters use, the cluster
// file's `measured` key, and the achieved bandwidth the cost model takes from each.
#include <gtest/gtest.h>

#include <string>

#include "catalog.hpp"
#include "input_loader.hpp"
#include "input_writers.hpp"
#include "line_rates.hpp"
#include "topology.hpp"
#include "validation_suite.hpp"

namespace hetsim::models {
namespace {

TEST(LineRates, DatasheetFiguresOfIntraNodeFabrics) {
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kPcie, 15.75e9));     // PCIe 3.0 x16 (15.754)
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kPcie, 31.5e9));      // PCIe 4.0 x16
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kPcie, 7.88e9));      // PCIe 3.0 x8
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kNvswitch, 300e9));   // A100: 12 NVLink3 links
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kNvswitch, 450e9));   // H100: 18 NVLink4 links
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kNvlink, 100e9));     // V100 in a p3.8xlarge, 4 links
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kXgmi, 448e9));       // MI300X: 7 x 64 GB/s
  EXPECT_TRUE(is_line_rate(IntraFabricKind::kNone, 1.0));
}

TEST(LineRates, MeasuredFiguresAreNoLineRate) {
  // sailor-mit-rtx's send/recv fits: 6.08, 1.33, 10.82 GB/s over PCIe, 49.77 GB/s over a bridge.
  EXPECT_FALSE(is_line_rate(IntraFabricKind::kPcie, 6.08e9));
  EXPECT_FALSE(is_line_rate(IntraFabricKind::kPcie, 1.33e9));
  EXPECT_FALSE(is_line_rate(IntraFabricKind::kPcie, 10.82e9));
  EXPECT_FALSE(is_line_rate(IntraFabricKind::kNvlink, 49.77e9));  // 0.46% below 2 x 25 GB/s
  EXPECT_FALSE(is_line_rate(IntraFabricKind::kNvswitch, 235e9));  // nccl-tests busbw on A100
}

TEST(LineRates, NicFigures) {
  EXPECT_TRUE(is_nic_line_rate(1.25e9));   // 10 Gb/s
  EXPECT_TRUE(is_nic_line_rate(6.25e9));   // 50 Gb/s
  EXPECT_TRUE(is_nic_line_rate(200e9));    // 8 x HDR 200 Gb/s
  EXPECT_FALSE(is_nic_line_rate(0.115e9));  // measured, ~1 GbE
  EXPECT_FALSE(is_nic_line_rate(2.86e9));   // measured, ~25 GbE
  // Per-GPU shares (suite format 1): 800 Gb/s per node of 8 GPUs; one 100 Gb/s NIC for 8 GPUs.
  EXPECT_TRUE(is_nic_share_line_rate(12.5e9, 8));
  EXPECT_TRUE(is_nic_share_line_rate(1.5625e9, 8));
  EXPECT_FALSE(is_nic_share_line_rate(1.43e9, 8));
  EXPECT_FALSE(is_nic_share_line_rate(11.7e9, 8));
}

const std::string kCluster = R"(kind: cluster
name: measured-links
node_types:
  box:
    gpu: rtx3090
    gpus: 8
    intra: {kind: pcie, bandwidth: "6GB/s", measured: true}
    nics: {count: 1, bandwidth: "2.86GB/s", kind: ethernet, gpu_direct: false, measured: true}
  plain:
    gpu: rtx3090
    gpus: 8
    intra: {kind: pcie, bandwidth: "6GB/s"}
    nics: {count: 1, bandwidth: "2.86GB/s", kind: ethernet, gpu_direct: false}
zones:
  - name: z
    fabric: {kind: fat-tree}
    nodes:
      - {type: box, count: 2}
      - {type: plain, count: 1}
)";

TEST(MeasuredLinks, ClusterKeyIsReadWrittenAndUsedAsIs) {
  const Cluster c = parse_cluster(kCluster, Catalog::builtin(), "c.yaml");
  const NodeType& box = c.node_types[0];
  const NodeType& plain = c.node_types[1];
  EXPECT_TRUE(box.intra.measured);
  EXPECT_TRUE(box.nics.measured);
  EXPECT_FALSE(plain.intra.measured);
  EXPECT_DOUBLE_EQ(achieved_bandwidth_Bps(box.intra), 6e9);
  EXPECT_DOUBLE_EQ(achieved_bandwidth_Bps(plain.intra), 6e9 * link_efficiency(IntraFabricKind::kPcie));
  EXPECT_DOUBLE_EQ(achieved_bandwidth_Bps(box.nics), 2.86e9);
  EXPECT_DOUBLE_EQ(achieved_bandwidth_Bps(plain.nics), 2.86e9 * link_efficiency(NicKind::kEthernet));
  // The path between the two measured nodes runs at the measured NIC figure (one sender).
  EXPECT_DOUBLE_EQ(path_between(c, 0, 8, 1).bandwidth_Bps, 2.86e9);
  EXPECT_DOUBLE_EQ(path_between(c, 0, 1, 1).bandwidth_Bps, 6e9);
  // Written out and read back, the flags survive.
  const Cluster back = parse_cluster(cluster_to_yaml(c), Catalog::builtin(), "back.yaml");
  EXPECT_TRUE(back.node_types[0].intra.measured);
  EXPECT_TRUE(back.node_types[0].nics.measured);
  EXPECT_FALSE(back.node_types[1].nics.measured);
}

TEST(MeasuredLinks, SuiteConvertersMarkFiguresThatAreNoLineRate) {
  SuiteSystem nominal;
  nominal.nodes.push_back({"v100-sxm2-16gb", 1, 4, 100e9, 1.25e9});
  nominal.nodes.push_back({"t4", 1, 4, 15.75e9, 6.25e9});
  const Cluster a = suite_cluster(nominal, 8, Catalog::builtin());
  for (const NodeType& nt : a.node_types) {
    EXPECT_FALSE(nt.intra.measured) << nt.name;
    EXPECT_FALSE(nt.nics.measured) << nt.name;
  }
  SuiteSystem measured;
  measured.nodes.push_back({"titan-rtx", 1, 8, 6.08e9, 2.86e9});
  const Cluster b = suite_cluster(measured, 8, Catalog::builtin());
  EXPECT_TRUE(b.node_types[0].intra.measured);
  EXPECT_TRUE(b.node_types[0].nics.measured);
  // Format 1: the per-GPU share of the node's NICs.
  SuiteSystem v1;
  v1.gpu = "a100-sxm4-80gb";
  v1.gpus_per_node = 8;
  v1.intra_node_Bps = 300e9;
  v1.inter_node_Bps = 12.5e9;
  const Cluster d = suite_cluster(v1, 16, Catalog::builtin());
  EXPECT_FALSE(d.node_types[0].intra.measured);
  EXPECT_FALSE(d.node_types[0].nics.measured);
}

}  // namespace
}  // namespace hetsim::models
