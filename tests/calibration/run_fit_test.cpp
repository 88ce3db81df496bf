// SPDX-License-Identifier: Apache-2.0
// Fitting a profile to measured runs (calibration/run_fit.hpp): on "measurements" that the model
// itself produced with known efficiency figures, the fit must find those figures again, and the
// profile it writes must reproduce the measurements through the loader and apply_profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "calibrate.hpp"
#include "predictor.hpp"
#include "profile.hpp"
#include "run_fit.hpp"
#include "topology.hpp"
#include "validation_suite.hpp"

namespace hetsim::calibration {
namespace {

using models::Catalog;

/// Appends rows (flow maps without their closing brace) with their measured times; 1 s for rows
/// beyond `measured` (a suite whose times are about to be predicted).
template <std::size_t N>
void append_rows(std::ostringstream& o, const char* const (&rows)[N], const std::vector<double>& measured) {
  o.precision(9);  // the measurements as they were predicted, to a billionth
  for (std::size_t i = 0; i < N; ++i) o << "  - " << rows[i] << ", measured: " << (i < measured.size() ? measured[i] : 1.0) << "}\n";
}

/// A heterogeneous v2 suite: two A100 nodes and one V100 node, rows that load them differently.
std::string suite_text(const std::vector<double>& measured,
                       const std::string& training = "{dtype: fp16, recompute: none, schedule: 1f1b}",
                       int seq_len = 2048) {
  std::ostringstream o;
  o << R"(format: 2
suite: synthetic
source: "test data: times predicted with known efficiency figures"
metric: iteration_time_s
system:
  nodes:
    - {gpu: a100-sxm4-80gb, count: 2, gpus_per_node: 8, intra_node_bandwidth: "300GB/s", nic_bandwidth: "100GB/s"}
    - {gpu: v100-sxm2-32gb, count: 1, gpus_per_node: 8, intra_node_bandwidth: "150GB/s", nic_bandwidth: "50GB/s"}
defaults:
  model: {layers: 24, hidden: 2048, heads: 16, seq_len: )" << seq_len << R"(, vocab: 51200}
  training: )" << training << R"(
rows:
)";
  const char* rows[] = {
      "{id: a100-tp8, batch: {global: 64, micro: 2}, plan: {stages: [{layers: 24, replicas: [{gpus: [0,1,2,3,4,5,6,7]}]}]}",
      "{id: a100-dp2, batch: {global: 64, micro: 4}, plan: {stages: [{layers: 24, replicas: [{gpus: [0,1]}, {gpus: [8,9]}]}]}",
      "{id: v100-tp4, batch: {global: 32, micro: 1}, plan: {stages: [{layers: 24, replicas: [{gpus: [16,17,18,19]}]}]}",
      "{id: mixed-pp2, batch: {global: 64, micro: 1}, plan: {stages: [{layers: 16, replicas: [{gpus: [0,1]}]}, "
      "{layers: 8, replicas: [{gpus: [16,17]}]}]}",
      "{id: a100-small, batch: {global: 16, micro: 1}, model: {hidden: 1024, heads: 8}, plan: {stages: [{layers: 24, "
      "replicas: [{gpus: [2]}]}]}",
  };
  append_rows(o, rows, measured);
  return o.str();
}

/// The suite's predictions with `profile` applied: the "measurements" of a run whose framework
/// reaches the profile's figures.
std::vector<double> predicted_with(const models::Profile& profile, const std::string& text = suite_text({})) {
  const models::Suite s = models::parse_suite(text, Catalog::builtin(), "synthetic.yaml");
  std::vector<double> out;
  for (const models::SuiteRow& row : s.rows) {
    const models::RowResult r = models::validate_row(
        s, row, Catalog::builtin(), models::with_profile(std::make_shared<const models::Profile>(profile), models::predict));
    EXPECT_EQ(r.status, "ok") << row.id << ": " << r.reason;
    out.push_back(r.predicted.value_or(1.0));
  }
  return out;
}

TEST(RunFit, RecoversTheGemmEfficienciesThatProducedTheMeasurements) {
  models::Profile truth;
  truth.devices["a100-sxm4-80gb"].gemm_efficiency = 0.60;  // catalog 0.77
  truth.devices["v100-sxm2-32gb"].gemm_efficiency = 0.45;
  const std::vector<double> measured = predicted_with(truth);
  const models::Suite s = models::parse_suite(suite_text(measured), Catalog::builtin(), "synthetic.yaml");

  const RunFitResult r = fit_to_runs({s}, Catalog::builtin(), RunFitOptions{});
  ASSERT_EQ(r.figures.size(), 2u);
  for (const FittedFigure& f : r.figures) {
    const double want = f.device_type == "a100-sxm4-80gb" ? 0.60 : 0.45;
    EXPECT_NEAR(f.fitted_value, want, 0.01) << f.device_type;
    EXPECT_EQ(f.param, RunFitParam::kGemm);
  }
  EXPECT_GT(r.objective_before, 0.05);  // the catalog's figures are off by 20-40%
  EXPECT_LT(r.objective_after, 0.005);
  ASSERT_EQ(r.suites.size(), 1u);
  EXPECT_EQ(r.suites[0].rows_used, 5);
  EXPECT_LT(r.suites[0].mape_after, 0.005);
  EXPECT_GT(r.suites[0].mape_before, 0.05);

  // Written and read back, the profile reproduces the measurements.
  const models::Profile back = models::parse_profile(profile_to_yaml(r.profile, {"test"}), "fit.yaml");
  const std::vector<double> again = predicted_with(back);
  for (std::size_t i = 0; i < measured.size(); ++i) EXPECT_NEAR(again[i] / measured[i], 1.0, 0.01) << i;
}

TEST(RunFit, FitsHostTimeWhereSmallKernelsAreHostBound) {
  models::Profile truth;
  truth.devices["a100-sxm4-80gb"].framework_op_host_s = 120e-6;  // catalog 49 us
  const std::vector<double> measured = predicted_with(truth);
  const models::Suite s = models::parse_suite(suite_text(measured), Catalog::builtin(), "synthetic.yaml");
  RunFitOptions o;
  o.params = {RunFitParam::kHost};
  const RunFitResult r = fit_to_runs({s}, Catalog::builtin(), o);
  bool seen = false;
  for (const FittedFigure& f : r.figures) {
    if (f.device_type != "a100-sxm4-80gb") continue;
    seen = true;
    EXPECT_NEAR(f.fitted_value, 120e-6, 5e-6);
    EXPECT_NEAR(f.catalog_value, 49e-6, 1e-9);
  }
  EXPECT_TRUE(seen);
  EXPECT_LT(r.objective_after, r.objective_before);
}

TEST(RunFit, FitsTheFlashAttentionScaleOnLongSequences) {
  // FlashAttention at 8k tokens, full recompute: the attention core is a large part of every row,
  // and a faster fused attention (scale 1.5) is what the rows show.
  const std::string training = "{dtype: fp16, recompute: full, schedule: 1f1b, flash_attention: true}";
  models::Profile truth;
  truth.devices["a100-sxm4-80gb"].flash_scale = 1.5;
  truth.devices["v100-sxm2-32gb"].flash_scale = 1.5;
  const std::vector<double> measured = predicted_with(truth, suite_text({}, training, 8192));
  const models::Suite s = models::parse_suite(suite_text(measured, training, 8192), Catalog::builtin(), "f.yaml");
  RunFitOptions o;
  o.params = {RunFitParam::kFlash};
  const RunFitResult r = fit_to_runs({s}, Catalog::builtin(), o);
  ASSERT_EQ(r.figures.size(), 2u);
  for (const FittedFigure& f : r.figures) {
    EXPECT_NEAR(f.fitted_value, 1.5, 0.03) << f.device_type;
    EXPECT_DOUBLE_EQ(f.catalog_value, 1.0) << f.device_type;
  }
  EXPECT_LT(r.objective_after, 0.005);
  const models::Profile back = models::parse_profile(profile_to_yaml(r.profile, {}), "f.yaml");
  EXPECT_NEAR(*back.devices.at("a100-sxm4-80gb").flash_scale, 1.5, 0.03);
}

/// A homogeneous suite whose rows cross nodes (DP and PP over InfiniBand) and vary how much.
std::string multi_node_suite(const std::vector<double>& measured) {
  std::ostringstream o;
  o << R"(suite: links
source: "test data: times predicted with known link figures"
metric: iteration_time_s
system: {gpu: a100-sxm4-80gb, gpus_per_node: 8, intra_node_bandwidth: "300GB/s", inter_node_bandwidth: "25GB/s", inter_node_latency: "5us"}
defaults:
  model: {layers: 24, hidden: 4096, heads: 32, seq_len: 2048, vocab: 51200}
  training: {dtype: fp16, recompute: full, schedule: 1f1b}
rows:
)";
  const char* rows[] = {"{id: dp4, parallel: {tp: 8, pp: 1, dp: 4}, batch: {global: 32, micro: 1}",
                        "{id: dp32, parallel: {tp: 1, pp: 1, dp: 32, zero: 1}, batch: {global: 64, micro: 2}",
                        "{id: pp4, parallel: {tp: 8, pp: 4, dp: 1}, batch: {global: 64, micro: 1}",
                        "{id: tp8-only, parallel: {tp: 8, pp: 1, dp: 1}, batch: {global: 8, micro: 1}"};
  append_rows(o, rows, measured);
  return o.str();
}

TEST(RunFit, FitsTheAchievedBandwidthOfEachLinkClass) {
  // On its own predictions the fit keeps every link class where it is: the achieved figures it
  // reads off the clusters are the inverse of apply_profile's conversion.
  const std::vector<double> catalog_times = predicted_with({}, multi_node_suite({}));
  RunFitOptions o;
  o.params = {RunFitParam::kLinks};
  const RunFitResult same =
      fit_to_runs({models::parse_suite(multi_node_suite(catalog_times), Catalog::builtin(), "l.yaml")},
                  Catalog::builtin(), o);
  EXPECT_LT(same.objective_before, 1e-6);
  double ib_Bps = 0;
  for (const FittedFigure& f : same.figures) {
    EXPECT_NEAR(f.fitted_value / f.catalog_value, 1.0, 0.02) << f.device_type;
    if (f.device_type == "infiniband") ib_Bps = f.catalog_value;
  }
  ASSERT_GT(ib_Bps, 0);

  // InfiniBand at half its achieved figure (same latency): the fit finds the half again.
  const models::Suite probe = models::parse_suite(multi_node_suite({}), Catalog::builtin(), "l.yaml");
  const models::Cluster c = models::suite_cluster(probe.rows[0].system, 32, Catalog::builtin());
  models::Profile truth;
  truth.links["infiniband"] = {0.5 * ib_Bps,
                               2 * c.node_types[0].nics.latency_s + c.zones[c.nodes[0].zone].fabric.latency_s};
  const std::vector<double> measured = predicted_with(truth, multi_node_suite({}));
  const RunFitResult r =
      fit_to_runs({models::parse_suite(multi_node_suite(measured), Catalog::builtin(), "l.yaml")}, Catalog::builtin(), o);
  EXPECT_GT(r.objective_before, 0.02);
  EXPECT_LT(r.objective_after, 0.003);
  for (const FittedFigure& f : r.figures) {
    if (f.device_type == "infiniband") {
      EXPECT_NEAR(f.fitted_value / ib_Bps, 0.5, 0.03);
    }
  }
  EXPECT_TRUE(r.links_not_fitted.empty());
}

TEST(RunFit, NoLinkIsFittedAboveItsLineRate) {
  // Rows that ask for InfiniBand at 1.5x its achieved figure (more than the 25 GB/s line rate):
  // the fit stops at the line rate and says the figure is at its bound. It had searched up to 2x
  // and put SC'21's 25 GB/s ports at 29.7 GB/s (s68 hunt).
  const models::Suite probe = models::parse_suite(multi_node_suite({}), Catalog::builtin(), "l.yaml");
  const models::Cluster c = models::suite_cluster(probe.rows[0].system, 32, Catalog::builtin());
  const double line_Bps = c.node_types[0].nics.bandwidth_Bps * c.node_types[0].nics.count / c.node_types[0].gpus_per_node;
  const double achieved_Bps = models::achieved_bandwidth_Bps(c.node_types[0].nics) * c.node_types[0].nics.count /
                              c.node_types[0].gpus_per_node;
  ASSERT_LT(achieved_Bps, line_Bps);
  models::Profile truth;
  truth.links["infiniband"] = {1.5 * achieved_Bps,
                               2 * c.node_types[0].nics.latency_s + c.zones[c.nodes[0].zone].fabric.latency_s};
  RunFitOptions o;
  o.params = {RunFitParam::kLinks};
  const RunFitResult r = fit_to_runs(
      {models::parse_suite(multi_node_suite(predicted_with(truth, multi_node_suite({}))), Catalog::builtin(), "l.yaml")},
      Catalog::builtin(), o);
  bool seen = false;
  for (const FittedFigure& f : r.figures) {
    if (f.device_type != "infiniband") continue;
    seen = true;
    EXPECT_LE(f.fitted_value, line_Bps * (1 + 1e-9));
    EXPECT_NEAR(f.fitted_value / line_Bps, 1.0, 0.01);
    EXPECT_TRUE(f.at_bound);
  }
  EXPECT_TRUE(seen);
}

TEST(RunFit, LinkClassesWithDifferentFiguresAreNotFitted) {
  // The heterogeneous suite's A100 and V100 nodes have NICs of 100 and 50 GB/s (RDMA class:
  // 12.5 and 6.25 GB/s per GPU): one profile figure cannot stand for both.
  const models::Suite s = models::parse_suite(suite_text(predicted_with({})), Catalog::builtin(), "s.yaml");
  RunFitOptions o;
  o.params = {RunFitParam::kLinks};
  const RunFitResult r = fit_to_runs({s}, Catalog::builtin(), o);
  ASSERT_EQ(r.links_not_fitted.size(), 2u);  // the NICs, and the intra fabrics (300 vs 150 GB/s)
  EXPECT_EQ(r.links_not_fitted[0].rfind("infiniband: ", 0), 0u) << r.links_not_fitted[0];  // RDMA-class NICs
  EXPECT_EQ(r.links_not_fitted[1].rfind("nvlink: ", 0), 0u) << r.links_not_fitted[1];
  EXPECT_TRUE(r.figures.empty());
  EXPECT_TRUE(r.profile.links.empty());
}

/// Version-2 shapes the link figures must survive: socket-class NICs without GPUDirect shared
/// by 4 GPUs (12 GB/s a node) and owned by one (3 GB/s): the same 3 GB/s per device; two groups
/// of the same GPU, one-GPU nodes, and a T4 node no row uses.
std::string v2_shapes_suite(const std::vector<double>& measured) {
  std::ostringstream o;
  o << R"(format: 2
suite: shapes
source: "test data"
metric: iteration_time_s
system:
  nodes:
    - {gpu: a100-sxm4-80gb, count: 2, gpus_per_node: 4, intra_node_bandwidth: "15.75GB/s", nic_bandwidth: "12GB/s"}
    - {gpu: a100-sxm4-80gb, count: 2, gpus_per_node: 1, intra_node_bandwidth: "15.75GB/s", nic_bandwidth: "3GB/s"}
    - {gpu: t4, count: 1, gpus_per_node: 4, intra_node_bandwidth: "15.75GB/s", nic_bandwidth: "6.25GB/s"}
defaults:
  model: {layers: 8, hidden: 2048, heads: 16, seq_len: 1024, vocab: 51200}
  training: {dtype: fp16, recompute: none, schedule: 1f1b}
rows:
)";
  const char* rows[] = {
      "{id: dp-across-4gpu-nodes, batch: {global: 16, micro: 2}, plan: {stages: [{layers: 8, replicas: [{gpus: [0,1]}, {gpus: [4,5]}]}]}",
      "{id: dp-across-1gpu-nodes, batch: {global: 16, micro: 2}, plan: {stages: [{layers: 8, replicas: [{gpus: [8]}, {gpus: [9]}]}]}",
      "{id: pp-over-both-groups, batch: {global: 16, micro: 1}, plan: {stages: [{layers: 4, replicas: [{gpus: [2,3]}]}, "
      "{layers: 4, replicas: [{gpus: [8]}]}]}",
  };
  append_rows(o, rows, measured);
  return o.str();
}

TEST(RunFit, LinkFiguresOfVersion2ShapesRoundTripAtScaleOne) {
  // On the model's own predictions nothing moves: the starting profile (every figure as the
  // catalog model sees it, host-link caps included) predicts what the catalog does.
  const std::vector<double> catalog_times = predicted_with({}, v2_shapes_suite({}));
  RunFitOptions o;
  o.params = {RunFitParam::kGemm, RunFitParam::kLinks};
  const RunFitResult r =
      fit_to_runs({models::parse_suite(v2_shapes_suite(catalog_times), Catalog::builtin(), "v2.yaml")},
                  Catalog::builtin(), o);
  EXPECT_LT(r.objective_before, 1e-5);
  EXPECT_LT(r.objective_after, 1e-5);
  bool saw_ethernet = false;
  for (const FittedFigure& f : r.figures) {
    EXPECT_FALSE(f.changed) << f.device_type << " " << to_string(f.param);
    EXPECT_NE(f.device_type, "t4");  // no row runs on the T4 node
    if (f.device_type == "a100-sxm4-80gb") {
      EXPECT_EQ(f.rows, 3);  // each row once, two groups or not
    }
    saw_ethernet = saw_ethernet || f.device_type == "ethernet";
  }
  EXPECT_TRUE(saw_ethernet);  // both groups' NICs reach the same figure per device
  EXPECT_TRUE(r.links_not_fitted.empty());
  EXPECT_TRUE(r.profile.devices.empty());  // nothing changed: the profile leaves all to the catalog
  EXPECT_TRUE(r.profile.links.empty());
}

TEST(RunFit, AFigureStoppedAtItsRangeIsFlagged) {
  // Measurements 30x the catalog's predictions: no GEMM efficiency >= 0.05 explains them.
  std::vector<double> slow = predicted_with({});
  for (double& t : slow) t *= 30;
  const RunFitResult r =
      fit_to_runs({models::parse_suite(suite_text(slow), Catalog::builtin(), "slow.yaml")}, Catalog::builtin(), {});
  ASSERT_FALSE(r.figures.empty());
  for (const FittedFigure& f : r.figures) {
    EXPECT_TRUE(f.changed) << f.device_type;
    EXPECT_TRUE(f.at_bound) << f.device_type << " fitted " << f.fitted_value;
    EXPECT_NEAR(f.fitted_value, 0.05, 1e-3) << f.device_type;
  }
}

TEST(RunFit, TheProfileKeepsAnySuiteNameIntact) {
  // The profile's source names the suites, whatever their names hold: quotes, backslashes, a
  // line break. Written and read back, it is the same text.
  models::Profile p;
  p.name = "fit";
  p.source = "fitted to 3 rows of my \"suite\" \\ v2\nsecond line";
  p.devices["a100-sxm4-80gb"].gemm_efficiency = 0.7;
  const models::Profile back = models::parse_profile(profile_to_yaml(p, {"header"}), "q.yaml");
  EXPECT_EQ(back.source, p.source);
  EXPECT_DOUBLE_EQ(*back.devices.at("a100-sxm4-80gb").gemm_efficiency, 0.7);
}

TEST(RunFit, NamesOfTheFiguresRoundTrip) {
  for (RunFitParam p : {RunFitParam::kGemm, RunFitParam::kMemory, RunFitParam::kHost, RunFitParam::kFlash,
                        RunFitParam::kLinks})
    EXPECT_EQ(parse_run_fit_param(to_string(p)), p);
  EXPECT_FALSE(parse_run_fit_param("speed"));
}

TEST(RunFit, NoPredictableRowIsAnError) {
  // One row that does not fit in memory: nothing to fit.
  const models::Suite s = models::parse_suite(R"(suite: none
source: "test"
metric: iteration_time_s
system: {gpu: t4, gpus_per_node: 1, intra_node_bandwidth: "16GB/s", inter_node_bandwidth: "1GB/s"}
defaults:
  model: {vocab: 51200, seq_len: 2048}
  training: {dtype: fp16, recompute: none, schedule: 1f1b}
rows:
  - {id: huge, model: {layers: 96, hidden: 12288, heads: 96}, parallel: {tp: 1, pp: 1, dp: 1}, batch: {global: 1, micro: 1}, measured: 1}
)",
                                                      Catalog::builtin(), "none.yaml");
  EXPECT_THROW(fit_to_runs({s}, Catalog::builtin(), RunFitOptions{}), std::runtime_error);
}

// A measured row that the memory model puts a little over capacity is predicted by validate (the
// run fit) and must be fitted the same way, not counted as unpredictable in the objective.
TEST(RunFit, FitsARowTheMemoryModelPutsSlightlyOverCapacity) {
  const std::string text = R"(suite: over
source: "test"
metric: iteration_time_s
system: {gpu: a100-sxm4-80gb, gpus_per_node: 8, intra_node_bandwidth: "300GB/s", inter_node_bandwidth: "25GB/s"}
defaults:
  model: {seq_len: 1024, vocab: 51200}
  training: {dtype: fp16, recompute: full, schedule: 1f1b}
rows:
  - {id: big, model: {layers: 26, hidden: 4096, heads: 32}, parallel: {tp: 1, pp: 1, dp: 1}, batch: {global: 8, micro: 1}, measured: 2.6}
)";
  const models::Suite s = models::parse_suite(text, Catalog::builtin(), "over.yaml");
  const models::RowResult row = models::validate_row(s, s.rows[0], Catalog::builtin(), models::predict);
  ASSERT_EQ(row.status, "ok");
  ASSERT_TRUE(row.memory_unchecked);  // 84 GiB of 80 in the memory model
  const RunFitResult r = fit_to_runs({s}, Catalog::builtin(), RunFitOptions{});
  ASSERT_EQ(r.suites.size(), 1u);
  EXPECT_EQ(r.suites[0].rows_used, 1);
  EXPECT_EQ(r.suites[0].rows_skipped, 0);
  EXPECT_LT(r.objective_after, 0.01);  // one GEMM figure reproduces one time
  EXPECT_LT(r.suites[0].mape_after, 0.01);
}

/// A fit "killed" after `steps` figure searches: the step it checkpointed last.
RunFitProgress step_after(const models::Suite& s, RunFitOptions o, int steps) {
  struct Killed {};
  std::vector<RunFitProgress> seen;
  o.on_progress = [&](const RunFitProgress& p) {
    seen.push_back(p);
    if (static_cast<int>(seen.size()) == steps) throw Killed{};
  };
  EXPECT_THROW(fit_to_runs({s}, Catalog::builtin(), o), Killed);
  EXPECT_EQ(static_cast<int>(seen.size()), steps);
  return seen.back();
}

TEST(RunFit, AResumedFitEndsWhereAnUninterruptedOneDoes) {
  models::Profile truth;
  truth.devices["a100-sxm4-80gb"].gemm_efficiency = 0.60;
  truth.devices["v100-sxm2-32gb"].framework_op_host_s = 90e-6;
  const models::Suite s = models::parse_suite(suite_text(predicted_with(truth)), Catalog::builtin(), "synthetic.yaml");
  RunFitOptions o;
  o.params = {RunFitParam::kGemm, RunFitParam::kHost};  // 4 variables
  const RunFitResult whole = fit_to_runs({s}, Catalog::builtin(), o);
  ASSERT_GE(whole.searches, 5);  // more than one pass: a resume inside the second one is tested
  EXPECT_EQ(whole.searches_resumed, 0);

  for (int killed_after : {1, 4, 5, whole.searches}) {
    RunFitOptions again = o;
    again.resume = step_after(s, o, killed_after);
    std::vector<RunFitProgress> steps;
    again.on_progress = [&](const RunFitProgress& p) { steps.push_back(p); };
    const RunFitResult r = fit_to_runs({s}, Catalog::builtin(), again);
    EXPECT_EQ(r.searches_resumed, killed_after);
    EXPECT_EQ(r.searches, whole.searches);
    EXPECT_EQ(static_cast<int>(steps.size()), whole.searches - killed_after);  // nothing searched twice
    ASSERT_EQ(r.figures.size(), whole.figures.size());
    for (std::size_t i = 0; i < r.figures.size(); ++i)
      EXPECT_EQ(r.figures[i].fitted_value, whole.figures[i].fitted_value) << killed_after << " " << i;
    EXPECT_EQ(r.objective_after, whole.objective_after);
    EXPECT_EQ(profile_to_yaml(r.profile, {}), profile_to_yaml(whole.profile, {}));
  }
}

TEST(RunFit, AStepOfAnotherFitIsNotResumed) {
  const models::Suite s = models::parse_suite(suite_text(predicted_with({})), Catalog::builtin(), "synthetic.yaml");
  RunFitOptions o;
  o.params = {RunFitParam::kGemm, RunFitParam::kHost};
  const RunFitProgress step = step_after(s, o, 2);
  const RunFitResult whole = fit_to_runs({s}, Catalog::builtin(), o);

  RunFitOptions other = o;  // the same suite, other figures: other variables
  other.params = {RunFitParam::kGemm};
  other.resume = step;
  EXPECT_EQ(fit_to_runs({s}, Catalog::builtin(), other).searches_resumed, 0);

  RunFitProgress damaged = step;  // a value outside its variable's search range
  damaged.values[0] = -1;
  RunFitOptions again = o;
  again.resume = damaged;
  EXPECT_EQ(fit_to_runs({s}, Catalog::builtin(), again).searches_resumed, 0);
  damaged = step;
  damaged.pass = o.sweeps;  // past the fit's passes
  again.resume = damaged;
  const RunFitResult r = fit_to_runs({s}, Catalog::builtin(), again);
  EXPECT_EQ(r.searches_resumed, 0);
  EXPECT_EQ(r.searches, whole.searches);
}

// A step whose figures were edited within their ranges (or whose objective was: -5) was resumed
// with them, and the profile written held figures no fit gives (s56 bad-input hunt). The
// search is deterministic, so the step's figures must give the objective it records.
TEST(RunFit, AStepWhoseFiguresDoNotGiveItsObjectiveIsNotResumed) {
  models::Profile truth;
  truth.devices["a100-sxm4-80gb"].gemm_efficiency = 0.60;
  const models::Suite s = models::parse_suite(suite_text(predicted_with(truth)), Catalog::builtin(), "synthetic.yaml");
  RunFitOptions o;
  o.params = {RunFitParam::kGemm, RunFitParam::kHost};
  const RunFitProgress step = step_after(s, o, 2);
  const RunFitResult whole = fit_to_runs({s}, Catalog::builtin(), o);
  RunFitOptions again = o;
  again.resume = step;
  EXPECT_EQ(fit_to_runs({s}, Catalog::builtin(), again).searches_resumed, 2);  // untouched: resumed
  RunFitProgress edited = step;
  edited.values[0] = 0.5 * (edited.values[0] + 0.1);  // still inside its search range
  again.resume = edited;
  RunFitResult r = fit_to_runs({s}, Catalog::builtin(), again);
  EXPECT_EQ(r.searches_resumed, 0);
  EXPECT_THAT(r.resume_refused, ::testing::HasSubstr("its last step's figures give the objective "));
  EXPECT_EQ(profile_to_yaml(r.profile, {}), profile_to_yaml(whole.profile, {}));  // searched afresh
  edited = step;
  edited.objective = -5;
  again.resume = edited;
  r = fit_to_runs({s}, Catalog::builtin(), again);
  EXPECT_EQ(r.searches_resumed, 0);
  EXPECT_THAT(r.resume_refused, ::testing::HasSubstr("not the -5 it records"));
}

}  // namespace
}  // namespace hetsim::calibration
