// SPDX-License-Identifier: Apache-2.0
// In-process communicator: p2p order, every collective over groups of several sizes and
// element counts that do not divide evenly, call timing, and failure propagation; the MPI
// launcher's rank as the environment gives it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include <cstdlib>

#include "comm/in_process_communicator.hpp"
#include "comm/launcher.hpp"

namespace hetsim::exec {
namespace {

TEST(InProcessCommunicator, SendRecvKeepsOrderPerTag) {
  InProcessWorld::run(2, [](Communicator& c) {
    if (c.get_rank() == 0) {
      for (int i = 0; i < 5; ++i) {
        const float x[2] = {static_cast<float>(i), static_cast<float>(10 * i)};
        c.send(x, 2, 1, 7);
      }
      const float y = 99;
      c.send(&y, 1, 1, 8);
    } else {
      float y = 0;
      c.recv(&y, 1, 0, 8);  // a different tag may be received first
      EXPECT_EQ(y, 99);
      for (int i = 0; i < 5; ++i) {
        float x[2];
        c.recv(x, 2, 0, 7);
        EXPECT_EQ(x[0], i);
        EXPECT_EQ(x[1], 10 * i);
      }
    }
  });
}

class CollectiveTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(CollectiveTest, AllReduceReduceScatterAllGather) {
  const auto [size, count] = GetParam();
  InProcessWorld::run(size, [size = size, count = count](Communicator& c) {
    // Group: every rank, in reversed order, to check that positions (not ranks) order chunks.
    Group g{3, {}};
    for (int r = size - 1; r >= 0; --r) g.ranks.push_back(r);
    const int me = c.get_rank();
    const int pos = g.position_of(me);
    std::vector<float> buf(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) buf[i] = static_cast<float>(me * 1000 + i);
    c.all_reduce(buf.data(), buf.size(), g);
    const float rank_sum = static_cast<float>(size * (size - 1) / 2 * 1000);
    for (int i = 0; i < count; ++i) ASSERT_EQ(buf[i], rank_sum + static_cast<float>(size * i)) << i;

    std::vector<float> in(static_cast<std::size_t>(count) * size), out(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(me + i);
    c.reduce_scatter(in.data(), out.data(), count, g);
    for (int i = 0; i < count; ++i) {
      const std::size_t at = static_cast<std::size_t>(pos) * count + i;
      ASSERT_EQ(out[i], static_cast<float>(size * (size - 1) / 2 + size * at)) << i;
    }

    std::vector<float> mine(static_cast<std::size_t>(count), static_cast<float>(me)), all(in.size());
    c.all_gather(mine.data(), all.data(), count, g);
    for (int p = 0; p < size; ++p) {
      for (int i = 0; i < count; ++i) ASSERT_EQ(all[static_cast<std::size_t>(p) * count + i], g.ranks[p]);
    }
    c.barrier(g);
    // Every call was timed.
    const auto& calls = c.get_calls();
    ASSERT_EQ(calls.size(), 4u);
    EXPECT_EQ(calls[0].op, "all_reduce");
    EXPECT_EQ(calls[0].size_bytes, count * sizeof(float));
    EXPECT_EQ(calls[1].op, "reduce_scatter");
    EXPECT_EQ(calls[2].op, "all_gather");
    EXPECT_EQ(calls[3].op, "barrier");
    for (const auto& call : calls) EXPECT_LE(call.start_s, call.end_s);
  });
}

INSTANTIATE_TEST_SUITE_P(SizesAndCounts, CollectiveTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 5), ::testing::Values(1, 7, 64)));

TEST(InProcessCommunicator, SubgroupsRunConcurrently) {
  InProcessWorld::run(4, [](Communicator& c) {
    const int me = c.get_rank();
    const Group g = me % 2 == 0 ? Group{1, {0, 2}} : Group{2, {1, 3}};
    float x = static_cast<float>(me);
    c.all_reduce(&x, 1, g);
    EXPECT_EQ(x, me % 2 == 0 ? 2.0f : 4.0f);
  });
}

TEST(InProcessCommunicator, AFailingRankStopsEveryRankAndIsNamed) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> released{0};
  try {
    InProcessWorld::run(3, [&](Communicator& c) {
      if (c.get_rank() == 2) throw std::runtime_error("boom");
      float x = 1;
      try {
        c.all_reduce(&x, 1, Group{0, {0, 1, 2}});  // would wait forever for rank 2
      } catch (const RankFailure& e) {
        EXPECT_EQ(e.get_failed_rank(), 2);
        ++released;
        throw;
      }
    });
    FAIL() << "expected RankFailure";
  } catch (const RankFailure& e) {
    EXPECT_EQ(e.get_failed_rank(), 2);
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos);
  }
  EXPECT_EQ(released.load(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(InProcessCommunicator, MessageSizeMismatchIsAnError) {
  EXPECT_THROW(InProcessWorld::run(2,
                                   [](Communicator& c) {
                                     float x[2] = {1, 2};
                                     if (c.get_rank() == 0) c.send(x, 2, 1, 0);
                                     else c.recv(x, 1, 0, 0);
                                   }),
               RankFailure);
}

// Ranks that share a clock share an epoch: the one a rank that asks late gets is the one the
// first rank took, whatever the order (a late rank used to start its own clock late, and its
// op times then looked earlier than another rank's by the delay).
TEST(InProcessCommunicator, RanksShareOneEpochWhateverTheOrderTheyAskIn) {
  std::vector<double> epochs(3, 0.0);
  std::atomic<bool> rank0_asked{false};
  InProcessWorld::run(3, [&](Communicator& comm) {
    const int rank = comm.get_rank();
    if (rank == 0) {
      epochs[0] = comm.get_shared_epoch_s().value();
      rank0_asked = true;
      return;
    }
    while (!rank0_asked) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * rank));
    const double before = Communicator::now_s();
    epochs[rank] = comm.get_shared_epoch_s().value();
    EXPECT_LT(epochs[rank], before) << "rank " << rank << " started a clock of its own";
  });
  EXPECT_EQ(epochs[0], epochs[1]);
  EXPECT_EQ(epochs[0], epochs[2]);
}

TEST(Launcher, RankFromTheLaunchersEnvironment) {
  const char* vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (const char* v : vars) unsetenv(v);
  EXPECT_EQ(launcher_rank(), -1);
  EXPECT_FALSE(launched_by_mpi());
  EXPECT_TRUE(first_process());  // alone: it speaks for itself
  for (const char* v : vars) {
    setenv(v, "3", 1);
    EXPECT_EQ(launcher_rank(), 3) << v;
    EXPECT_TRUE(launched_by_mpi()) << v;
    EXPECT_FALSE(first_process()) << v;
    setenv(v, "0", 1);
    EXPECT_TRUE(first_process()) << v;
    unsetenv(v);
  }
}

}  // namespace
}  // namespace hetsim::exec
