//===- HostAllocatorTest.cpp - The buffer cache of CPU artifacts ----------===//
//
// Blocks come back for the same size (or resized for another one), are
// aligned, small ones bypass the cache, the cache never holds more than the
// largest live total or the limit the runtime sets per task, and a block the
// runtime adopts is charged as its own and leaves the largest live total
// alone (a limit follows it).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/HostAllocator.h"
#include "FTPipe/Runtime/MemoryLedger.h"

#include "gtest/gtest.h"

#include <malloc.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

struct Stats {
  int64_t reused, fresh, cached;
};

Stats stats() {
  Stats s;
  ftpipe_host_alloc_stats(&s.reused, &s.fresh, &s.cached);
  return s;
}

constexpr size_t kMiB = size_t(1) << 20;

class HostAllocatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    // As ftpipe-run sets it (MemoryStats.h, returnLargeBlocksToSystem):
    // blocks of 1 MiB and more are mapped on their own, so that glibc
    // resizes them by mremap, keeping their pages.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    ftpipe_host_cache_release();
  }
  void TearDown() override { ftpipe_host_cache_release(); }
};

TEST_F(HostAllocatorTest, SameSizeIsReused) {
  Stats before = stats();
  void *first = _mlir_memref_to_llvm_alloc(3 * kMiB + 5);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, 3 * kMiB + 5);
  _mlir_memref_to_llvm_free(first);
  EXPECT_EQ(stats().cached, int64_t(3 * kMiB + 4096));
  // A size that rounds to the same pages gets the same block back.
  void *second = _mlir_memref_to_llvm_alloc(3 * kMiB + 100);
  EXPECT_EQ(second, first);
  Stats after = stats();
  EXPECT_EQ(after.fresh - before.fresh, 1);
  EXPECT_EQ(after.reused - before.reused, 1);
  EXPECT_EQ(after.cached, 0);
  _mlir_memref_to_llvm_free(second);
}

TEST_F(HostAllocatorTest, AMuchLargerBlockIsKeptWhileThereIsRoom) {
  // 8 MiB live sets the bound; shrunk to 5 MiB, the block leaves 3 MiB of
  // room, so a request of less than half its size gets a fresh block.
  void *a = _mlir_memref_to_llvm_alloc(8 * kMiB);
  _mlir_memref_to_llvm_free(a);
  void *b = _mlir_memref_to_llvm_alloc(5 * kMiB);
  EXPECT_EQ(b, a);
  _mlir_memref_to_llvm_free(b);
  Stats before = stats();
  void *c = _mlir_memref_to_llvm_alloc(2 * kMiB);
  EXPECT_EQ(stats().fresh - before.fresh, 1);
  EXPECT_EQ(stats().cached, int64_t(5 * kMiB));
  _mlir_memref_to_llvm_free(c);
}

TEST_F(HostAllocatorTest, ALargerBlockIsShrunkToTheRequest) {
  // Sizes differ between ops (the logits, a gradient of the same rows): a
  // kept block up to twice the request serves it, keeping its mapped pages,
  // and gives its slack back.
  void *big = _mlir_memref_to_llvm_alloc(6 * kMiB);
  std::memset(big, 1, 6 * kMiB);
  _mlir_memref_to_llvm_free(big);
  Stats before = stats();
  void *smaller = _mlir_memref_to_llvm_alloc(4 * kMiB);
  Stats after = stats();
  EXPECT_EQ(smaller, big);
  EXPECT_EQ(after.reused - before.reused, 1);
  EXPECT_EQ(after.fresh, before.fresh);
  EXPECT_EQ(after.cached, 0);
  std::memset(smaller, 2, 4 * kMiB);
  _mlir_memref_to_llvm_free(smaller);
  EXPECT_EQ(stats().cached, int64_t(4 * kMiB));
  // More than twice the request: a fresh block, the kept one stays.
  before = stats();
  void *small = _mlir_memref_to_llvm_alloc(kMiB + 5);
  EXPECT_EQ(stats().fresh - before.fresh, 1);
  EXPECT_EQ(stats().cached, int64_t(4 * kMiB));
  _mlir_memref_to_llvm_free(small);
}

TEST_F(HostAllocatorTest, AFullCacheResizesItsNearestBlockAndTrimsTheRest) {
  // Two blocks live at once set the bound; a larger request must evict, and
  // takes the kept block nearest its size (grown) instead of mapping a
  // fresh one.
  void *a = _mlir_memref_to_llvm_alloc(4 * kMiB);
  void *b = _mlir_memref_to_llvm_alloc(3 * kMiB);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  ASSERT_EQ(stats().cached, int64_t(7 * kMiB));
  Stats before = stats();
  void *larger = _mlir_memref_to_llvm_alloc(6 * kMiB);
  ASSERT_NE(larger, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(larger) % 4096, 0u);
  std::memset(larger, 3, 6 * kMiB);
  Stats after = stats();
  EXPECT_EQ(after.reused - before.reused, 1);
  EXPECT_EQ(after.fresh, before.fresh);
  // Within the 7 MiB bound the 3 MiB block keeps 1 MiB of its pages.
  EXPECT_EQ(after.cached, int64_t(kMiB));
  _mlir_memref_to_llvm_free(larger);
}

TEST_F(HostAllocatorTest, TheNearestBlockNotTheLargestServesAFullCache) {
  // Kept: 8 MiB and 2 MiB, the bound 10 MiB. A 3 MiB request grows the
  // 2 MiB block by a MiB and trims a MiB off the 8 MiB one, where taking
  // the largest would have given 5 MiB of its pages back.
  void *a = _mlir_memref_to_llvm_alloc(8 * kMiB);
  void *b = _mlir_memref_to_llvm_alloc(2 * kMiB);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  ASSERT_EQ(stats().cached, int64_t(10 * kMiB));
  void *c = _mlir_memref_to_llvm_alloc(3 * kMiB);
  EXPECT_EQ(stats().cached, int64_t(7 * kMiB));
  // The trimmed block keeps its place: a 7 MiB request gets it as it is.
  void *d = _mlir_memref_to_llvm_alloc(7 * kMiB);
  EXPECT_EQ(d, a);
  EXPECT_EQ(stats().cached, 0);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(d);
}

TEST_F(HostAllocatorTest, Alignment) {
  for (size_t size : {size_t(1), size_t(100), 2 * kMiB + 3}) {
    void *p = _mlir_memref_to_llvm_alloc(size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << size;
    _mlir_memref_to_llvm_free(p);
    void *q = _mlir_memref_to_llvm_aligned_alloc(128, size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 128, 0u) << size;
    _mlir_memref_to_llvm_free(q);
  }
  void *zero = _mlir_memref_to_llvm_alloc(0);
  EXPECT_NE(zero, nullptr);
  _mlir_memref_to_llvm_free(zero);
  _mlir_memref_to_llvm_free(nullptr);
}

TEST_F(HostAllocatorTest, SmallBlocksBypassTheCache) {
  Stats before = stats();
  void *p = _mlir_memref_to_llvm_alloc(64 * 1024);
  _mlir_memref_to_llvm_free(p);
  Stats after = stats();
  EXPECT_EQ(after.fresh, before.fresh);
  EXPECT_EQ(after.cached, 0);
}

TEST_F(HostAllocatorTest, CacheNeverExceedsThePeakLiveTotal) {
  // Every size distinct, one live at a time: peak live is the largest block,
  // so the cache keeps at most that many bytes whatever the sizes freed.
  size_t largest = 0;
  for (size_t i = 1; i <= 8; ++i) {
    size_t size = i * kMiB + 7;
    largest = std::max(largest, (size + 4095) / 4096 * 4096);
    void *p = _mlir_memref_to_llvm_alloc(size);
    _mlir_memref_to_llvm_free(p);
    EXPECT_LE(stats().cached, int64_t(largest)) << i;
  }
  // Blocks live together raise the bound; all of them then fit.
  std::vector<void *> blocks;
  for (int i = 0; i < 4; ++i)
    blocks.push_back(_mlir_memref_to_llvm_alloc(16 * kMiB));
  ftpipe_host_cache_release();
  for (void *p : blocks)
    _mlir_memref_to_llvm_free(p);
  EXPECT_EQ(stats().cached, int64_t(64 * kMiB));
  ftpipe_host_cache_release();
  EXPECT_EQ(stats().cached, 0);
}

FTPipeMemLedger ledger(int32_t device) {
  FTPipeMemLedger state;
  ftpipe_mem_read(device, &state);
  return state;
}

TEST_F(HostAllocatorTest, AnAdoptedBlockIsTheRuntimesAndLeavesTheBound) {
  // A device of its own, so the ledger starts empty.
  constexpr int32_t device = 201;
  ftpipe_mem_set_thread_device(device);
  void *saved = _mlir_memref_to_llvm_alloc(4 * kMiB);
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_GENERATED], int64_t(4 * kMiB));
  ASSERT_EQ(ftpipe_host_adopt(saved), 1);
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_GENERATED], 0);
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_RUNTIME], int64_t(4 * kMiB));
  // Adopted once; a pointer the allocator never handed out is refused.
  EXPECT_EQ(ftpipe_host_adopt(saved), 0);
  int local = 0;
  EXPECT_EQ(ftpipe_host_adopt(&local), 0);

  // The next micro-batch's buffer: the generated code's peak stays 4 MiB,
  // so once both are freed the cache keeps 4 MiB, not the 8 handed out.
  void *next = _mlir_memref_to_llvm_alloc(4 * kMiB);
  _mlir_memref_to_llvm_free(next);
  EXPECT_EQ(stats().cached, int64_t(4 * kMiB));
  _mlir_memref_to_llvm_free(saved);
  EXPECT_EQ(stats().cached, int64_t(4 * kMiB));
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_RUNTIME], 0);
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_CACHED], int64_t(4 * kMiB));

  // Where the bound has room, the freed adopted block is kept for reuse.
  ftpipe_host_cache_release();
  void *kept = _mlir_memref_to_llvm_alloc(3 * kMiB);
  ASSERT_EQ(ftpipe_host_adopt(kept), 1);
  _mlir_memref_to_llvm_free(kept);
  EXPECT_EQ(stats().cached, int64_t(3 * kMiB));
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(3 * kMiB), kept);
  _mlir_memref_to_llvm_free(kept);
  ftpipe_mem_set_thread_device(-1);
}

TEST_F(HostAllocatorTest, ATasksLimitBoundsTheCacheWithWhatItAdopts) {
  // As the runtime sets it at each task (ftpipe_host_cache_limit, the entry
  // point's recorded peak): generated, cached and the bytes adopted or freed
  // since stay within the limit, so the replay may count each task's own
  // peak instead of the device's largest.
  constexpr int32_t device = 202;
  ftpipe_mem_set_thread_device(device);
  auto total = [&] {
    FTPipeMemLedger state = ledger(device);
    return state.now[FTPIPE_MEM_GENERATED] + state.now[FTPIPE_MEM_CACHED] +
           state.now[FTPIPE_MEM_RUNTIME];
  };
  // A forward of peak 8 MiB: 4 MiB saved for its backward, 4 MiB scratch.
  ftpipe_host_cache_limit(int64_t(8 * kMiB));
  void *saved = _mlir_memref_to_llvm_alloc(4 * kMiB);
  void *scratch = _mlir_memref_to_llvm_alloc(4 * kMiB);
  _mlir_memref_to_llvm_free(scratch);
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_CACHED], int64_t(4 * kMiB));
  ASSERT_EQ(ftpipe_host_adopt(saved), 1);
  EXPECT_EQ(total(), int64_t(8 * kMiB));

  // A backward of peak 2 MiB: the cache is trimmed to it at once...
  ftpipe_host_cache_limit(int64_t(2 * kMiB));
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_CACHED], int64_t(2 * kMiB));
  EXPECT_EQ(total(), int64_t(6 * kMiB));
  // ...and the saved value it frees may stay in the cache beside it, for
  // the next forward: what the replay counted for the backward.
  _mlir_memref_to_llvm_free(saved);
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_RUNTIME], 0);
  EXPECT_EQ(ledger(device).now[FTPIPE_MEM_CACHED], int64_t(6 * kMiB));
  // The next forward's limit trims that to its peak.
  ftpipe_host_cache_limit(int64_t(5 * kMiB));
  EXPECT_EQ(total(), int64_t(5 * kMiB));
  ftpipe_mem_set_thread_device(-1);
}

} // namespace
