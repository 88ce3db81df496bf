// SPDX-License-Identifier: Apache-2.0
// Random layouts of the tiny model (replicas of different depths, layer splits, TP degrees and
// micro-batch counts; ZeRO 0-3; GPipe or 1F1B; sequence parallelism) must train like one device:
// the same losses, and every replica's parameters after two steps equal the single device's.
// The generator is seeded, so a failing layout prints and reproduces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>

#include "exec_test_support.hpp"
#include "runner/run.hpp"

namespace hetsim::exec {
namespace {

struct Layout {
  models::Plan plan;
  int gpus = 0;
  std::string text;
};

// Splits `total` into `parts` positive integers at random.
std::vector<int> split(int total, int parts, std::mt19937& rng) {
  std::vector<int> out(parts, 1);
  for (int left = total - parts; left > 0; --left) ++out[std::uniform_int_distribution<int>(0, parts - 1)(rng)];
  return out;
}

Layout random_layout(std::mt19937& rng, int layers, int micro_batches) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Layout l;
  std::ostringstream text;
  int replicas = pick(1, 3);
  l.plan.micro_batch = 1;
  l.plan.schedule = pick(0, 1) ? models::Schedule::k1f1b : models::Schedule::kGpipe;
  l.plan.zero = pick(0, 3);
  // ZeRO-2/3 pair their per-pass collectives across replicas: the same stages and micro-batch
  // counts on every replica (runner/rank_layout.cpp, models::zero3_asymmetry); TP degrees still differ.
  const bool symmetric = l.plan.zero >= 2;
  while (symmetric && micro_batches % replicas != 0) --replicas;
  const std::vector<int> mbs =
      symmetric ? std::vector<int>(replicas, micro_batches / replicas) : split(micro_batches, replicas, rng);
  l.plan.sequence_parallel = pick(0, 1) == 1;
  text << (l.plan.schedule == models::Schedule::kGpipe ? "gpipe" : "1f1b") << " zero" << l.plan.zero
       << (l.plan.sequence_parallel ? " sp" : "");
  std::vector<int> split_layers;
  for (int r = 0; r < replicas; ++r) {
    if (!symmetric || r == 0) split_layers = split(layers, pick(1, 3), rng);
    const int depth = static_cast<int>(split_layers.size());
    std::vector<models::Stage> stages;
    text << " | r" << r << " m" << mbs[r] << ":";
    for (int s = 0; s < depth; ++s) {
      const int tp = 1 << pick(0, 2);  // 1, 2 or 4: divides the tiny model's heads and FFN
      stages.push_back(testing::stage(split_layers[s], l.gpus, tp));
      l.gpus += tp;
      text << " L" << split_layers[s] << "tp" << tp;
    }
    l.plan.replicas.push_back(testing::replica(mbs[r], std::move(stages)));
  }
  l.plan.name = "random";
  l.text = text.str();
  return l;
}

RunOutcome train(const models::Plan& p, int gpus, const models::Workload& w) {
  RunSpec spec;
  spec.cluster = testing::cpu_cluster(gpus - gpus / 2, gpus / 2);  // fast and slow devices alike
  spec.workload = w;
  spec.plan = p;
  spec.steps = 2;
  spec.options.capture_parameters = true;
  spec.options.poison_released_weights = true;
  spec.options.adam.learning_rate = 1.0f;  // Adam nearly linear in the gradients (epsilon 1)
  spec.options.adam.epsilon = 1.0f;
  return run_in_process(spec);
}

TEST(RandomLayouts, TrainLikeOneDevice) {
  const models::Workload w = testing::tiny_workload();
  const RunOutcome ref = train(testing::plan("single", {testing::replica(4, {testing::stage(4, 0)})}), 1, w);
  ASSERT_EQ(ref.parameters.size(), 1u);
  std::mt19937 rng(20261201);
  const int layouts = std::getenv("HETSIM_RANDOM_LAYOUTS") ? std::atoi(std::getenv("HETSIM_RANDOM_LAYOUTS")) : 40;
  for (int i = 0; i < layouts; ++i) {
    const Layout l = random_layout(rng, w.model.layers, w.training.global_batch);
    SCOPED_TRACE("layout " + std::to_string(i) + ": " + l.text);
    const RunOutcome got = train(l.plan, l.gpus, w);
    ASSERT_EQ(got.steps.size(), 2u);
    for (int s = 0; s < 2; ++s) EXPECT_NEAR(got.steps[s].loss, ref.steps[s].loss, 1e-4 * ref.steps[s].loss);
    ASSERT_EQ(got.parameters.size(), l.plan.replicas.size());
    int bad = 0;
    for (std::size_t r = 0; r < got.parameters.size() && bad < 3; ++r) {
      for (const auto& [name, want] : ref.parameters[0]) {
        const auto& have = got.parameters[r].at(name);
        ASSERT_EQ(have.size(), want.size()) << name;
        for (std::size_t k = 0; k < want.size() && bad < 3; ++k) {
          if (std::fabs(have[k] - want[k]) > 1e-6 + 1e-4 * std::fabs(want[k])) {
            ADD_FAILURE() << "replica " << r << " " << name << "[" << k << "]: " << have[k] << " vs " << want[k];
            ++bad;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace hetsim::exec
