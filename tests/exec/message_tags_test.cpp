// SPDX-License-Identifier: Apache-2.0
// Message tags stay within the bound every MPI guarantees (MPI_TAG_UB >= 32767): the tag
// arithmetic, the tags of a run's layout, and a run refused before it starts when its tags
// cannot fit. Host logic only: no MPI needed.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "comm/in_process_communicator.hpp"
#include "exec_test_support.hpp"
#include "runner/rank_layout.hpp"
#include "runner/run.hpp"

namespace hetsim::exec {
namespace {

using testing::plan;
using testing::replica;
using testing::stage;

TEST(MessageTags, CollectivesCountDownFromTheBound) {
  EXPECT_EQ(collective_tag(0, kMinTagUpperBound), 32767);
  EXPECT_EQ(collective_tag(7, kMinTagUpperBound), 32760);
  EXPECT_EQ(collective_tag(32767, kMinTagUpperBound), 0);
  EXPECT_EQ(collective_tag(3, 8388607), 8388604);  // Open MPI's larger bound is used when it has one
  EXPECT_THROW(collective_tag(-1, kMinTagUpperBound), std::out_of_range);
  EXPECT_THROW(collective_tag(32768, kMinTagUpperBound), std::out_of_range);
}

TEST(MessageTags, SpaceCheckNamesTheCountsAndTheBound) {
  EXPECT_NO_THROW(check_tag_space(9, 32759, kMinTagUpperBound));  // 9 + 32759 = 32768 tags: 0..32767
  try {
    check_tag_space(10, 32759, kMinTagUpperBound);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* part : {"10 point-to-point", "32759", "32767", "MPI_TAG_UB"}) {
      EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
    }
  }
  EXPECT_NO_THROW(check_tag_space(100, 1000, 2147483647));  // INT_MAX + 1 does not overflow
}

// Every tag a run uses: p2p streams (activations and gradients of every model chunk, the
// gradient collection) below every collective tag, all within 0..32767 and all distinct.
TEST(MessageTags, EveryTagOfALayoutFitsTheMinimumBound) {
  models::Workload w = testing::tiny_workload();
  w.model.layers = 8;
  models::Plan p = plan("tp2pp2dp2-interleaved",
                        {replica(4, {stage(4, 0, 2), stage(4, 2, 2)}), replica(4, {stage(4, 4, 2), stage(4, 6, 2)})},
                        models::Schedule::kInterleaved);
  p.interleave = 2;
  const RankLayout layout(p, w.model);
  ASSERT_NO_THROW(check_tag_space(layout.p2p_tag_count(), layout.get_group_count(), kMinTagUpperBound));
  std::set<int> p2p;
  for (int j = 0; j < layout.get_max_model_chunks(); ++j) {
    p2p.insert(RankLayout::activation_tag(j));
    p2p.insert(RankLayout::gradient_tag(j));
  }
  p2p.insert(layout.collect_tag());
  EXPECT_EQ(static_cast<int>(p2p.size()), layout.p2p_tag_count());
  EXPECT_EQ(*p2p.begin(), 0);
  EXPECT_EQ(*p2p.rbegin(), layout.p2p_tag_count() - 1);
  std::set<int> collective;
  for (int g = 0; g < layout.get_group_count(); ++g) {
    const int tag = collective_tag(g, kMinTagUpperBound);
    EXPECT_GT(tag, *p2p.rbegin());
    EXPECT_LE(tag, kMinTagUpperBound);
    collective.insert(tag);
  }
  EXPECT_EQ(static_cast<int>(collective.size()), layout.get_group_count());
}

TEST(MessageTags, ATagAboveTheBoundIsRefused) {
  EXPECT_THROW(InProcessWorld::run(2,
                                   [](Communicator& c) {
                                     float x = 1;
                                     if (c.get_rank() == 0) c.send(&x, 1, 1, 1 << 20);
                                     else c.recv(&x, 1, 0, 1 << 20);
                                   }),
               RankFailure);
}

// A transport with a tiny tag bound: the run is refused before any message is sent.
class TinyTagCommunicator final : public Communicator {
 public:
  explicit TinyTagCommunicator(int size) : size_(size) {}
  int get_rank() const override { return 0; }
  int get_size() const override { return size_; }
  int get_tag_ub() const override { return 4; }
  void abort(const std::string&) override {}

 protected:
  void send_bytes(const void*, std::size_t, int, int) override { throw std::logic_error("no message expected"); }
  void recv_bytes(void*, std::size_t, int, int) override { throw std::logic_error("no message expected"); }
  void wait_message(int, int) override { throw std::logic_error("no message expected"); }

 private:
  int size_;
};

TEST(MessageTags, ARunWhoseTagsDoNotFitIsRefusedBeforeItStarts) {
  RunSpec s;
  s.cluster = testing::cpu_cluster(2, 0);
  s.workload = testing::tiny_workload();
  s.plan = plan("pp2", {replica(2, {stage(2, 0), stage(2, 1)})});
  TinyTagCommunicator comm(2);
  try {
    run_rank(s, comm);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MPI_TAG_UB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hetsim::exec
