// SPDX-License-Identifier: Apache-2.0
// Under mpirun (4 processes): each plan runs on the first gpu_count() ranks over MPI and must give
// the single-rank loss and gradients (computed in-process on rank 0) within rtol 1e-4 / atol 1e-6.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "comm/mpi_communicator.hpp"
#include "exec_test_support.hpp"
#include "runner/run.hpp"

namespace hetsim::exec {
namespace {

using testing::plan;
using testing::replica;
using testing::stage;

struct MpiCase {
  std::string name;
  models::Plan plan;
  int fast = 4, slow = 0;
};
void PrintTo(const MpiCase& c, std::ostream* os) { *os << c.name; }

class MpiEquivalenceTest : public ::testing::TestWithParam<MpiCase> {};

TEST_P(MpiEquivalenceTest, MatchesSingleRank) {
  const MpiCase& c = GetParam();
  RunSpec spec;
  spec.workload = testing::tiny_workload();
  spec.steps = 2;
  spec.options.capture_gradients = true;
  spec.options.capture_parameters = true;
  spec.options.poison_released_weights = true;
  // Adam nearly linear in the gradients (runner_equivalence_test.cpp says why).
  spec.options.adam.learning_rate = 1.0f;
  spec.options.adam.epsilon = 1.0f;
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  ASSERT_LE(c.plan.gpu_count(), world_size) << "run with mpirun -n " << c.plan.gpu_count() << " or more";

  RunOutcome ref;
  if (world_rank == 0) {
    RunSpec single = spec;
    single.cluster = testing::cpu_cluster(1, 0);
    single.plan = plan("single", {replica(4, {stage(4, 0)})});
    ref = run_in_process(single);
  }
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank < c.plan.gpu_count() ? 0 : MPI_UNDEFINED, world_rank, &sub);
  if (sub != MPI_COMM_NULL) {
    spec.cluster = testing::cpu_cluster(c.fast, c.slow);
    spec.plan = c.plan;
    RankOutcome got;
    {
      MpiCommunicator comm(sub);
      got = run_rank_or_abort(spec, comm);
    }
    MPI_Comm_free(&sub);
    if (world_rank == 0) {
      ASSERT_EQ(got.steps.size(), 2u);
      for (int s = 0; s < 2; ++s) EXPECT_NEAR(got.steps[s].loss, ref.steps[s].loss, 1e-4 * ref.steps[s].loss);
      ASSERT_GE(ref.gradients.size(), 40u);
      ASSERT_EQ(ref.gradients.size(), got.gradients.size());
      for (const auto& [name, r] : ref.gradients) {
        const auto& g = got.gradients.at(name);
        ASSERT_EQ(g.size(), r.size());
        for (std::size_t i = 0; i < r.size(); ++i) {
          ASSERT_NEAR(g[i], r[i], 1e-6 + 1e-4 * std::fabs(r[i])) << name << "[" << i << "]";
        }
      }
      ASSERT_EQ(got.parameters.size(), c.plan.replicas.size());
      for (std::size_t rep = 0; rep < got.parameters.size(); ++rep) {
        for (const auto& [name, r] : ref.parameters.at(0)) {
          const auto& g = got.parameters[rep].at(name);
          ASSERT_EQ(g.size(), r.size());
          for (std::size_t i = 0; i < r.size(); ++i) {
            ASSERT_NEAR(g[i], r[i], 1e-6 + 1e-4 * std::fabs(r[i])) << "replica " << rep << " " << name << "[" << i << "]";
          }
        }
      }
      EXPECT_EQ(got.report.engine, "exec");
      EXPECT_GT(got.report.iteration_time_s, 0);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, MpiEquivalenceTest,
    ::testing::Values(
        MpiCase{"tp2", plan("tp2", {replica(4, {stage(4, 0, 2)})})},
        MpiCase{"pp2", plan("pp2", {replica(4, {stage(2, 0), stage(2, 1)})})},
        MpiCase{"dp2", plan("dp2", {replica(2, {stage(4, 0)}), replica(2, {stage(4, 1)})})},
        MpiCase{"tp2pp2", plan("tp2pp2", {replica(4, {stage(2, 0, 2), stage(2, 2, 2)})})},
        MpiCase{"tp2pp2_sequence_parallel_interleaved",
                [] {
                  auto p = plan("tp2pp2spi", {replica(4, {stage(2, 0, 2), stage(2, 2, 2)})});
                  p.sequence_parallel = true;
                  p.schedule = models::Schedule::kInterleaved;
                  p.interleave = 2;
                  return p;
                }()},
        MpiCase{"uneven_heterogeneous",
                [] {
                  auto p = plan("hetero", {replica(3, {stage(3, 0), stage(1, 1)}), replica(1, {stage(1, 2), stage(3, 3)})});
                  p.zero = 1;
                  return p;
                }(),
                2, 2},
        MpiCase{"replicas_of_different_depths",
                plan("depths", {replica(2, {stage(4, 0)}), replica(2, {stage(2, 1), stage(2, 2)})}), 3, 0},
        // Replicas of different TP degrees: the tp1 rank syncs one packed part per shard.
        MpiCase{"replicas_of_different_tp_zero1",
                [] {
                  auto p = plan("dptp", {replica(2, {stage(4, 0, 2)}), replica(2, {stage(4, 2, 1)})});
                  p.zero = 1;
                  return p;
                }(),
                3, 0},
        // ZeRO-3: per-pass gathers and per-backward reduce-scatters; tied embedding at step end.
        MpiCase{"pp2dp2_zero3",
                [] {
                  auto p = plan("pp2dp2z3", {replica(2, {stage(2, 0), stage(2, 1)}), replica(2, {stage(2, 2), stage(2, 3)})});
                  p.zero = 3;
                  return p;
                }(),
                2, 2}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace hetsim::exec

int main(int argc, char** argv) {
  hetsim::exec::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {  // one report, from rank 0
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
