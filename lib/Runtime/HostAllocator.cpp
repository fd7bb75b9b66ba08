//===- HostAllocator.cpp - Buffers of generated CPU code ------------------===//
//
// The allocation functions of CPU artifacts (HostAllocator.h): blocks of at
// least kCachedFrom bytes are rounded up to whole pages and, once freed, kept
// in a free list per rounded size; smaller blocks go straight to the system
// (and back). Every block is in the live table, for the ledger's charges.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/HostAllocator.h"
#include "FTPipe/Runtime/MemoryLedger.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kCachedFrom = size_t(1) << 20;
constexpr size_t kPage = 4096;
// Every block is aligned at least this much (AVX-512 vectors, cache lines).
constexpr size_t kMinAlignment = 64;

class HostCache {
public:
  void *allocate(size_t alignment, size_t size) {
    alignment = alignment < kMinAlignment ? kMinAlignment : alignment;
    int32_t device = ftpipe_mem_thread_device();
    bool cacheable = size >= kCachedFrom && alignment <= kPage;
    size_t rounded = cacheable ? (size + kPage - 1) / kPage * kPage
                               : (size + alignment - 1) / alignment * alignment;
    std::lock_guard<std::mutex> lock(mutex);
    void *block = nullptr;
    auto free = cacheable ? cache.find(rounded) : cache.end();
    if (free != cache.end()) {
      Cached entry = free->second.back();
      free->second.pop_back();
      if (free->second.empty())
        cache.erase(free);
      block = entry.block;
      cachedBytes -= rounded;
      ftpipe_mem_charge(entry.device, FTPIPE_MEM_CACHED,
                        -static_cast<int64_t>(rounded));
      ++reused;
    } else {
      // Live and cached bytes together stay within the largest live total:
      // a fresh block first evicts what the cache holds beyond it.
      evict(liveBytes + rounded);
      block = system(cacheable ? kPage : alignment, rounded);
      if (!block)
        return nullptr;
      if (cacheable)
        ++fresh;
    }
    live[block] = {rounded, device, cacheable};
    liveBytes += rounded;
    if (liveBytes > peakLiveBytes)
      peakLiveBytes = liveBytes;
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
        liveBytes -= info.bytes;
        ftpipe_mem_charge(info.device, FTPIPE_MEM_GENERATED,
                          -static_cast<int64_t>(info.bytes));
        if (info.cacheable &&
            liveBytes + cachedBytes + info.bytes <= peakLiveBytes) {
          cache[info.bytes].push_back({block, info.device});
          cachedBytes += info.bytes;
          ftpipe_mem_charge(info.device, FTPIPE_MEM_CACHED,
                            static_cast<int64_t>(info.bytes));
          return;
        }
      }
    }
    std::free(block);
  }

  void stats(int64_t *reusedOut, int64_t *freshOut, int64_t *cachedOut) {
    std::lock_guard<std::mutex> lock(mutex);
    *reusedOut = reused;
    *freshOut = fresh;
    *cachedOut = static_cast<int64_t>(cachedBytes);
  }

  void releaseCache() {
    std::lock_guard<std::mutex> lock(mutex);
    evict(peakLiveBytes + cachedBytes);
    peakLiveBytes = liveBytes;
  }

private:
  struct Live {
    size_t bytes;
    int32_t device;
    bool cacheable;
  };
  struct Cached {
    void *block;
    int32_t device;
  };

  static void *system(size_t alignment, size_t size) {
    // aligned_alloc wants a multiple of the alignment; size 0 gets a block.
    return std::aligned_alloc(alignment, size ? size : alignment);
  }

  /// Frees cached blocks, largest first, until `wanted` live bytes fit
  /// beside the cache within the peak (or the cache is empty). Called with
  /// the mutex held.
  void evict(size_t wanted) {
    while (!cache.empty() && wanted + cachedBytes > peakLiveBytes) {
      auto largest = std::prev(cache.end());
      Cached entry = largest->second.back();
      largest->second.pop_back();
      size_t bytes = largest->first;
      if (largest->second.empty())
        cache.erase(largest);
      cachedBytes -= bytes;
      ftpipe_mem_charge(entry.device, FTPIPE_MEM_CACHED,
                        -static_cast<int64_t>(bytes));
      std::free(entry.block);
    }
  }

  std::mutex mutex;
  std::unordered_map<void *, Live> live;
  std::map<size_t, std::vector<Cached>> cache;
  size_t liveBytes = 0, peakLiveBytes = 0, cachedBytes = 0;
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

extern "C" void ftpipe_host_alloc_stats(int64_t *reused, int64_t *fresh,
                                        int64_t *cachedBytes) {
  hostCache().stats(reused, fresh, cachedBytes);
}

extern "C" void ftpipe_host_cache_release(void) { hostCache().releaseCache(); }
