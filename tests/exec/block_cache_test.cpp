// SPDX-License-Identifier: Apache-2.0
// The GPU backends' block cache (exec/gpu/block_cache.hpp), on host memory: reuse by rounded size,
// the retry after freeing kept blocks when the device is full, and misuse.
#include "gpu/block_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

namespace hetsim::exec {
namespace {

// A "device" of capacity_bytes on malloc, counting its calls.
struct FakeDevice {
  std::size_t capacity_bytes = 1 << 20, used_bytes = 0;
  int allocations = 0, frees = 0;
  std::unordered_map<void*, std::size_t> blocks;
  BlockCache cache{[this](std::size_t n) -> void* {
                     if (used_bytes + n > capacity_bytes) return nullptr;
                     void* p = std::malloc(n);
                     blocks[p] = n;
                     used_bytes += n;
                     ++allocations;
                     return p;
                   },
                   [this](void* p) {
                     used_bytes -= blocks.at(p);
                     blocks.erase(p);
                     std::free(p);
                     ++frees;
                   }};
  ~FakeDevice() { cache.release_cached(); }
};

TEST(GpuHostLogic, BlockCacheRoundsSizesToItsGranule) {
  EXPECT_EQ(BlockCache::rounded(0), 512u);
  EXPECT_EQ(BlockCache::rounded(1), 512u);
  EXPECT_EQ(BlockCache::rounded(512), 512u);
  EXPECT_EQ(BlockCache::rounded(513), 1024u);
}

TEST(GpuHostLogic, BlockCacheHandsAFreedBlockOutAgainForTheSameRoundedSize) {
  FakeDevice d;
  void* a = d.cache.take(1000);
  EXPECT_EQ(d.cache.give_back(a), 1000u);  // the bytes asked for, which the backend counts in use
  EXPECT_EQ(d.cache.kept_bytes(), 1024u);
  EXPECT_EQ(d.cache.take(1020), a);  // same rounded size: no new allocation
  EXPECT_EQ(d.allocations, 1);
  void* b = d.cache.take(2000);  // another size: a new block
  EXPECT_NE(b, a);
  EXPECT_EQ(d.allocations, 2);
  d.cache.give_back(a);
  d.cache.give_back(b);
  EXPECT_EQ(d.frees, 0);  // kept, not freed
  EXPECT_EQ(d.cache.live_blocks(), 0u);
}

TEST(GpuHostLogic, BlockCacheRepeatedStepsAllocateOnlyInTheFirst) {
  FakeDevice d;
  for (int step = 0; step < 5; ++step) {
    std::set<void*> held;
    for (std::size_t n : {4096u, 8192u, 4096u, 100u}) held.insert(d.cache.take(n));
    EXPECT_EQ(held.size(), 4u);  // blocks in use at once are distinct
    for (void* p : held) d.cache.give_back(p);
  }
  EXPECT_EQ(d.allocations, 4);
}

TEST(GpuHostLogic, BlockCacheFreesKeptBlocksWhenTheDeviceIsFull) {
  FakeDevice d;
  d.capacity_bytes = 4096;
  void* a = d.cache.take(3000);  // 3072 bytes
  d.cache.give_back(a);          // kept: the device has 1024 bytes left
  void* b = d.cache.take(2048);  // no room until the kept block is freed
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(d.frees, 1);
  EXPECT_EQ(d.cache.kept_bytes(), 0u);
  EXPECT_EQ(d.cache.take(4096), nullptr);  // full, nothing kept: the caller reports out of memory
  d.cache.give_back(b);
}

TEST(GpuHostLogic, BlockCacheRejectsABlockItDidNotHandOut) {
  FakeDevice d;
  int x = 0;
  EXPECT_THROW(d.cache.give_back(&x), std::invalid_argument);
}

}  // namespace
}  // namespace hetsim::exec
