//===- HostAllocator.cpp - Buffers of generated CPU code ------------------===//
//
// The allocation functions of CPU artifacts (HostAllocator.h): blocks of at
// least kCachedFrom bytes are rounded up to whole pages and, once freed, kept
// in a free list per rounded size and device, from which a request takes the
// smallest block that holds it (up to kMaxSlack times its size, shrunk to
// the request), or, where the cache is full, the block nearest its size
// resized, and evictions trim the largest block by what must go;
// smaller blocks go straight to the system (and back). Live and cached
// bytes stay within a bound per device: the largest live total, or the
// limit the runtime sets at each task (ftpipe_host_cache_limit). Every
// block is in the live table, for the ledger's charges.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/HostAllocator.h"
#include "FTPipe/Runtime/MemoryLedger.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kCachedFrom = size_t(1) << 20;
constexpr size_t kPage = 4096;
// A request takes a kept block of up to this many times its size.
constexpr size_t kMaxSlack = 2;
// Every block is aligned at least this much (AVX-512 vectors, cache lines).
constexpr size_t kMinAlignment = 64;

/// One device's blocks: what is live, what is kept, and the bound.
struct Pool {
  /// Freed blocks by rounded size.
  std::map<size_t, std::vector<void *>> cache;
  size_t liveBytes = 0, cachedBytes = 0;
  /// Live and cached bytes together stay within it (never below the live
  /// bytes): the largest live total so far, or, once `limited`, the last
  /// limit less the bytes adopted since and plus the adopted bytes freed
  /// since, so that generated, cached and those adopted bytes stay within
  /// what the limit allowed.
  size_t bound = 0;
  bool limited = false;
};

class HostCache {
public:
  void *allocate(size_t alignment, size_t size) {
    alignment = alignment < kMinAlignment ? kMinAlignment : alignment;
    int32_t device = ftpipe_mem_thread_device();
    bool cacheable = size >= kCachedFrom && alignment <= kPage;
    size_t rounded = cacheable ? (size + kPage - 1) / kPage * kPage
                               : (size + alignment - 1) / alignment * alignment;
    std::lock_guard<std::mutex> lock(mutex);
    Pool &pool = pools[device];
    void *block = nullptr;
    // The smallest kept block that holds the request, if it is at most
    // kMaxSlack times as large, cut down to the request: its pages are
    // mapped already, where a fresh block's would fault in one by one.
    auto free = cacheable ? pool.cache.lower_bound(rounded) : pool.cache.end();
    if (free != pool.cache.end() && free->first <= rounded * kMaxSlack)
      block = takeCached(pool, device, free, rounded);
    // Live and cached bytes together stay within the largest live total:
    // a new block first evicts what the cache holds beyond it. Where the
    // cache is full, the kept block nearest the request in size is resized
    // to it instead: the fewest pages go back to the system or come fresh.
    if (!block && cacheable && !pool.cache.empty() &&
        pool.liveBytes + rounded + pool.cachedBytes > pool.bound)
      block = takeCached(pool, device, closest(pool, rounded), rounded);
    if (block) {
      evict(pool, device, pool.liveBytes + rounded);
      ++reused;
    } else {
      evict(pool, device, pool.liveBytes + rounded);
      block = system(cacheable ? kPage : alignment, rounded);
      if (!block)
        return nullptr;
      if (cacheable)
        ++fresh;
    }
    live[block] = {rounded, device, cacheable, /*adopted=*/false};
    pool.liveBytes += rounded;
    pool.bound = std::max(pool.bound, pool.liveBytes);
    ftpipe_mem_charge(device, FTPIPE_MEM_GENERATED,
                      static_cast<int64_t>(rounded));
    return block;
  }

  void release(void *block) {
    if (!block)
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto entry = live.find(block);
      if (entry != live.end()) {
        Live info = entry->second;
        live.erase(entry);
        Pool &pool = pools[info.device];
        if (!info.adopted)
          pool.liveBytes -= info.bytes;
        else if (pool.limited)
          pool.bound += info.bytes;
        ftpipe_mem_charge(info.device,
                          info.adopted ? FTPIPE_MEM_RUNTIME
                                       : FTPIPE_MEM_GENERATED,
                          -static_cast<int64_t>(info.bytes));
        if (info.cacheable &&
            pool.liveBytes + pool.cachedBytes + info.bytes <= pool.bound) {
          pool.cache[info.bytes].push_back(block);
          pool.cachedBytes += info.bytes;
          ftpipe_mem_charge(info.device, FTPIPE_MEM_CACHED,
                            static_cast<int64_t>(info.bytes));
          return;
        }
      }
    }
    std::free(block);
  }

  bool adopt(void *block) {
    std::lock_guard<std::mutex> lock(mutex);
    auto entry = live.find(block);
    if (entry == live.end() || entry->second.adopted)
      return false;
    Live &info = entry->second;
    info.adopted = true;
    Pool &pool = pools[info.device];
    pool.liveBytes -= info.bytes;
    if (pool.limited) {
      pool.bound = std::max(pool.liveBytes, pool.bound - info.bytes);
      evict(pool, info.device, pool.liveBytes);
    }
    ftpipe_mem_charge(info.device, FTPIPE_MEM_GENERATED,
                      -static_cast<int64_t>(info.bytes));
    ftpipe_mem_charge(info.device, FTPIPE_MEM_RUNTIME,
                      static_cast<int64_t>(info.bytes));
    return true;
  }

  void stats(int64_t *reusedOut, int64_t *freshOut, int64_t *cachedOut) {
    std::lock_guard<std::mutex> lock(mutex);
    *reusedOut = reused;
    *freshOut = fresh;
    size_t cached = 0;
    for (const auto &entry : pools)
      cached += entry.second.cachedBytes;
    *cachedOut = static_cast<int64_t>(cached);
  }

  void releaseCache() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[device, pool] : pools) {
      evict(pool, device, pool.bound + pool.cachedBytes);
      pool.bound = pool.liveBytes;
      pool.limited = false;
    }
  }

  void limit(size_t bytes) {
    int32_t device = ftpipe_mem_thread_device();
    std::lock_guard<std::mutex> lock(mutex);
    Pool &pool = pools[device];
    pool.limited = true;
    pool.bound = std::max(pool.liveBytes, bytes);
    evict(pool, device, pool.liveBytes);
  }

private:
  struct Live {
    size_t bytes;
    int32_t device;
    bool cacheable;
    /// Kept by the runtime (ftpipe_host_adopt): charged as its bytes, not
    /// among the pool's live ones.
    bool adopted;
  };

  static void *system(size_t alignment, size_t size) {
    // aligned_alloc wants a multiple of the alignment; size 0 gets a block.
    return std::aligned_alloc(alignment, size ? size : alignment);
  }

  /// Takes a block of `kept`'s size out of `pool`'s cache and resizes it to
  /// `rounded` bytes (a shrunk block's slack goes back to the system); null
  /// if the block lost its page alignment or could not grow (then it is
  /// freed). Called with the mutex held.
  static void *takeCached(Pool &pool, int32_t device,
                          std::map<size_t, std::vector<void *>>::iterator kept,
                          size_t rounded) {
    size_t bytes = kept->first;
    void *block = kept->second.back();
    kept->second.pop_back();
    if (kept->second.empty())
      pool.cache.erase(kept);
    pool.cachedBytes -= bytes;
    ftpipe_mem_charge(device, FTPIPE_MEM_CACHED, -static_cast<int64_t>(bytes));
    if (bytes == rounded)
      return block;
    // glibc shrinks a block where it is and grows a large one by mremap:
    // either way the pages it had stay mapped.
    void *resized = std::realloc(block, rounded);
    if (!resized) {
      if (bytes > rounded)
        return block; // Still the larger block: it holds the request.
      std::free(block);
      return nullptr;
    }
    if (reinterpret_cast<uintptr_t>(resized) % kPage == 0)
      return resized;
    std::free(resized);
    return nullptr;
  }

  /// The kept block nearest `rounded` bytes in size. Called with the mutex
  /// held and the cache not empty.
  static std::map<size_t, std::vector<void *>>::iterator
  closest(Pool &pool, size_t rounded) {
    auto above = pool.cache.lower_bound(rounded);
    if (above == pool.cache.begin())
      return above;
    auto below = std::prev(above);
    if (above == pool.cache.end() ||
        rounded - below->first < above->first - rounded)
      return below;
    return above;
  }

  /// Gives back `pool`'s cached bytes, from the largest block, until
  /// `wanted` live bytes fit beside the cache within the bound (or the cache
  /// is empty): a block that keeps at least kCachedFrom bytes is trimmed by
  /// what must go (realloc keeps the pages of the rest), a smaller one
  /// freed. Called with the mutex held.
  static void evict(Pool &pool, int32_t device, size_t wanted) {
    while (!pool.cache.empty() && wanted + pool.cachedBytes > pool.bound) {
      size_t excess = wanted + pool.cachedBytes - pool.bound;
      auto largest = std::prev(pool.cache.end());
      void *block = largest->second.back();
      largest->second.pop_back();
      size_t bytes = largest->first;
      if (largest->second.empty())
        pool.cache.erase(largest);
      pool.cachedBytes -= bytes;
      ftpipe_mem_charge(device, FTPIPE_MEM_CACHED,
                        -static_cast<int64_t>(bytes));
      size_t left = bytes > excess ? (bytes - excess) / kPage * kPage : 0;
      if (left >= kCachedFrom) {
        void *trimmed = std::realloc(block, left);
        if (trimmed && reinterpret_cast<uintptr_t>(trimmed) % kPage == 0) {
          pool.cache[left].push_back(trimmed);
          pool.cachedBytes += left;
          ftpipe_mem_charge(device, FTPIPE_MEM_CACHED,
                            static_cast<int64_t>(left));
          continue;
        }
        block = trimmed ? trimmed : block;
      }
      std::free(block);
    }
  }

  std::mutex mutex;
  std::unordered_map<void *, Live> live;
  /// Per device (the allocating thread's, MemoryLedger.h): devices that
  /// share a process keep their own caches and bounds.
  std::unordered_map<int32_t, Pool> pools;
  int64_t reused = 0, fresh = 0;
};

HostCache &hostCache() {
  // Never destroyed: artifacts may free blocks during static destruction.
  static HostCache *cache = new HostCache;
  return *cache;
}

} // namespace

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return hostCache().allocate(kMinAlignment, size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return hostCache().allocate(alignment, size);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  hostCache().release(ptr);
}

extern "C" int ftpipe_host_adopt(void *block) {
  return hostCache().adopt(block) ? 1 : 0;
}

extern "C" void ftpipe_host_alloc_stats(int64_t *reused, int64_t *fresh,
                                        int64_t *cachedBytes) {
  hostCache().stats(reused, fresh, cachedBytes);
}

extern "C" void ftpipe_host_cache_release(void) { hostCache().releaseCache(); }

extern "C" void ftpipe_host_cache_limit(int64_t bytes) {
  hostCache().limit(bytes > 0 ? static_cast<size_t>(bytes) : 0);
}
