//===- HostAllocator.cpp - Buffers of generated CPU code ------------------===//
//
// The allocation functions of CPU artifacts (HostAllocator.h): blocks of at
// least kCachedFrom bytes are rounded up to whole pages and, once freed, kept
// in a free list per rounded size; smaller blocks go straight to the system.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/HostAllocator.h"

#include <cstdlib>
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
    if (size < kCachedFrom || alignment > kPage)
      return system(alignment, size);
    size_t rounded = (size + kPage - 1) / kPage * kPage;
    std::lock_guard<std::mutex> lock(mutex);
    void *block = nullptr;
    auto free = cache.find(rounded);
    if (free != cache.end() && !free->second.empty()) {
      block = free->second.back();
      free->second.pop_back();
      cachedBytes -= rounded;
      ++reused;
    } else {
      block = system(kPage, rounded);
      if (!block)
        return nullptr;
      ++fresh;
    }
    live[block] = rounded;
    liveBytes += rounded;
    if (liveBytes > peakLiveBytes)
      peakLiveBytes = liveBytes;
    return block;
  }

  void release(void *block) {
    if (!block)
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto entry = live.find(block);
      if (entry != live.end()) {
        size_t rounded = entry->second;
        live.erase(entry);
        liveBytes -= rounded;
        if (cachedBytes + rounded <= peakLiveBytes) {
          cache[rounded].push_back(block);
          cachedBytes += rounded;
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
    for (auto &[size, blocks] : cache)
      for (void *block : blocks)
        std::free(block);
    cache.clear();
    cachedBytes = 0;
    peakLiveBytes = liveBytes;
  }

private:
  static void *system(size_t alignment, size_t size) {
    // aligned_alloc wants a multiple of the alignment; size 0 gets a block.
    size_t bytes = (size + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, bytes ? bytes : alignment);
  }

  std::mutex mutex;
  std::unordered_map<void *, size_t> live;
  std::unordered_map<size_t, std::vector<void *>> cache;
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
