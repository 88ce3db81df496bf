// SPDX-License-Identifier: Apache-2.0
// The sweep runner: rows planned per point, checkpoint/resume, --refine, and the printed CSV/JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "input_loader.hpp"
#include "json_writer.hpp"
#include "model_fingerprint.hpp"
#include "sweep_run.hpp"
#include "sweep_spec.hpp"
#include "sweep_test_util.hpp"

namespace hetsim::models {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace sweep_test;

const char* kRunSpec = R"(kind: sweep
name: run
cluster: one-zone.yaml
workloads: [gpt.yaml]
axes:
  - {node_type: big, nodes: [0, 1]}
  - {node_type: small, nodes: [0, 2]}
)";

/// The two node types of two_zones() in one zone: every group can be sized down to nothing.
Cluster one_zone() {
  std::string text = kTwoZones;
  text = text.substr(0, text.find("zones:"));
  text += "zones:\n  - {name: east, fabric: {kind: fat-tree}, nodes: [{type: big, count: 1}, {type: small, count: 2}]}\n";
  return parse_cluster(text, Catalog::builtin(), "one-zone.yaml");
}

struct RunFixture : ::testing::Test {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("hetsim-sweep-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                               "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  SweepSpec spec;
  Cluster base = one_zone();
  std::vector<Workload> workloads;
  void SetUp() override {
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(kSource + "/workloads/gpt3-6.7b.yaml", dir / "gpt.yaml");
    spec = parse_sweep_spec(kRunSpec, "run.yaml", dir.string());
    write_cluster("");
    workloads.push_back(load_workload(spec.workload_paths[0]));
  }
  /// The cluster file the spec names (fingerprinted by the checkpoint keys), with `extra` appended.
  void write_cluster(const std::string& extra) {
    std::string text = kTwoZones;
    text = text.substr(0, text.find("zones:"));
    std::ofstream(spec.cluster_path) << text << "zones:\n  - {name: east, fabric: {kind: fat-tree}, nodes: "
                                     << "[{type: big, count: 1}, {type: small, count: 2}]}\n" << extra;
    base = load_cluster(spec.cluster_path, Catalog::builtin());
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  SweepResult run(const std::string& checkpoint, const std::string& profile_fingerprint = "", double time_limit_s = 0,
                  int refine = 0, TimedPredictFn refine_engine = nullptr) {
    SweepRunOptions o;
    o.planner.threads = 1;
    o.planner.time_limit_s = time_limit_s;
    o.checkpoint_path = checkpoint;
    o.profile_fingerprint = profile_fingerprint;
    o.refine = refine;
    o.refine_engine = std::move(refine_engine);
    return run_sweep(spec, base, workloads, Catalog::builtin(), o);
  }
};

/// Everything a row says but the search time (the one figure a rerun does not reproduce).
std::string without_time(const SweepRow& r) {
  SweepRow c = r;
  c.search_time_s = 0;
  c.resumed = false;
  return sweep_csv(SweepSpec{}, {c});
}

TEST_F(RunFixture, PlansEveryPointAndSaysWhyOneHasNoPlan) {
  const SweepResult r = run("");
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_FALSE(r.rows[0].found);  // no node of either type
  EXPECT_EQ(r.rows[0].gpus, 0);
  EXPECT_EQ(r.rows[0].reason, "the cluster has no GPUs at this point");
  EXPECT_TRUE(r.rows[3].found) << r.rows[3].reason;
  EXPECT_EQ(r.rows[3].gpus, 8 + 16);
  EXPECT_GT(r.rows[3].tokens_per_s, r.rows[2].tokens_per_s * 0.999);  // more GPUs never plan slower
  EXPECT_GE(r.rows[3].tokens_per_s, r.rows[3].uniform_tokens_per_s * 0.999);
  const std::string csv = sweep_csv(spec, r.rows);
  EXPECT_THAT(csv, HasSubstr("point,workload,big.nodes,small.nodes,gpus,"));
  EXPECT_THAT(csv, HasSubstr(",\"" + r.rows[3].shape + "\","));  // shapes hold commas: quoted
}

// Found by the s23 audit: a point without a plan printed tokens/s 0 and $0 per million tokens
// (first when sorting by cost), prices summed from "$14.80/h" printed 49.599999999999994 and
// node counts were JSON strings.
TEST_F(RunFixture, PrintedRowsLeaveAbsentFiguresOutAndTidyTheirDigits) {
  SweepRow none;
  none.workload = "gpt";
  none.values = {"0", "0"};
  none.reason = "the cluster has no GPUs at this point";
  SweepRow found = none;
  found.point = 3;
  found.values = {"1", "2"};
  found.found = true;
  found.reason.clear();
  found.cluster_price_per_hour = found.plan_price_per_hour = 10.0 + 14.8 + 14.8 + 10.0;
  found.tokens_per_s = 1000;
  found.cost_per_million_tokens = 13.7;
  found.uniform_tokens_per_s = 900;  // no fastest-type-only baseline, not refined
  found.uniform_cost_per_million_tokens = 15.2;
  const std::string csv = sweep_csv(spec, {none, found});
  EXPECT_THAT(csv, HasSubstr("\n0,gpt,0,0,0,0,false,,,,,,,,,,,,false,false,0,false,,,the cluster has no GPUs at this point\n"));
  // No simulated figure (not refined) and no lockstep one: empty cells, not 0.
  EXPECT_THAT(csv, HasSubstr(",49.6,true,1000,,,0,0,49.6,13.7,900,,15.2,,false,false,0,false,,false,\n"));
  JsonOut j(-1);
  write_sweep_row_json(j, spec, none);
  EXPECT_THAT(j.str(), HasSubstr("\"values\":{\"big.nodes\":0,\"small.nodes\":0}")) << j.str();
  EXPECT_THAT(j.str(), HasSubstr("\"tokens_per_s\":null")) << j.str();
  EXPECT_THAT(j.str(), HasSubstr("\"cost_per_million_tokens\":null")) << j.str();
  JsonOut k(-1);
  write_sweep_row_json(k, spec, found);
  EXPECT_THAT(k.str(), HasSubstr("\"cluster_price_per_hour\":49.6,")) << k.str();
  EXPECT_THAT(k.str(), HasSubstr("\"simulated_tokens_per_s\":null")) << k.str();
  EXPECT_THAT(k.str(), HasSubstr("\"lockstep_tokens_per_s\":null")) << k.str();
  EXPECT_THAT(k.str(), HasSubstr("\"fastest_type_only_tokens_per_s\":null")) << k.str();
}

TEST_F(RunFixture, AtSpotPricesRowsGiveTheGoodputPreemptionsLeave) {
  const SweepResult on_demand = run("");
  // Every node at a spot price, reclaimed once an hour each: the rows' tokens/s are what the
  // preemptions leave (models/preemption.hpp), below the on-demand rows' and above zero.
  std::string text = kTwoZones;
  for (const char* price : {"price: \"$30/h\"}", "price: \"$10/h\"}"}) {
    const std::string p = price;
    text.replace(text.find(p), p.size(), p.substr(0, p.size() - 1) + ", spot_price: \"$3/h\", preemption_rate: \"1/h\"}");
  }
  std::ofstream(spec.cluster_path) << text.substr(0, text.find("zones:")) << "zones:\n  - {name: east, fabric: {kind: fat-tree}, "
                                   << "nodes: [{type: big, count: 1}, {type: small, count: 2}]}\n";
  base = load_cluster(spec.cluster_path, Catalog::builtin());
  spec.spot = true;
  const SweepResult spot = run("");
  ASSERT_EQ(spot.rows.size(), on_demand.rows.size());
  const SweepRow& a = on_demand.rows[3];
  const SweepRow& b = spot.rows[3];
  ASSERT_TRUE(a.found && b.found) << a.reason << b.reason;
  EXPECT_LT(b.tokens_per_s, a.tokens_per_s);
  EXPECT_GT(b.tokens_per_s, 0.5 * a.tokens_per_s);
  EXPECT_LE(b.uniform_tokens_per_s, a.uniform_tokens_per_s);
}

// A baseline that fits but costs more than the budget was printed "none fits" and left its CSV
// cells empty without a reason (s63 sweep hunt): it is marked over the budget.
TEST_F(RunFixture, BaselinesOverTheBudgetAreMarkedSo) {
  spec.objective = PlanObjective::kBudget;
  spec.budget_per_hour = 35;  // the big node ($30/h) alone; not it with the two small ($50/h)
  const SweepResult r = run("");
  const SweepRow& all = r.rows[3];
  ASSERT_TRUE(all.found) << all.reason;
  EXPECT_LE(all.plan_price_per_hour, 35);
  EXPECT_TRUE(all.uniform_over_budget);  // over every GPU: $50/h
  EXPECT_EQ(all.uniform_tokens_per_s, 0);
  EXPECT_FALSE(all.fastest_type_only_over_budget);
  EXPECT_GT(all.fastest_type_only_tokens_per_s, 0);
  EXPECT_THAT(sweep_csv(spec, r.rows), HasSubstr("uniform_over_budget,fastest_type_only_over_budget"));
}

TEST_F(RunFixture, AKilledRunResumesFromItsCheckpoint) {
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult full = run(cp);
  EXPECT_EQ(full.resumed, 0);
  // A run killed after two rows, while writing the third: keep two lines and half of one.
  std::ifstream in(cp);
  std::string l1, l2, l3;
  std::getline(in, l1);
  std::getline(in, l2);
  std::getline(in, l3);
  in.close();
  std::ofstream(cp, std::ios::trunc) << l1 << '\n' << l2 << '\n' << l3.substr(0, l3.size() / 2);
  const SweepResult resumed = run(cp);
  EXPECT_EQ(resumed.resumed, 2);
  ASSERT_EQ(resumed.rows.size(), full.rows.size());
  for (size_t i = 0; i < full.rows.size(); ++i) {
    EXPECT_EQ(resumed.rows[i].resumed, i < 2);
    EXPECT_EQ(without_time(resumed.rows[i]), without_time(full.rows[i]));
  }
  EXPECT_EQ(run(cp).resumed, 4);  // all rows recorded now
}

TEST_F(RunFixture, RowsOfAnEditedSpecAreNotResumed) {
  const std::string cp = (dir / "cp.jsonl").string();
  run(cp);
  spec.objective = PlanObjective::kCost;
  EXPECT_EQ(run(cp).resumed, 0);
}

TEST_F(RunFixture, RowsPlannedFromOtherInputsAreNotResumed) {
  const std::string cp = (dir / "cp.jsonl").string();
  run(cp);
  EXPECT_EQ(run(cp).resumed, 4);
  EXPECT_EQ(run(cp, "another-profile").resumed, 0);  // a profile changes every figure
  write_cluster("# edited\n");                      // the cluster file's content, not its path
  EXPECT_EQ(run(cp).resumed, 0);
  std::ofstream(spec.workload_paths[0], std::ios::app) << "# edited\n";
  EXPECT_EQ(run(cp).resumed, 0);
  EXPECT_EQ(run(cp).resumed, 4);
}

TEST_F(RunFixture, ARowWhoseSearchATimeLimitStoppedIsPlannedAgain) {
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult cut = run(cp, "", 1e-9);
  long stopped = 0;
  for (const SweepRow& r : cut.rows) stopped += r.search_stopped;
  ASSERT_GT(stopped, 0);  // the rows with GPUs
  EXPECT_EQ(run(cp).resumed, 4 - stopped);
}

/// The whole of a file (a checkpoint the tests below damage).
std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(RunFixture, DamagedCheckpointRecordsArePlannedAgain) {
  const std::string cp = (dir / "cp.jsonl").string();
  run(cp);
  std::string text = file_text(cp);
  // First record: a NaN (JsonOut writes non-finite values as null); last: a negative GPU count.
  text.replace(text.find("\"mfu\":"), 6, "\"mfu\":null,\"x\":");
  const size_t last = text.rfind("\"gpus\":");
  text.replace(last, 7, "\"gpus\":-5,\"y\":");
  std::ofstream(cp, std::ios::trunc) << text;
  EXPECT_EQ(run(cp).resumed, 2);
}

// The checkpoint is read one record at a time, each kept as a row (a vector of the parsed records
// took 1.5 GB for 64,000 rows); the last record of a key decides, damaged or not.
TEST_F(RunFixture, TheLastRecordOfARowDecidesWhetherItIsResumed) {
  const std::string cp = (dir / "cp.jsonl").string();
  run(cp);
  std::string first;
  std::getline(std::ifstream(cp) >> std::ws, first);
  first.replace(first.find("\"mfu\":"), 6, "\"mfu\":null,\"x\":");
  std::ofstream(cp, std::ios::app) << first << '\n';
  EXPECT_EQ(run(cp).resumed, 3);  // the first row's last record is damaged: planned again, and appended
  EXPECT_EQ(run(cp).resumed, 4);  // its new record is the last now
}

// A text with a control character is no record the writer made (the table printed it raw: s49 hunt).
TEST_F(RunFixture, CheckpointRecordsWithControlCharactersInTheirTextsArePlannedAgain) {
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult first = run(cp);
  std::string text = file_text(cp);
  const size_t at = text.find("\"reason\":\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 10, "a\\u0001b\\nc");
  std::ofstream(cp, std::ios::trunc) << text;
  EXPECT_EQ(run(cp).resumed, static_cast<long>(first.rows.size()) - 1);
}

TEST_F(RunFixture, CheckpointRecordsOfTheWrongTypeOrThatContradictThemselvesArePlannedAgain) {
  // s25 audit: a quoted number ("gpus": "9999") and a found plan without a rate were reused.
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult first = run(cp);
  std::string text = file_text(cp);
  const size_t at = text.find("\"gpus\":");
  const size_t end = text.find(',', at);
  text.replace(at, end - at, "\"gpus\":\"9999\"");
  const size_t rate = text.rfind("\"tokens_per_s\":");
  text.replace(rate, text.find(',', rate) - rate, "\"tokens_per_s\":0");
  std::ofstream(cp, std::ios::trunc) << text;
  ASSERT_TRUE(first.rows.back().found);  // the record whose rate was zeroed claims a plan
  EXPECT_EQ(run(cp).resumed, 2);
}

TEST_F(RunFixture, CheckpointRecordsWhoseCostContradictsTheirPriceAndRateArePlannedAgain) {
  // A found row's dollars per million tokens is its price per hour over its tokens/s: a record
  // edited to another figure (finite, positive, of the right type) was resumed as it stood.
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult first = run(cp);
  ASSERT_TRUE(first.rows.back().found);
  std::string text = file_text(cp);
  const size_t at = text.rfind("\"cost_per_million_tokens\":");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, text.find(',', at) - at, "\"cost_per_million_tokens\":1e-6");
  std::ofstream(cp, std::ios::trunc) << text;
  const SweepResult again = run(cp);
  EXPECT_EQ(again.resumed, static_cast<long>(first.rows.size()) - 1);
  EXPECT_EQ(again.rows.back().cost_per_million_tokens, first.rows.back().cost_per_million_tokens);
}

// Records edited to figures that are finite, of the right type and consistent with each other,
// but not the point's: GPUs or a price the point does not have, a rate beyond every GPU of the
// point at its highest peak, a baseline whose dollars per token imply a price below any node's,
// or a search of 1e308 s (s56 bad-input hunt: `gpus: 1000000` and a 300-digit $/h were printed).
TEST_F(RunFixture, CheckpointRecordsThatCannotBeThePointsArePlannedAgain) {
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult first = run(cp);
  ASSERT_TRUE(first.rows.back().found);
  ASSERT_GT(first.rows.back().uniform_tokens_per_s, 0);
  const std::string good = file_text(cp);
  const auto edited = [&](const std::string& key, const std::string& value) {
    std::string text = good;
    const size_t at = text.rfind("\"" + key + "\":");
    EXPECT_NE(at, std::string::npos) << key;
    text.replace(at, text.find(',', at) - at, "\"" + key + "\":" + value);
    std::ofstream(cp, std::ios::trunc) << text;
    return run(cp);
  };
  const long others = static_cast<long>(first.rows.size()) - 1;
  EXPECT_EQ(edited("gpus", "4000").resumed, others);
  EXPECT_EQ(edited("cluster_price_per_hour", "1e299").resumed, others);
  EXPECT_EQ(edited("search_time_s", "1e308").resumed, others);
  EXPECT_EQ(edited("uniform_tokens_per_s", "1e-300").resumed, others);  // its cost implies $4e-303/h
  EXPECT_EQ(edited("fastest_type_only_tokens_per_s", "1e30").resumed, others);
  const SweepResult again = edited("search_time_s", std::to_string(first.rows.back().search_time_s));
  EXPECT_EQ(again.resumed, others + 1);  // an untouched record still resumes
  // s59 bad-input hunt: a found plan's MFU of 0 or far above what its rate gives on the point's
  // GPUs, a lockstep figure above its rate, a simulated figure in a run without --refine.
  const SweepRow& last = first.rows.back();
  EXPECT_EQ(edited("mfu", "0").resumed, others);
  EXPECT_EQ(edited("mfu", std::to_string(std::min(1.0, 2.5 * last.mfu))).resumed, others);
  EXPECT_EQ(edited("lockstep_tokens_per_s", std::to_string(1.5 * last.tokens_per_s)).resumed, others);
  EXPECT_EQ(edited("simulated_tokens_per_s", "5").resumed, others);
  EXPECT_EQ(edited("mfu", std::to_string(last.mfu)).resumed, others + 1);  // as written: resumed
}

TEST_F(RunFixture, RefineReportsTheBestOfTheFirstKByTheSecondEngine) {
  // A stand-in for the simulator that ranks plans the opposite way to the analytic model: the
  // refined row must report the analytically slowest of the planner's first three, with the
  // stand-in's figure, and refined and analytic rows must not resume one another.
  int calls = 0;
  const TimedPredictFn reversed = [&calls](const Cluster& c, const Workload& w, const Plan& p, double) {
    ++calls;
    Report r = predict(c, w, p);
    r.tokens_per_s = 1e6 / r.tokens_per_s;  // small enough to stay a rate the point's GPUs could give
    return r;
  };
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult analytic = run(cp);
  const SweepResult refined = run(cp, "", 0, 3, reversed);
  EXPECT_EQ(refined.resumed, 0);
  ASSERT_TRUE(refined.rows[3].found) << refined.rows[3].reason;
  EXPECT_EQ(analytic.rows[3].simulated_tokens_per_s, 0);
  EXPECT_LT(refined.rows[3].tokens_per_s, analytic.rows[3].tokens_per_s);
  EXPECT_NE(refined.rows[3].shape, analytic.rows[3].shape);
  EXPECT_DOUBLE_EQ(refined.rows[3].simulated_tokens_per_s, 1e6 / refined.rows[3].tokens_per_s);
  EXPECT_LE(calls, 3 * 3);  // at most K plans for each of the three rows with GPUs
  EXPECT_GE(calls, 3);
  calls = 0;
  const SweepResult again = run(cp, "", 0, 3, reversed);
  EXPECT_EQ(again.resumed, 4);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(without_time(again.rows[3]), without_time(refined.rows[3]));
  EXPECT_EQ(run(cp).resumed, 4);  // the analytic rows are still there too
}

// A row whose refinement --time-limit cut short (its simulation stopped at the limit) depends on
// the machine's speed: it counts as stopped and is planned again when the sweep is resumed, as a
// row whose search the limit stopped.
TEST_F(RunFixture, ARefinementCutShortByTheTimeLimitIsPlannedAgain) {
  int calls = 0;
  const TimedPredictFn out_of_time = [&calls](const Cluster&, const Workload&, const Plan&, double limit_s) {
    ++calls;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(limit_s, 1.0)));
    Report r;
    r.feasible = false;
    r.infeasible_reason = "simulation failed: stopped at the time limit";
    return r;
  };
  const std::string cp = (dir / "cp.jsonl").string();
  const SweepResult analytic = run((dir / "analytic.jsonl").string(), "", 0.3);
  const SweepResult cut = run(cp, "", 0.3, 2, out_of_time);
  ASSERT_TRUE(cut.rows[3].found) << cut.rows[3].reason;
  EXPECT_FALSE(analytic.rows[3].search_stopped);  // the search itself finishes within 0.3 s here
  EXPECT_TRUE(cut.rows[3].search_stopped);
  EXPECT_NE(cut.rows[3].reason.find("stopped at the time limit"), std::string::npos) << cut.rows[3].reason;
  calls = 0;
  const SweepResult again = run(cp, "", 0.3, 2, out_of_time);
  EXPECT_EQ(again.resumed, 1);  // only the row without GPUs, which no refinement touched
  EXPECT_EQ(calls, 3);          // the first plan of each of the three rows with GPUs, again
}

TEST(SweepRowKey, HoldsTheCatalogsContentAndEachLinkAxisUnambiguously) {
  // An edited GPU catalog ($HETSIM_CATALOG_DIR) changes every figure: its rows are not reused.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hetsim-catalog-fp-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "gpus.yaml") << "kind: gpu-catalog\n";
  const std::string before = catalog_fingerprint(dir.string());
  std::ofstream(dir / "notes.txt") << "not a catalog file\n";  // load_catalog_dir reads *.yaml only
  EXPECT_EQ(catalog_fingerprint(dir.string()), before);
  std::ofstream(dir / "gpus.yaml", std::ios::app) << "# gemm 0.30\n";
  EXPECT_NE(catalog_fingerprint(dir.string()), before);
  std::filesystem::remove_all(dir);
  SweepSpec spec;
  EXPECT_NE(sweep_row_key(spec, "c", "w", "", {}, 0, before), sweep_row_key(spec, "c", "w", "", {}, 0, "other"));
  // Another build of the cost model (cost_model_fingerprint(): 64 hex digits) plans them again.
  const std::string model = cost_model_fingerprint();
  EXPECT_EQ(model.size(), 64u);
  EXPECT_EQ(model.find_first_not_of("0123456789abcdef"), std::string::npos) << model;
  EXPECT_NE(sweep_row_key(spec, "c", "w", "", {}, 0, before, model), sweep_row_key(spec, "c", "w", "", {}, 0, before, "other"));
  // Links [x-y, z] and [x, y-z] share the column "x-y-z.link_bandwidth", not the key.
  SweepAxis a, b;
  a.kind = b.kind = SweepAxisKind::kLinkBandwidth;
  a.link_a = "x-y";
  a.link_b = "z";
  b.link_a = "x";
  b.link_b = "y-z";
  EXPECT_EQ(a.column(), b.column());
  SweepSpec sa, sb;
  sa.axes = {a};
  sb.axes = {b};
  EXPECT_NE(sweep_row_key(sa, "c", "w", "", {"10GB/s"}), sweep_row_key(sb, "c", "w", "", {"10GB/s"}));
}

}  // namespace
}  // namespace hetsim::models
