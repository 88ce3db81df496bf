// SPDX-License-Identifier: Apache-2.0
// Data-parallel groups of replicas that hold the same layers at different TP degrees: shard
// count, group membership and the packed buckets of the lower-TP ranks.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <string>

#include "exec_test_support.hpp"
#include "runner/parameters.hpp"
#include "runner/rank_layout.hpp"

namespace hetsim::exec {
namespace {

using testing::plan;
using testing::replica;
using testing::stage;

models::ModelSpec tiny_model() {
  models::ModelSpec m = testing::tiny_workload().model;
  return m;
}

// Replicas tp4 (ranks 0-3), tp2 (ranks 4-5), tp1 (rank 6).
models::Plan three_degrees() {
  return plan("tp421", {replica(2, {stage(4, 0, 4)}), replica(1, {stage(4, 4, 2)}), replica(1, {stage(4, 6, 1)})});
}

// A TP degree that does not divide a head count names the figure and its value (it said "tp 4
// must divide heads, kv_heads and ffn_hidden" of a model with 4 heads and 2 KV heads; s57 hunt).
TEST(MixedTpLayout, ATpDegreeNotDividingTheKvHeadsSaysSo) {
  models::ModelSpec m = tiny_model();
  m.heads = 4;
  m.kv_heads = 2;
  try {
    const RankLayout layout(plan("tp4", {replica(1, {stage(m.layers, 0, 4)})}), m);
    FAIL() << "accepted tp 4 over 2 KV heads";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tp 4 does not divide model.kv_heads (2; expected"), std::string::npos) << e.what();
  }
}

TEST(MixedTpLayout, EachShardOfTheHighestDegreeHasAGroupWithTheRanksHoldingIt) {
  const RankLayout layout(three_degrees(), tiny_model());
  for (int u = 0; u < layout.get_unit_count(); ++u) {
    ASSERT_EQ(layout.dp_shards(u), 4) << "unit " << u;
    // Shard t: tp4 rank t, tp2 rank t / 2, the tp1 rank.
    EXPECT_EQ(layout.dp_group(u, 0).ranks, (std::vector<int>{0, 4, 6}));
    EXPECT_EQ(layout.dp_group(u, 1).ranks, (std::vector<int>{1, 4, 6}));
    EXPECT_EQ(layout.dp_group(u, 2).ranks, (std::vector<int>{2, 5, 6}));
    EXPECT_EQ(layout.dp_group(u, 3).ranks, (std::vector<int>{3, 5, 6}));
  }
}

TEST(MixedTpLayout, EqualDegreesKeepOneContiguousBucketPerRank) {
  const models::Plan p = plan("dp2tp2", {replica(2, {stage(4, 0, 2)}), replica(2, {stage(4, 2, 2)})});
  const RankLayout layout(p, tiny_model());
  for (int r = 0; r < layout.get_world_size(); ++r) {
    const RankParameters rp = rank_parameters(layout, tiny_model(), r);
    ASSERT_EQ(rp.buckets.size(), 1u);
    EXPECT_FALSE(rp.buckets[0].is_packed());
    EXPECT_EQ(rp.buckets[0].shard, layout.place(r).tp_rank);
  }
}

// A packed part of the tp1 rank has exactly the size and the element order of the tp4 rank of
// its shard: packing the tp1 rank's full tensors, indexed by their global coordinates, gives the
// tp4 rank's flat buffer of the same coordinates.
TEST(MixedTpLayout, PackedPartsMatchTheHigherDegreeRanksLayout) {
  const models::ModelSpec m = tiny_model();
  const RankLayout layout(three_degrees(), m);
  const RankParameters low = rank_parameters(layout, m, 6);
  ASSERT_EQ(low.buckets.size(), 4u);
  // Value of element (row, col) of tensor `name`: unique per tensor and coordinate, never 0.
  auto value = [](const ParamSpec& p, int row, int col) {
    return static_cast<float>(std::hash<std::string>{}(p.name) % 97) * 1e4f + static_cast<float>(row * p.full_cols + col) +
           1.0f;
  };
  auto fill = [&](const RankParameters& rp) {
    std::vector<float> flat(rp.total, -1.0f);
    for (const auto& p : rp.params) {
      for (int i = 0; i < p.rows; ++i) {
        for (int j = 0; j < p.cols; ++j) flat[p.offset + i * p.cols + j] = value(p, p.row_offset + i, p.col_offset + j);
      }
    }
    return flat;
  };
  const std::vector<float> low_flat = fill(low);
  for (int t = 0; t < 4; ++t) {
    const Bucket& part = low.buckets[t];
    ASSERT_TRUE(part.is_packed());
    EXPECT_EQ(part.shard, t);
    const RankParameters high = rank_parameters(layout, m, t);
    ASSERT_EQ(high.buckets.size(), 1u);
    ASSERT_EQ(part.count, high.buckets[0].count) << "shard " << t;
    std::size_t run_total = 0;
    for (const CopyRun& run : part.runs) run_total += run.length;
    std::vector<float> packed(part.count, 0.0f);
    pack_bucket(part, low_flat.data() + part.offset, packed.data());
    const std::vector<float> high_flat = fill(high);
    ASSERT_GE(high.total, run_total);  // the contiguous bucket also carries its padding
    for (std::size_t i = 0; i < run_total; ++i) {
      ASSERT_EQ(packed[i], high_flat[i]) << "shard " << t << " element " << i;
    }
    // Unpacking writes the part back where it came from and nowhere else.
    std::vector<float> back(part.region_count, 0.0f);
    unpack_bucket(part, packed.data(), back.data());
    std::size_t written = 0;
    for (std::size_t i = 0; i < back.size(); ++i) {
      if (back[i] != 0.0f) {
        ASSERT_EQ(back[i], low_flat[part.offset + i]);
        ++written;
      }
    }
    EXPECT_EQ(written, run_total);
  }
}

}  // namespace
}  // namespace hetsim::exec
