// SPDX-License-Identifier: Apache-2.0
// Cluster-design sweeps: the `kind: sweep` loader and its checks (positions of every error),
// the grid and the clusters of its points (the runner: sweep_run_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "sweep_run.hpp"
#include "sweep_spec.hpp"
#include "model_fingerprint.hpp"
#include "sweep_test_util.hpp"

namespace hetsim::models {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using namespace sweep_test;

/// The diagnostics of a spec that must not load, as "line:col: field: message" lines.
std::string errors_of(const std::string& text, bool check = false) {
  try {
    const SweepSpec s = parse_sweep_spec(text, "s.yaml");
    if (check) check_sweep_spec(s, two_zones(), Catalog::builtin());
  } catch (const ConfigError& e) {
    std::string out;
    for (const Diagnostic& d : e.get_diagnostics())
      out += std::to_string(d.line) + ":" + std::to_string(d.col) + ": " + d.field + ": " + d.message + "\n";
    return out;
  }
  return "(loaded)";
}

constexpr const char* kHead = "kind: sweep\nname: t\ncluster: c.yaml\nworkloads: [w.yaml]\n";

TEST(SweepSpec, ReadsEveryAxisKindAndResolvesPathsAgainstItsFolder) {
  const SweepSpec s = parse_sweep_spec(std::string(kHead) + R"(objective: budget
budget_per_hour: "$100/h"
tp_comm_overlap: true
overlap_p2p_comm: true
axes:
  - {node_type: small, zone: east, nodes: [0, 1, 4]}
  - {node_type: big, gpu: [a100-sxm4-80gb, h100-sxm5-80gb]}
  - {node_type: small, nic_bandwidth: ["100Gbps", "25GB/s"]}
  - {node_type: big, intra_bandwidth: ["300GB/s"]}
  - {node_type: small, price: ["$5/h", "$10/h"]}
  - {link: [east, west], bandwidth: ["1.25GB/s", "10GB/s"]}
)",
                                       "s.yaml", "studies");
  EXPECT_EQ(s.cluster_path, "studies/c.yaml");
  EXPECT_EQ(s.workload_paths, std::vector<std::string>{"studies/w.yaml"});
  EXPECT_EQ(s.objective, PlanObjective::kBudget);
  EXPECT_DOUBLE_EQ(s.budget_per_hour, 100.0);
  EXPECT_TRUE(s.tp_comm_overlap);
  EXPECT_TRUE(s.overlap_p2p_comm);
  EXPECT_EQ(s.sharded_collectives, ShardedCollectives::kMemberNic);  // the default
  ASSERT_EQ(s.axes.size(), 6u);
  EXPECT_EQ(s.axes[0].column(), "east/small.nodes");
  EXPECT_EQ(s.axes[1].column(), "big.gpu");
  EXPECT_EQ(s.axes[5].column(), "east-west.link_bandwidth");
  EXPECT_DOUBLE_EQ(s.axes[2].values[0], 12.5e9);  // 100 Gb/s
  EXPECT_DOUBLE_EQ(s.axes[4].values[1], 10.0);
  EXPECT_EQ(s.axes[1].labels[1], "h100-sxm5-80gb");
  EXPECT_EQ(s.point_count(), 3 * 2 * 2 * 1 * 2 * 2);
  EXPECT_NO_THROW(check_sweep_spec(s, two_zones(), Catalog::builtin()));
}

// The stack's ZeRO-3 flavour is a spec-wide planner option, part of a checkpoint record's key
// (a record planned for DeepSpeed's gathers is not FSDP's), absent from it at the default.
TEST(SweepSpec, ShardedCollectivesIsASpecWideOptionInTheRowKey) {
  const SweepSpec fsdp =
      parse_sweep_spec(std::string(kHead) + "sharded_collectives: node_nics\nsearch: {zero: [1, 3]}\n", "s.yaml");
  EXPECT_EQ(fsdp.sharded_collectives, ShardedCollectives::kNodeNics);
  const SweepSpec plain = parse_sweep_spec(kHead, "s.yaml");
  EXPECT_NE(sweep_row_key(fsdp, "c", "w", "", {}, 0, ""), sweep_row_key(plain, "c", "w", "", {}, 0, ""));
  EXPECT_EQ(sweep_row_key(plain, "c", "w", "", {}, 0, "").find("sharded_collectives"), std::string::npos);
  EXPECT_NE(errors_of(std::string(kHead) + "sharded_collectives: fsdp\n").find("5:22: sharded_collectives:"),
            std::string::npos)
      << errors_of(std::string(kHead) + "sharded_collectives: fsdp\n");
  // Without ZeRO-3 in the search it would price nothing: an error, not a silent no-op.
  EXPECT_NE(errors_of(std::string(kHead) + "sharded_collectives: node_nics\n").find("5:1: sharded_collectives: prices the ZeRO-3"),
            std::string::npos)
      << errors_of(std::string(kHead) + "sharded_collectives: node_nics\n");
  // A list holding 3 beside a value the search refuses (2) says that one, not "has no 3" too
  // (s50 docs check: the list's valid values were dropped with the bad one).
  const std::string with_two = errors_of(std::string(kHead) + "sharded_collectives: node_nics\nsearch: {zero: [1, 2, 3]}\n");
  EXPECT_NE(with_two.find("search.zero[1]: the planner does not search ZeRO-2"), std::string::npos) << with_two;
  EXPECT_EQ(with_two.find("has no 3"), std::string::npos) << with_two;
}

TEST(SweepSpec, PointsVaryTheLastAxisFastest) {
  const SweepSpec s = parse_sweep_spec(std::string(kHead) +
                                       "axes:\n  - {node_type: big, nodes: [1, 2]}\n  - {node_type: small, zone: east, nodes: [0, 1, 2]}\n");
  EXPECT_EQ(sweep_point(s, 0), (std::vector<int>{0, 0}));
  EXPECT_EQ(sweep_point(s, 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(sweep_point(s, 3), (std::vector<int>{1, 0}));
  EXPECT_EQ(sweep_point(s, 5), (std::vector<int>{1, 2}));
}

TEST(SweepSpec, PointClustersCarryTheirValues) {
  const SweepSpec s = parse_sweep_spec(std::string(kHead) + R"(axes:
  - {node_type: small, zone: east, nodes: [0, 3]}
  - {node_type: big, gpu: [h100-sxm5-80gb]}
  - {node_type: small, nic_bandwidth: ["50GB/s"]}
  - {node_type: big, intra_bandwidth: ["450GB/s"]}
  - {node_type: small, price: ["$7/h"]}
  - {link: [west, east], bandwidth: ["10GB/s"]}
)");
  const Cluster base = two_zones();
  ASSERT_EQ(base.gpu_count(), 32);
  const Cluster none = sweep_cluster(s, base, sweep_point(s, 0), Catalog::builtin());
  EXPECT_EQ(none.gpu_count(), 16);  // east's small group dropped, west's kept
  EXPECT_EQ(none.zones[0].groups.size(), 1u);
  const Cluster more = sweep_cluster(s, base, sweep_point(s, 1), Catalog::builtin());
  EXPECT_EQ(more.gpu_count(), 8 + 24 + 8);
  EXPECT_EQ(more.node_types[0].gpu.name, "h100-sxm5-80gb");
  // The file left `big`'s host link to its GPU: the H100's now (PCIe 5.0), not the A100's that
  // the axis replaced (s68 consistency hunt: the sweep's point and the same cluster written out
  // planned 0.3-0.7% apart).
  ASSERT_NE(base.node_types[0].host_link_Bps, default_host_link_Bps(more.node_types[0].gpu));
  EXPECT_DOUBLE_EQ(more.node_types[0].host_link_Bps, default_host_link_Bps(more.node_types[0].gpu));
  EXPECT_DOUBLE_EQ(more.node_types[1].nics.bandwidth_Bps, 50e9);
  EXPECT_DOUBLE_EQ(more.node_types[0].intra.bandwidth_Bps, 450e9);
  EXPECT_DOUBLE_EQ(more.node_types[1].price_per_hour, 7.0);
  EXPECT_DOUBLE_EQ(more.links[0].bandwidth_Bps, 10e9);
  EXPECT_DOUBLE_EQ(more.price_per_hour(), 30.0 + 4 * 7.0);
}

TEST(SweepSpec, AGpuAxisKeepsAHostLinkTheFileGives) {
  std::string cluster = kTwoZones;
  const std::string big = "price: \"$30/h\"}";
  ASSERT_NE(cluster.find(big), std::string::npos);
  cluster.replace(cluster.find(big), big.size(), "price: \"$30/h\", host_link: \"20GB/s\"}");
  const Cluster base = parse_cluster(cluster, Catalog::builtin(), "c.yaml");
  const SweepSpec s = parse_sweep_spec(std::string(kHead) + "axes:\n  - {node_type: big, gpu: [h100-sxm5-80gb]}\n");
  const Cluster point = sweep_cluster(s, base, sweep_point(s, 0), Catalog::builtin());
  EXPECT_EQ(point.node_types[0].gpu.name, "h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(point.node_types[0].host_link_Bps, 20e9);
}

TEST(SweepSpec, ReportsEveryErrorOfTheFileWithItsPosition) {
  const std::string e = errors_of(R"(kind: sweep
name: t
cluster: c.yaml
workloads: []
objective: budget
spotty: true
axes:
  - {node_type: big, nodes: [1, -2, 1]}
  - {node_type: big, gpu: [h100-sxm5-80gb], price: ["$1/h"]}
  - {node_type: big}
  - {node_type: small, nic_bandwidth: ["25", "0GB/s"]}
  - {link: [east], bandwidth: ["1GB/s"]}
  - {node_type: big, nodes: [3]}
)");
  EXPECT_THAT(e, HasSubstr("4:12: workloads: list has 0 entries (expected a non-empty list)"));
  EXPECT_THAT(e, HasSubstr("5:12: objective: budget needs `budget_per_hour`"));
  EXPECT_THAT(e, HasSubstr("6:1: : unknown key 'spotty' (did you mean 'spot'?)"));
  EXPECT_THAT(e, HasSubstr("8:33: axes[0].nodes[1]: value -2 out of range"));
  EXPECT_THAT(e, HasSubstr("8:37: axes[0].nodes[2]: \"1\" is the value of axes[0].nodes[0] again"));
  EXPECT_THAT(e, HasSubstr("9:45: axes[1].price: an axis varies one thing"));
  EXPECT_THAT(e, HasSubstr("axes[2]: says what to vary nowhere"));
  EXPECT_THAT(e, HasSubstr("11:40: axes[3].nic_bandwidth[0]:"));
  EXPECT_THAT(e, HasSubstr("11:46: axes[3].nic_bandwidth[1]: \"0GB/s\" must be > 0"));
  EXPECT_THAT(e, HasSubstr("12:12: axes[4].link: lists 1 zone (expected the two zones the link joins)"));
}

TEST(SweepSpec, EachThingIsVariedByOneAxis) {
  // Written differently, the same thing: the type's only group, named with and without its zone;
  // a link named from either end.
  const std::string e = errors_of(std::string(kHead) + R"(axes:
  - {node_type: big, nodes: [1]}
  - {node_type: big, zone: east, nodes: [2]}
  - {link: [east, west], bandwidth: ["1GB/s"]}
  - {link: [west, east], bandwidth: ["2GB/s"]}
  - {node_type: big, price: ["$1/h"]}
)",
                                  true);
  EXPECT_THAT(e, HasSubstr("7:5: axes[1]: varies what axes[0] varies (expected each thing varied by one axis)"));
  EXPECT_THAT(e, HasSubstr("9:5: axes[3]: varies what axes[2] varies"));
  EXPECT_THAT(e, Not(HasSubstr("axes[4]")));
  EXPECT_THAT(errors_of(std::string(kHead) + "axes:\n  - {link: [a, b, c], bandwidth: [\"1GB/s\"]}\n"),
              HasSubstr("6:12: axes[0].link: lists 3 zones (expected the two zones the link joins)"));
}

TEST(SweepSpec, EqualValuesWrittenDifferentlyAreOnePoint) {
  const std::string e = errors_of(std::string(kHead) + R"(axes:
  - {node_type: big, nodes: [2, 02]}
  - {node_type: small, nic_bandwidth: ["25GB/s", "200Gbps"]}
)");
  EXPECT_THAT(e, HasSubstr("6:33: axes[0].nodes[1]: \"02\" is the value of axes[0].nodes[0] again"));
  EXPECT_THAT(e, HasSubstr("7:50: axes[1].nic_bandwidth[1]: \"200Gbps\" is the value of axes[1].nic_bandwidth[0] again"));
  EXPECT_THAT(errors_of("kind: sweep\nname: t\ncluster: c.yaml\nworkloads: [w.yaml, ./w.yaml]\n"),
              HasSubstr("4:21: workloads[1]: './w.yaml' is workloads[0] again (expected each workload once)"));
}

TEST(SweepSpec, RejectsAxesThatWouldNotDoWhatTheySay) {
  constexpr const char* kOdd = R"(kind: cluster
name: odd
node_types:
  gpu8: {gpu: a100-sxm4-80gb, gpus: 8, intra: {kind: nvswitch, bandwidth: "300GB/s"}, nics: {count: 8, bandwidth: "25GB/s"}}
  solo: {gpu: a100-sxm4-80gb, gpus: 1, nics: {count: 1, bandwidth: "25GB/s"}}
  cpu: {gpu: cpu-avx2, gpus: 2, intra: {kind: pcie, bandwidth: "10GB/s"}, nics: {count: 1, bandwidth: "1GB/s", kind: ethernet}}
zones:
  - {name: dc, fabric: {kind: fat-tree}, nodes: [{type: gpu8, count: 1}, {type: gpu8, count: 2}, {type: solo, count: 1}, {type: cpu, count: 1}]}
)";
  const Cluster odd = parse_cluster(kOdd, Catalog::builtin(), "odd.yaml");
  const auto check = [&](const std::string& axes) {
    try {
      check_sweep_spec(parse_sweep_spec(std::string(kHead) + "axes:\n" + axes, "s.yaml"), odd, Catalog::builtin());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  EXPECT_THAT(check("  - {node_type: gpu8, nodes: [1]}\n"),
              HasSubstr("zone 'dc' has 2 groups of type 'gpu8' (expected one group to resize"));
  EXPECT_THAT(check("  - {node_type: solo, intra_bandwidth: [\"10GB/s\"]}\n"),
              HasSubstr("node type 'solo' has no intra-node fabric (intra: none)"));
  EXPECT_THAT(check("  - {node_type: gpu8, gpu: [cpu-avx2]}\n"),
              HasSubstr("'cpu-avx2' is a CPU device type and 'gpu8' holds GPU devices"));
  EXPECT_THAT(check("  - {node_type: cpu, gpu: [cpu-scalar]}\n"), "(loaded)");  // CPU for CPU: a what-if of the engine's devices
  // 100,000 one-GPU nodes and as many two-CPU ones: 300,024 devices, within kMaxClusterGpus.
  EXPECT_THAT(check("  - {node_type: solo, nodes: [100000]}\n  - {node_type: cpu, nodes: [100000]}\n"), "(loaded)");
}

TEST(SweepSpec, APointCannotExceedTheClusterGpuBound) {
  const std::string e = errors_of(std::string(kHead) + "axes:\n  - {node_type: big, nodes: [100000, 200]}\n"
                                                        "  - {node_type: small, zone: east, nodes: [100000]}\n",
                                  true);
  EXPECT_THAT(e, HasSubstr("6:5: axes[0]: the largest point has 1600008 GPUs (expected at most 1048576 in a cluster)"));
}

TEST(SweepSpec, ASpotPriceAxisSetsTheSpotPrice) {
  std::string text = kTwoZones;
  text.replace(text.find("price: \"$10/h\"}"), 15, "price: \"$10/h\", spot_price: \"$3/h\"}");
  const Cluster base = parse_cluster(text, Catalog::builtin(), "spot.yaml");
  SweepSpec s = parse_sweep_spec(std::string(kHead) + "spot: true\naxes:\n  - {node_type: small, price: [\"$1/h\"]}\n");
  const Cluster c = sweep_cluster(s, base, {0}, Catalog::builtin());
  EXPECT_DOUBLE_EQ(*c.node_types[1].spot_price_per_hour, 1.0);
  EXPECT_DOUBLE_EQ(c.node_types[1].price_per_hour, 10.0);
  s.spot = false;
  EXPECT_DOUBLE_EQ(sweep_cluster(s, base, {0}, Catalog::builtin()).node_types[1].price_per_hour, 1.0);
}

TEST(SweepSpec, APreemptionRateAxisNeedsSpotPricesAndSetsTheRate) {
  std::string text = kTwoZones;
  text.replace(text.find("price: \"$10/h\"}"), 15, "price: \"$10/h\", spot_price: \"$3/h\"}");
  const Cluster base = parse_cluster(text, Catalog::builtin(), "spot.yaml");
  const std::string axis = "axes:\n  - {node_type: small, preemption_rate: [\"0.1/h\", \"2/h\"]}\n";
  SweepSpec s = parse_sweep_spec(std::string(kHead) + "spot: true\n" + axis);
  check_sweep_spec(s, base, Catalog::builtin());
  EXPECT_EQ(s.axes[0].column(), "small.preemption_rate");
  EXPECT_DOUBLE_EQ(sweep_cluster(s, base, {1}, Catalog::builtin()).node_types[1].preemption_rate_per_hour, 2.0);
  // On demand nothing is reclaimed, and a type without a spot price never is: both say so.
  s.spot = false;
  try {
    check_sweep_spec(s, base, Catalog::builtin());
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a preemption_rate axis needs `spot: true`"));
  }
  const SweepSpec big = parse_sweep_spec(std::string(kHead) + "spot: true\naxes:\n  - {node_type: big, preemption_rate: [\"1/h\"]}\n");
  try {
    check_sweep_spec(big, base, Catalog::builtin());
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node type 'big' has no spot_price"));
  }
  EXPECT_THAT(errors_of(std::string(kHead) + "spot: true\naxes:\n  - {node_type: small, preemption_rate: [\"often\"]}\n"),
              HasSubstr("axes[0].preemption_rate[0]"));
}

TEST(SweepSpec, SweptLinksWinOverAProfilesFigures) {
  const SweepSpec s = parse_sweep_spec(std::string(kHead) + R"(axes:
  - {node_type: big, intra_bandwidth: ["100GB/s"]}
  - {node_type: small, nic_bandwidth: ["5GB/s"]}
)");
  Profile p;
  p.links["nvswitch"] = {7e9, 1e-6};
  p.links["infiniband"] = {3e9, 2e-6};
  p.devices["a100-sxm4-80gb"].gemm_efficiency = 0.5;
  const Cluster c = sweep_cluster(s, two_zones(), {0, 0}, Catalog::builtin(), &p);
  EXPECT_DOUBLE_EQ(c.node_types[0].intra.bandwidth_Bps, 100e9);  // the axis, as a line rate
  EXPECT_FALSE(c.node_types[0].intra.measured);
  EXPECT_DOUBLE_EQ(c.node_types[1].nics.bandwidth_Bps, 5e9);
  EXPECT_FALSE(c.node_types[1].nics.measured);
  EXPECT_TRUE(c.node_types[0].nics.measured);  // not swept: the profile's achieved figure
  EXPECT_DOUBLE_EQ(c.node_types[0].gpu.efficiency.gemm_efficiency, 0.5);
  // A cluster file that marks its fabric measured: the swept values are achieved figures too
  // (s25 audit: the flag was dropped, and the cluster's own value, swept, gave 7% fewer tokens/s).
  Cluster measured = two_zones();
  measured.node_types[0].intra.measured = true;
  const Cluster m = sweep_cluster(s, measured, {0, 0}, Catalog::builtin(), nullptr);
  EXPECT_DOUBLE_EQ(m.node_types[0].intra.bandwidth_Bps, 100e9);
  EXPECT_TRUE(m.node_types[0].intra.measured);
  EXPECT_FALSE(m.node_types[1].nics.measured);
}

/// The errors of load_sweep_inputs on a spec with these axes, written next to two_zones()'s file
/// (the spec's own errors and those against its cluster together), or "(loaded)".
std::string input_errors(const std::string& axes) {
  // One folder per process: ctest -j runs each test in its own process, and other checkouts'
  // tests may run at the same time; a shared folder was removed under a running test.
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-sweep-inputs-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "c.yaml") << kTwoZones;
  std::ofstream(dir / "s.yaml") << "kind: sweep\nname: t\ncluster: c.yaml\nworkloads: [" << kSource
                                << "/workloads/gpt3-6.7b.yaml]\naxes:\n" << axes;
  std::string out = "(loaded)";
  try {
    load_sweep_inputs((dir / "s.yaml").string(), Catalog::builtin());
  } catch (const ConfigError& e) {
    out = e.what();
  }
  std::filesystem::remove_all(dir);
  return out;
}

TEST(SweepInputs, ReportsTheSpecsOwnErrorsAndThoseAgainstItsClusterTogether) {
  const std::string e = input_errors("  - {node_type: bigg, nodes: [1]}\n  - {node_type: small, zone: east, nodes: [1, 1]}\n");
  EXPECT_THAT(e, HasSubstr("s.yaml:7:47: error: axes[1].nodes[1]: \"1\" is the value of axes[1].nodes[0] again"));
  EXPECT_THAT(e, HasSubstr("s.yaml:6:17: error: axes[0].node_type: cluster 'two-zones' has no node type 'bigg'"));
}

// A gpu axis spelled as nvidia-smi prints a type: the rows, the CSV and `describe` named the
// type so, where every other output names it as the catalog does (s58 docs hunt).
TEST(SweepInputs, AGpuAxisNamesItsTypesAsTheCatalogDoes) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-sweep-gpu-names-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "c.yaml") << kTwoZones;
  std::ofstream(dir / "s.yaml") << "kind: sweep\nname: t\ncluster: c.yaml\nworkloads: [" << kSource
                                << "/workloads/gpt3-6.7b.yaml]\naxes:\n"
                                << "  - {node_type: small, gpu: [\"Tesla V100-SXM2-16GB\", \"NVIDIA TITAN V\"]}\n";
  const SweepInputs in = load_sweep_inputs((dir / "s.yaml").string(), Catalog::builtin());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(in.spec.axes.size(), 1u);
  EXPECT_EQ(in.spec.axes[0].labels, (std::vector<std::string>{"v100-sxm2-16gb", "titan-v"}));
}

// A symlink loop named as the cluster escaped as "filesystem error: status: Too many levels of
// symbolic links", exit 1 and no position.
TEST(SweepInputs, APathThatCannotBeExaminedIsTheSpecsError) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-sweep-loop-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::error_code ec;
  std::filesystem::create_symlink("loop2", dir / "loop1", ec);
  std::filesystem::create_symlink("loop1", dir / "loop2", ec);
  std::ofstream(dir / "s.yaml") << "kind: sweep\nname: t\ncluster: loop1\nworkloads: [" << kSource
                                << "/workloads/gpt3-6.7b.yaml]\naxes: []\n";
  std::string out = "(loaded)";
  try {
    load_sweep_inputs((dir / "s.yaml").string(), Catalog::builtin());
  } catch (const ConfigError& e) {
    out = e.what();
  } catch (const std::exception& e) {
    out = std::string("escaped: ") + e.what();
  }
  std::filesystem::remove_all(dir);
  EXPECT_THAT(out, HasSubstr("s.yaml:3:10: error: cluster: cannot open '")) << out;
  EXPECT_THAT(out, HasSubstr("Too many levels of symbolic links (expected a path relative to the sweep file's folder)"));
}

TEST(SweepSpec, ChecksAxesAgainstTheCluster) {
  const std::string e = errors_of(std::string(kHead) + R"(axes:
  - {node_type: smal, nic_bandwidth: ["1GB/s"]}
  - {node_type: small, nodes: [1]}
  - {node_type: big, zone: west, nodes: [1]}
  - {node_type: big, gpu: [a100-sxm4-80g]}
  - {link: [east, north], bandwidth: ["1GB/s"]}
)",
                                  true);
  EXPECT_THAT(e, HasSubstr("6:17: axes[0].node_type: cluster 'two-zones' has no node type 'smal' (did you mean 'small'?"));
  EXPECT_THAT(e, HasSubstr("7:17: axes[1].node_type: node type 'small' is placed in 2 zones (expected `zone:`"));
  EXPECT_THAT(e, HasSubstr("axes[2].zone: zone 'west' has no nodes of type 'big'"));
  EXPECT_THAT(e, HasSubstr("axes[3].gpu[0]: unknown GPU 'a100-sxm4-80g' (did you mean 'a100-sxm4-80gb'?"));
  EXPECT_THAT(e, HasSubstr("axes[4].link: cluster 'two-zones' has no zone 'north'"));
  // Spellings of one type (its name, an alias, another punctuation) are one point, not three.
  EXPECT_THAT(errors_of(std::string(kHead) +
                            "axes:\n  - {node_type: big, gpu: [h100-sxm5-80gb, \"NVIDIA H100 80GB HBM3\", H100_SXM5_80GB]}\n",
                        true),
              AllOf(HasSubstr("axes[0].gpu[1]: 'NVIDIA H100 80GB HBM3' names 'h100-sxm5-80gb', as axes[0].gpu[0] does"),
                    HasSubstr("axes[0].gpu[2]: 'H100_SXM5_80GB' names 'h100-sxm5-80gb', as axes[0].gpu[0] does")));
}

TEST(SweepInputs, ChecksNameAxesAsWrittenAfterAnInvalidOne) {
  const std::string e = input_errors("  - {node_type: big, nodes: [-1]}\n  - {node_type: bigg, price: [\"$1/h\"]}\n"
                                     "  - {link: [east, north], bandwidth: [\"1GB/s\"]}\n");
  EXPECT_THAT(e, HasSubstr("axes[0].nodes[0]: value -1 out of range"));
  EXPECT_THAT(e, HasSubstr("s.yaml:7:17: error: axes[1].node_type: cluster 'two-zones' has no node type 'bigg'"));
  EXPECT_THAT(e, HasSubstr("s.yaml:8:12: error: axes[2].link: cluster 'two-zones' has no zone 'north'"));
}

TEST(SweepSpec, RejectsGridsTooLargeToBeMeant) {
  std::string axes = "axes:\n";
  for (const char* t : {"big", "small"})
    for (const char* k : {"price", "nic_bandwidth"}) {
      axes += std::string("  - {node_type: ") + t + ", " + k + ": [";
      for (int i = 1; i <= 20; ++i)
        axes += std::string(i > 1 ? ", " : "") + (k[0] == 'p' ? "\"$" : "\"") + std::to_string(i) +
                (k[0] == 'p' ? "/h\"" : "GB/s\"");
      axes += "]}\n";
    }
  EXPECT_THAT(errors_of(std::string(kHead) + axes), HasSubstr("the grid has more than 100000 points"));
}

TEST(SweepSpec, BudgetPerHourWithoutTheBudgetObjectiveIsAnError) {
  EXPECT_THAT(errors_of(std::string(kHead) + "budget_per_hour: \"$5/h\"\n"),
              HasSubstr("budget_per_hour: is used by `objective: budget` only"));
}

// ---- runner ------------------------------------------------------------------------------

TEST(SweepExamples, EveryBundledSweepLoadsAndChecksAgainstItsCluster) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/sweeps")) {
    if (e.path().extension() != ".yaml") continue;
    const SweepSpec s = load_sweep_spec(e.path().string());
    EXPECT_NO_THROW(check_sweep_spec(s, load_cluster(s.cluster_path, Catalog::builtin()), Catalog::builtin()))
        << e.path();
    ++n;
  }
  EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace hetsim::models
