// SPDX-License-Identifier: Apache-2.0
// The planner's steps on hand-written unit costs: the layer partition of a pipeline over
// stages of unequal speed and memory, and the micro-batch balancing over unequal replicas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "planner_partition.hpp"
#include "planner_search.hpp"
#include "planner_space.hpp"
#include "memory_cost.hpp"

namespace hetsim::models {
namespace {

namespace pl = planner;

pl::UnitCost unit(double layer_s, double capacity_bytes = 1e12, double weight_bytes = 1e9) {
  pl::UnitCost u;
  u.ok = true;
  u.layer_s = layer_s;
  u.weight_bytes = weight_bytes;
  u.capacity_bytes = capacity_bytes;
  return u;
}

// ---- layer partition ------------------------------------------------------------------------

TEST(PlannerPartition, FasterStageTakesMoreLayers) {
  const pl::UnitCost fast = unit(1.0), slow = unit(2.0);
  const auto r = pl::partition_layers({{&fast}, {&slow}}, 30, 1, 8, 1.0, false);
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.layers, (std::vector<int>{20, 10}));
  EXPECT_DOUBLE_EQ(r.bottleneck_s, 20.0);
  EXPECT_DOUBLE_EQ(r.sum_s, 40.0);
}

TEST(PlannerPartition, MinMaxIsOptimalAgainstExhaustiveSearch) {
  const pl::UnitCost a = unit(1.0), b = unit(1.7), c = unit(3.1);
  const std::vector<pl::SlotCost> slots = {{&c}, {&a}, {&b}};
  const auto r = pl::partition_layers(slots, 24, 1, 8, 1.0, false);
  ASSERT_TRUE(r.ok);
  double best = 1e30;
  for (int x = 1; x < 24; ++x) {
    for (int y = 1; x + y < 24; ++y) best = std::min(best, std::max({x * 3.1, y * 1.0, (24 - x - y) * 1.7}));
  }
  EXPECT_NEAR(r.bottleneck_s, best, 1e-12);
  EXPECT_EQ(std::accumulate(r.layers.begin(), r.layers.end(), 0), 24);
}

// Past 1,024 layer groups the water-filling places every group below a threshold at once (a
// 100,000-layer model spent 70 s of a search in the greedy; s57 bad-input hunt): still the
// min-max split. Three stages with k a_s groups each: the optimum is the smallest T for which
// the floors of T / a_s hold all the layers, found here by walking T over the stages' times.
TEST(PlannerPartition, DeepModelsKeepTheMinMaxSplit) {
  const pl::UnitCost a = unit(1.0, 1e18, 1.0), b = unit(1.7, 1e18, 1.0), c = unit(3.1, 1e18, 1.0);
  const std::vector<pl::SlotCost> slots = {{&c}, {&a}, {&b}};
  const int layers = 100003;
  const auto r = pl::partition_layers(slots, layers, 1, 8, 1.0, false);
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(std::accumulate(r.layers.begin(), r.layers.end(), 0), layers);
  const double rates[3] = {3.1, 1.0, 1.7};
  double best = 1e300;
  for (const double rate : rates)  // the optimum is some stage's k * rate
    for (long k = 1; k <= layers; ++k) {
      const double t = k * rate;
      long held = 0;
      for (const double x : rates) held += static_cast<long>(std::floor(t / x * (1 + 1e-12)));
      if (held >= layers) {
        best = std::min(best, t);
        break;
      }
    }
  EXPECT_NEAR(r.bottleneck_s, best, 1e-9 * best);
}

TEST(PlannerPartition, MemoryCapsTheFastStage) {
  // 1 GB per layer, 5.5 GB usable on the fast stage: it takes at most 5 layers.
  const pl::UnitCost fast = unit(1.0, 5.5e9), slow = unit(2.0);
  const auto r = pl::partition_layers({{&fast}, {&slow}}, 30, 1, 8, 1.0, false);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layers, (std::vector<int>{5, 25}));
  EXPECT_GT(r.min_headroom_fraction, 0.0);
}

TEST(PlannerPartition, InterleaveKeepsMultiples) {
  const pl::UnitCost fast = unit(1.0), slow = unit(1.5);
  const auto r = pl::partition_layers({{&fast}, {&slow}, {&slow}}, 24, 2, 8, 1.0, false);
  ASSERT_TRUE(r.ok);
  for (int l : r.layers) EXPECT_EQ(l % 2, 0) << l;
}

TEST(PlannerPartition, UniformIsMegatronsSplit) {
  const pl::UnitCost u = unit(1.0);
  const auto r = pl::partition_layers({{&u}, {&u}, {&u}}, 10, 1, 8, 1.0, true);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layers, (std::vector<int>{4, 3, 3}));
}

TEST(PlannerPartition, ModelThatDoesNotFitIsRejected) {
  const pl::UnitCost small = unit(1.0, 3.5e9);
  const auto r = pl::partition_layers({{&small}, {&small}}, 10, 1, 8, 1.0, false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("does not fit"), std::string::npos) << r.reason;
}

// ---- micro-batch balancing ------------------------------------------------------------------

TEST(PlannerBalance, FasterReplicaGetsMoreMicroBatches) {
  const std::vector<pl::ReplicaTiming> reps = {{1.0, 1.0}, {2.0, 2.0}};
  const auto m = pl::balance_micro_batches(reps, 30, 1, false);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0] + m[1], 30);
  EXPECT_EQ(m, (std::vector<int>{20, 10}));  // both finish at 20 s
}

TEST(PlannerBalance, EqualTimesWithPipelineFill) {
  // Replica 0: tau 1, sum 4 (fill 3): m + 3 s; replica 1: m s. 10 micro-batches: the best split
  // (3, 7) or (4, 6) ends after 7 s; an even split (5, 5) would take 8 s.
  const std::vector<pl::ReplicaTiming> reps = {{1.0, 4.0}, {1.0, 1.0}};
  const auto m = pl::balance_micro_batches(reps, 10, 1, false);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0] + m[1], 10);
  EXPECT_DOUBLE_EQ(std::max(pl::replica_time_s(reps[0], m[0], 1), pl::replica_time_s(reps[1], m[1], 1)), 7.0);
}

TEST(PlannerBalance, UniformNeedsDivisibilityAndEnoughMicroBatches) {
  const std::vector<pl::ReplicaTiming> reps = {{1.0, 1.0}, {2.0, 2.0}, {1.0, 1.0}};
  EXPECT_TRUE(pl::balance_micro_batches(reps, 10, 1, true).empty());
  EXPECT_EQ(pl::balance_micro_batches(reps, 9, 1, true), (std::vector<int>{3, 3, 3}));
  EXPECT_TRUE(pl::balance_micro_batches(reps, 2, 1, false).empty());
}

TEST(PlannerBalance, HeapRoundingPicksWhatAScanPicks) {
  // Reference: the same continuous optimum, rounded by scanning every replica for each move
  // (lowest index on ties), O(n) a move. The heaps must land on the same counts.
  const auto by_scan = [](const std::vector<pl::ReplicaTiming>& reps, int total) {
    const int n = static_cast<int>(reps.size());
    double inv = 0, off = 0;
    for (const auto& r : reps) inv += 1.0 / r.bottleneck_s, off += (r.sum_s - r.bottleneck_s) / r.bottleneck_s;
    const double target = (total + off) / inv;
    std::vector<int> m(n);
    long have = 0;
    for (int i = 0; i < n; ++i) {
      m[i] = std::max(1, static_cast<int>(std::floor((target - (reps[i].sum_s - reps[i].bottleneck_s)) / reps[i].bottleneck_s)));
      have += m[i];
    }
    while (have > total) {
      int worst = -1;
      double worst_t = -1;
      for (int i = 0; i < n; ++i) {
        const double t = pl::replica_time_s(reps[i], m[i], 1);
        if (m[i] > 1 && t > worst_t) worst = i, worst_t = t;
      }
      --m[worst], --have;
    }
    while (have < total) {
      int best = 0;
      for (int i = 1; i < n; ++i)
        if (pl::replica_time_s(reps[i], m[i] + 1, 1) < pl::replica_time_s(reps[best], m[best] + 1, 1)) best = i;
      ++m[best], ++have;
    }
    return m;
  };
  unsigned seed = 7;
  const auto next = [&seed] { return (seed = seed * 1103515245u + 12345u) >> 16 & 0x7fff; };
  int lifted = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<pl::ReplicaTiming> reps;
    const int n = 1 + static_cast<int>(next() % 40);
    for (int i = 0; i < n; ++i) {
      const double tau = 0.5 + (next() % 4) * 0.25;  // few distinct values: many ties
      reps.push_back({tau, tau * (1 + next() % 6) + (next() % 2 ? 40.0 : 0.0)});  // some long fills
    }
    const int total = n + static_cast<int>(next() % 120);
    const auto m = pl::balance_micro_batches(reps, total, 1, false);
    ASSERT_EQ(std::accumulate(m.begin(), m.end(), 0), total);
    EXPECT_EQ(m, by_scan(reps, total)) << "trial " << trial;
    lifted += std::count(m.begin(), m.end(), 1) > 0;
  }
  EXPECT_GT(lifted, 0);  // the take-one-away branch ran too
}

TEST(PlannerBalance, GroupsOfCopiesGetWhatSingleReplicasGet) {
  // The planner balances replica kinds (identical copies) as groups; expanded copy by copy the
  // counts must equal the per-replica rounding (itself checked against a scan above).
  unsigned seed = 11;
  const auto next = [&seed] { return (seed = seed * 1103515245u + 12345u) >> 16 & 0x7fff; };
  int lifted = 0, split_groups = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<pl::TimingGroup> groups;
    std::vector<pl::ReplicaTiming> singles;
    const int g = 1 + static_cast<int>(next() % 6);
    for (int k = 0; k < g; ++k) {
      const double tau = 0.5 + (next() % 4) * 0.25;  // few distinct values: ties across groups
      const pl::ReplicaTiming t{tau, tau * (1 + next() % 6) + (next() % 2 ? 40.0 : 0.0)};
      const int copies = 1 + static_cast<int>(next() % 30);
      groups.push_back({t, copies});
      singles.insert(singles.end(), copies, t);
    }
    const int n = static_cast<int>(singles.size());
    const int total = n + static_cast<int>(next() % (3 * n + 20));
    const int v = 1 + static_cast<int>(next() % 2);
    const auto grouped = pl::balance_micro_batches(groups, total, v, false);
    ASSERT_EQ(grouped.size(), groups.size());
    std::vector<int> expanded;
    for (size_t k = 0; k < groups.size(); ++k) {
      for (int c = 0; c < groups[k].copies; ++c) expanded.push_back(grouped[k].of_copy(c));
      split_groups += grouped[k].first_copies > 0;
    }
    EXPECT_EQ(expanded, pl::balance_micro_batches(singles, total, v, false)) << "trial " << trial;
    lifted += std::count(expanded.begin(), expanded.end(), 1) > 0;
  }
  EXPECT_GT(lifted, 0);
  EXPECT_GT(split_groups, 0);  // some groups ended with two counts
  const std::vector<pl::TimingGroup> two = {{{1.0, 1.0}, 2}, {{2.0, 2.0}, 1}};
  EXPECT_TRUE(pl::balance_micro_batches(two, 2, 1, false).empty());  // fewer micro-batches than replicas
  const auto even = pl::balance_micro_batches(two, 9, 1, true);
  ASSERT_EQ(even.size(), 2u);
  EXPECT_EQ(even[0].of_copy(1), 3);
  EXPECT_EQ(even[1].of_copy(0), 3);
}

TEST(PlannerBalance, StepLowerBoundHoldsForEveryBalancedStep) {
  // The planner skips a mixed pipeline before partitioning when step_lower_bound_s cannot beat
  // the N-th best: the bound must stay below the step the balanced micro-batches give, for any
  // pipeline at or above the floors (slowest stage, fill) it was given, alone or with others.
  unsigned seed = 5;
  const auto next = [&seed] { return (seed = seed * 1103515245u + 12345u) >> 16 & 0x7fff; };
  const auto step_of = [](const std::vector<pl::TimingGroup>& groups, int total, int v) {
    const auto m = pl::balance_micro_batches(groups, total, v, false);
    double t = 0;
    for (size_t k = 0; k < groups.size(); ++k) {
      for (int c = 0; c < groups[k].copies; ++c) t = std::max(t, pl::replica_time_s(groups[k].timing, m[k].of_copy(c), v));
    }
    return t;
  };
  int tight = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int v = 1 + static_cast<int>(next() % 2);
    const double tau = 0.2 + (next() % 50) * 0.05, stages = 1 + next() % 12;
    const pl::ReplicaTiming mixed{tau, tau * stages * (0.6 + (next() % 40) * 0.01) + tau};
    const int copies = 1 + static_cast<int>(next() % 8);
    std::vector<pl::TimingGroup> others;
    for (int k = static_cast<int>(next() % 3); k > 0; --k) {
      const double t = 0.1 + (next() % 60) * 0.05;
      others.push_back({{t, t * (1 + next() % 20)}, 1 + static_cast<int>(next() % 6)});
    }
    int replicas = copies;
    for (const auto& g : others) replicas += g.copies;
    const int total = replicas + static_cast<int>(next() % 200);
    const double fill = (mixed.sum_s - mixed.bottleneck_s) / v;
    // Floors at or below the pipeline's real figures (equal one time in four).
    const double tau_lb = next() % 4 == 0 ? tau : tau * (next() % 100) / 100.0;
    const double fill_lb = next() % 4 == 0 ? fill : fill * (next() % 100) / 100.0;
    const double bound = pl::step_lower_bound_s(tau_lb, fill_lb, copies, others, total, v);
    std::vector<pl::TimingGroup> all = {{mixed, copies}};
    all.insert(all.end(), others.begin(), others.end());
    const double together = step_of(all, total, v);
    const double alone = total >= copies ? step_of({{mixed, copies}}, total, v) : INFINITY;
    EXPECT_LE(bound, std::min(together, alone) * (1 + 1e-12)) << "trial " << trial;
    tight += bound > 0.9 * std::min(together, alone);
  }
  EXPECT_GT(tight, 40);  // not a bound of zero
}

// ZeRO's shares follow the training's state bytes (Rajbhandari et al. SC'20 §3.1): fp16 Adam
// 2 + 2 + 12 bytes a parameter, bf16 2 + 4 (fp32 gradients) + 12, fp32 Adam 4 + 4 + 8 (the planner
// assumed 12/16 and 14/16 for every dtype and optimizer).
TEST(PlannerSteps, ZeroShardsTheStatesTheTrainingKeeps) {
  TrainingSpec mixed;
  mixed.dtype = Dtype::kFp16;
  mixed.optimizer = Optimizer::kAdam;
  EXPECT_DOUBLE_EQ(pl::zero_sharded_fraction(1, mixed), 12.0 / 16.0);
  EXPECT_DOUBLE_EQ(pl::zero_sharded_fraction(2, mixed), 14.0 / 16.0);
  TrainingSpec bf16 = mixed;
  bf16.dtype = Dtype::kBf16;
  EXPECT_DOUBLE_EQ(pl::zero_sharded_fraction(1, bf16), 12.0 / 18.0);
  EXPECT_DOUBLE_EQ(pl::zero_sharded_fraction(2, bf16), 16.0 / 18.0);
  TrainingSpec fp32 = mixed;
  fp32.dtype = Dtype::kFp32;
  EXPECT_DOUBLE_EQ(pl::zero_sharded_fraction(1, fp32), 8.0 / 16.0);
  EXPECT_DOUBLE_EQ(pl::zero_sharded_fraction(2, fp32), 12.0 / 16.0);
  EXPECT_DOUBLE_EQ(pl::zero_sharded_fraction(3, fp32), 1.0);
  EXPECT_DOUBLE_EQ(pl::zero_weight_scale(1, 4, fp32), 0.5 + 0.5 / 4);
  EXPECT_DOUBLE_EQ(pl::zero_weight_scale(0, 4, fp32), 1.0);
}

// The planner's estimates and the predictor send one boundary figure: fp8 training keeps its
// activations in 16 bits (the planner priced its sends at 1 byte a value).
TEST(PlannerSteps, Fp8PipelineSendsCarry16BitActivations) {
  ModelSpec m;
  m.seq_len = 2048;
  m.hidden = 4096;
  EXPECT_DOUBLE_EQ(boundary_activation_bytes(m, 2, Dtype::kFp8), 2048.0 * 2 * 4096 * 2);
  EXPECT_DOUBLE_EQ(boundary_activation_bytes(m, 2, Dtype::kFp32), 2048.0 * 2 * 4096 * 4);
}

// The planner's in-flight activations are the memory model's, per chunk of 1/v of the stage.
TEST(PlannerSteps, InflightFactorIsTheMemoryModelsChunksPerInterleave) {
  for (int v : {1, 2, 4})
    for (int s = 0; s < 4; ++s)
      for (int m : {1, 3, 64})
        EXPECT_DOUBLE_EQ(pl::inflight_factor(s, 4, m, v),
                         in_flight_chunks(v > 1 ? Schedule::kInterleaved : Schedule::k1f1b, s, 4, m, v) / v);
  EXPECT_DOUBLE_EQ(pl::inflight_factor(0, 4, 64, 1), 4.0);
  EXPECT_DOUBLE_EQ(pl::inflight_factor(0, 4, 64, 2), (2.0 * 3 + 4 + 1) / 2);
}

}  // namespace
}  // namespace hetsim::models
