#include <gtest/gtest.h>

#include <thread>

#include "exec/block_pool.h"

namespace ephost {
namespace {

TEST(BlockPool, ReturnedBlockIsReusedForTheNextRun) {
  BlockPool pool;
  void* first = nullptr;
  {
    auto b = pool.take(1000);
    first = b.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    EXPECT_EQ(pool.free_blocks(), 0u);
  }
  EXPECT_EQ(pool.free_blocks(), 1u);
  auto again = pool.take(900);  // fits in the returned block
  EXPECT_EQ(again.get(), first);
  auto bigger = pool.take(5000);  // does not: a new block
  EXPECT_NE(bigger.get(), first);
}

TEST(BlockPool, ConcurrentRunsHoldDistinctBlocksAndPoolIsBounded) {
  BlockPool pool(2);
  {
    auto a = pool.take(64), b = pool.take(64), c = pool.take(64);
    EXPECT_NE(a.get(), b.get());
    EXPECT_NE(b.get(), c.get());
  }
  EXPECT_EQ(pool.free_blocks(), 2u);  // the third was freed, not kept
}

TEST(BlockPool, BlockMayOutliveThePool) {
  std::shared_ptr<void> survivor;
  {
    BlockPool pool;
    survivor = pool.take(128);
  }
  survivor.reset();  // frees without touching the destroyed pool (checked by ASan builds)
  SUCCEED();
}

}  // namespace
}  // namespace ephost
