// SPDX-License-Identifier: Apache-2.0
// `kind: profile` loading (strict, every error with file:line:col) and apply_profile().
#include <gtest/gtest.h>

#include <variant>

#include "diagnostics.hpp"
#include "input_loader.hpp"
#include "predictor.hpp"
#include "profile.hpp"
#include "topology.hpp"

namespace hetsim::models {
namespace {

std::string errors_of(const std::string& text) {
  try {
    parse_profile(text, "p.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kGood = R"(kind: profile
name: local-cpu
source: "test"
devices:
  cpu-avx2:
    efficiency: {gemm: 0.5, gemm_fp32: 0.4, flash: 1.25, gemm_half_work: "200kFLOP", memory: 0.6, gemm_memory: 0.9, optimizer_memory: 0.45, gemm_k0: 8, gemm_full_outputs: 2000000, kernel_launch: "300ns", framework_op_host: "0s", framework_pass_host: "0s"}
links:
  pcie: {bandwidth: "2GB/s", latency: "5us"}
  ethernet: {bandwidth: "1GB/s", latency: "21us"}
)";

TEST(ProfileLoaderTest, ParsesEveryField) {
  const Profile p = parse_profile(kGood);
  EXPECT_EQ(p.name, "local-cpu");
  const DeviceProfile& d = p.devices.at("cpu-avx2");
  EXPECT_DOUBLE_EQ(*d.gemm_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(*d.gemm_fp32_efficiency, 0.4);
  EXPECT_DOUBLE_EQ(*d.flash_scale, 1.25);
  EXPECT_DOUBLE_EQ(*d.gemm_half_work_flop, 2e5);
  EXPECT_DOUBLE_EQ(*d.memory_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(*d.gemm_memory_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(*d.optimizer_memory_efficiency, 0.45);
  EXPECT_DOUBLE_EQ(*d.gemm_k0, 8.0);
  EXPECT_DOUBLE_EQ(*d.gemm_full_outputs, 2e6);
  EXPECT_NEAR(*d.kernel_launch_s, 3e-7, 1e-15);
  EXPECT_DOUBLE_EQ(*d.framework_op_host_s, 0.0);
  EXPECT_DOUBLE_EQ(p.links.at("pcie").bandwidth_Bps, 2e9);
  EXPECT_DOUBLE_EQ(p.links.at("ethernet").latency_s, 21e-6);
}

TEST(ProfileLoaderTest, ReportsEveryErrorWithItsPosition) {
  const std::string e = errors_of(R"(kind: profile
name: x
devices:
  cpu-avx2:
    efficiency: {gemm: 1.5, kernel_lanch: "1us", gemm_full_outputs: -1}
links:
  warp-drive: {bandwidth: "1GB/s", latency: "1us"}
  pcie: {bandwidth: "fast", latency: "1us"}
)");
  EXPECT_NE(e.find("p.yaml:1:1"), std::string::npos) << e;           // source missing
  EXPECT_NE(e.find("source"), std::string::npos) << e;
  EXPECT_NE(e.find("p.yaml:5:"), std::string::npos) << e;            // gemm out of range, unknown key
  EXPECT_NE(e.find("kernel_lanch"), std::string::npos) << e;
  EXPECT_NE(e.find("gemm_full_outputs"), std::string::npos) << e;  // negative
  EXPECT_NE(e.find("p.yaml:7:3: error"), std::string::npos) << e;    // unknown link class
  EXPECT_NE(e.find("warp-drive"), std::string::npos) << e;
  EXPECT_NE(e.find("p.yaml:8:"), std::string::npos) << e;            // bad bandwidth
}

TEST(ProfileLoaderTest, RejectsAnotherKind) {
  EXPECT_NE(errors_of("kind: plan\nname: x\n").find("profile"), std::string::npos);
  EXPECT_NE(errors_of("not: [valid").find("p.yaml"), std::string::npos);
}

TEST(ApplyProfileTest, OverridesEfficiencyAndLinksOfTheCluster) {
  const Catalog catalog = load_catalog_dir(HETSIM_SOURCE_DIR "/clusters/catalog");
  Cluster c = load_cluster(HETSIM_SOURCE_DIR "/clusters/local-cpu.yaml", catalog);
  const Profile p = parse_profile(kGood);
  EXPECT_EQ(apply_profile(c, p), 2);  // the AVX2 node type (device + links), the scalar one (links)
  const NodeType& avx = c.node_types[0];
  EXPECT_EQ(avx.gpu.name, "cpu-avx2");
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.gemm_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(avx.gpu.gemm_efficiency_in(Dtype::kFp32), 0.4);  // gemm_fp32 is the fp32 rate
  EXPECT_DOUBLE_EQ(avx.gpu.gemm_efficiency_in(Dtype::kBf16), 0.5);
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.flash_scale, 1.25);
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.gemm_memory(), 0.9);  // the GEMMs' roof; elementwise ops keep 0.6
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.gemm_k0, 8.0);
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.gemm_full_outputs, 2e6);
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.memory_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.optimizer_memory(), 0.45);
  EXPECT_DOUBLE_EQ(avx.gpu.efficiency.framework_op_host_s, 0.0);
  // Achieved figures of the cost model equal the profile's.
  const PathCost intra = path_between(c, 0, 1, 0);
  EXPECT_NEAR(intra.bandwidth_Bps, 2e9, 1.0);
  EXPECT_NEAR(intra.latency_s, 5e-6, 1e-15);
  const PathCost across = path_between(c, 1, 2, 0);
  EXPECT_NEAR(across.bandwidth_Bps, 1e9, 1.0);
  EXPECT_NEAR(across.latency_s, 21e-6, 1e-12);
  EXPECT_NE(c.node_types[1].gpu.efficiency.gemm_efficiency, 0.5);  // cpu-scalar not in the profile
  // Without its own figure, the optimizer step streams at the memory efficiency.
  EXPECT_EQ(c.node_types[1].gpu.efficiency.optimizer_memory(), c.node_types[1].gpu.efficiency.memory_efficiency);
}

TEST(ApplyProfileTest, TheOptimizerStepStreamsAtItsOwnFigure) {
  // Adam's 32 bytes per fp32 parameter (models/step_cost.cpp) at bandwidth x optimizer_memory:
  // doubling the figure halves the step's optimizer time and nothing else.
  const Catalog catalog = load_catalog_dir(HETSIM_SOURCE_DIR "/clusters/catalog");
  const Workload w = load_workload(HETSIM_SOURCE_DIR "/workloads/tiny-gpt.yaml");
  double optimizer_s[2], compute_s[2];
  for (int i = 0; i < 2; ++i) {
    Cluster c = load_cluster(HETSIM_SOURCE_DIR "/clusters/local-cpu.yaml", catalog);
    Profile p = parse_profile(kGood);
    p.devices.at("cpu-avx2").optimizer_memory_efficiency = i == 0 ? 0.2 : 0.4;
    apply_profile(c, p);
    const auto plan = make_uniform_plan(c, w, 1, 1, 1, UniformPlanOptions{});
    ASSERT_TRUE(std::holds_alternative<Plan>(plan));
    const Report r = predict(c, w, std::get<Plan>(plan));
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    optimizer_s[i] = r.breakdown.optimizer_s;
    compute_s[i] = r.breakdown.compute_s;
  }
  EXPECT_GT(optimizer_s[0], 0.0);
  EXPECT_NEAR(optimizer_s[0] / optimizer_s[1], 2.0, 1e-9);
  EXPECT_EQ(compute_s[0], compute_s[1]);
}

TEST(ApplyProfileTest, MfuStaysOverTheDatasheetPeakWhenAProfileRaisesIt) {
  // A profile's peak is its GEMM fit's asymptote (94.8 GFLOP/s against cpu-avx2's datasheet
  // 83.07 on this machine): the GEMMs run faster, but MFU and HFU stay over the datasheet peak,
  // so MFU x time (the model FLOPs over that peak) does not change.
  const Catalog catalog = load_catalog_dir(HETSIM_SOURCE_DIR "/clusters/catalog");
  const Workload w = load_workload(HETSIM_SOURCE_DIR "/workloads/tiny-gpt.yaml");
  Report r[2];
  for (int i = 0; i < 2; ++i) {
    Cluster c = load_cluster(HETSIM_SOURCE_DIR "/clusters/local-cpu.yaml", catalog);
    Profile p = parse_profile(kGood);
    if (i == 1) p.devices.at("cpu-avx2").peak_flops[Dtype::kFp32] = 2 * c.node_types[0].gpu.peak(Dtype::kFp32);
    apply_profile(c, p);
    if (i == 1) {
      EXPECT_NEAR(c.node_types[0].gpu.utilisation_peak(Dtype::kFp32), 83.07e9, 1e3);
      apply_profile(c, p);  // twice: the datasheet's figure is kept, not the first profile's
      EXPECT_NEAR(c.node_types[0].gpu.utilisation_peak(Dtype::kFp32), 83.07e9, 1e3);
    }
    const auto plan = make_uniform_plan(c, w, 1, 1, 1, UniformPlanOptions{});
    ASSERT_TRUE(std::holds_alternative<Plan>(plan));
    r[i] = predict(c, w, std::get<Plan>(plan));
    ASSERT_TRUE(r[i].feasible) << r[i].infeasible_reason;
  }
  EXPECT_LT(r[1].breakdown.compute_s, r[0].breakdown.compute_s);
  EXPECT_NEAR(r[1].mfu * r[1].iteration_time_s, r[0].mfu * r[0].iteration_time_s, 1e-12 * r[0].iteration_time_s);
  EXPECT_NEAR(r[1].hfu * r[1].iteration_time_s, r[0].hfu * r[0].iteration_time_s, 1e-12 * r[0].iteration_time_s);
}

// A device named as a tool prints it is the catalog type of that name.
TEST(ApplyProfileTest, ADeviceSpelledAsPrintedMatchesItsCatalogType) {
  const Catalog catalog = load_catalog_dir(HETSIM_SOURCE_DIR "/clusters/catalog");
  Cluster c = load_cluster(HETSIM_SOURCE_DIR "/clusters/mixed-a100-v100.yaml", catalog);
  const Profile p = parse_profile(R"(kind: profile
name: smi
source: "test"
devices:
  "NVIDIA A100-SXM4-80GB": {efficiency: {gemm: 0.5}}
)");
  // Held under the catalog's name: outputs name the type so, and the note of the types a profile
  // leaves out compares names (it said "no figures for a100-sxm4-80gb" of this profile; s64 hunt).
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices.begin()->first, "a100-sxm4-80gb");
  EXPECT_EQ(apply_profile(c, p), 1);
  for (const NodeType& nt : c.node_types) {
    if (nt.gpu.name == "a100-sxm4-80gb") EXPECT_DOUBLE_EQ(nt.gpu.efficiency.gemm_efficiency, 0.5);
    else EXPECT_NE(nt.gpu.efficiency.gemm_efficiency, 0.5) << nt.gpu.name;
  }
}

// A profile matches a type the way the catalog does: by an alias ("NVIDIA H100 80GB HBM3" is
// h100-sxm5-80gb), and not by a spelling the type does not answer to ("AMD Instinct MI250X" is
// what rocm-smi prints for a GCD, not the module mi250x).
TEST(ApplyProfileTest, ADeviceMatchesByAliasAndNotBySpellingOfAnExactNameType) {
  const Catalog catalog = load_catalog_dir(HETSIM_SOURCE_DIR "/clusters/catalog");
  Cluster c = load_cluster(HETSIM_SOURCE_DIR "/clusters/h100-mi300x.yaml", catalog);
  c.node_types.at(1).gpu = catalog.by_name("mi250x");
  const Profile p = parse_profile(R"(kind: profile
name: smi
source: "test"
devices:
  "NVIDIA H100 80GB HBM3": {efficiency: {gemm: 0.5}}
)");
  EXPECT_EQ(apply_profile(c, p), 1);
  EXPECT_DOUBLE_EQ(c.node_types.at(0).gpu.efficiency.gemm_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(c.node_types.at(1).gpu.efficiency.gemm_efficiency, 0.50);  // the catalog's
  // The printed name of a GCD names no module: an error listing both, not a silent no-op.
  try {
    parse_profile("kind: profile\nname: smi\nsource: \"test\"\ndevices:\n  \"AMD Instinct MI250X\": {efficiency: {gemm: 0.4}}\n");
    ADD_FAILURE() << "an ambiguous device name loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("it could be any of: mi250x, mi250x-gcd"), std::string::npos) << e.what();
  }
}

// A measured hop latency under the zone fabric's cannot be met (a hop pays the fabric besides its
// NICs): the NICs get none, and the caller is told, where the figure was raised to the fabric's
// in silence (0 ns and 1000 ns predicted alike on local-cpu's 1 us fabric; s64 calibration hunt).
TEST(ApplyProfileTest, AHopLatencyUnderTheFabricsIsReported) {
  const Catalog catalog = load_catalog_dir(HETSIM_SOURCE_DIR "/clusters/catalog");
  const Cluster c = load_cluster(HETSIM_SOURCE_DIR "/clusters/local-cpu.yaml", catalog);
  const auto profile_with = [](const char* latency) {
    return parse_profile(std::string("kind: profile\nname: l\nsource: \"test\"\nlinks:\n  ethernet: {bandwidth: \"10GB/s\", latency: \"") +
                         latency + "\"}\n");
  };
  const auto under = nic_latencies_under_fabric(c, profile_with("0ns"));
  ASSERT_EQ(under.size(), 1u);  // one note for both node types of the zone
  EXPECT_NE(under[0].find("links.ethernet: latency 0 s is under the 1.00 us"), std::string::npos) << under[0];
  EXPECT_NE(under[0].find("cpu-avx2-node and cpu-scalar-node"), std::string::npos) << under[0];
  EXPECT_TRUE(nic_latencies_under_fabric(c, profile_with("3us")).empty());
  Cluster applied = c;
  apply_profile(applied, profile_with("3us"));
  for (const NodeType& nt : applied.node_types) EXPECT_NEAR(nt.nics.latency_s, 1e-6, 1e-15);  // (3 - 1) / 2 us
}

}  // namespace
}  // namespace hetsim::models
