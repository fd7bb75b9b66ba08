//===- ActivationCache.h - The frozen prefix's cached outputs --*- C++ -*-===//
//
// ftpipe-run --activation-cache (docs/Freezing.md, "The activation cache"):
// a stage whose parameters are all frozen, whose producers are all such
// stages, and whose backward does nothing (compiled with them frozen: no
// transfer, no gradient of a trained parameter) computes the same outputs
// for the same samples every time, because the stage IR has no random ops
// and its weights never change. Its forward is a list of sends; the cache
// keeps, per (stage, the micro-batch's first sample), the bytes of the sends
// that leave the cached stages, and when the same samples come again (the
// next epoch) the device sends them instead of running the forward; cached
// stages' backwards are skipped (they do nothing). Entries live in host
// memory up to a bound, the rest in an unnamed file (created without
// following links under a directory the user gives, unlinked at once).
//
// Every device decides hits and stores by the same rule from the same
// numbers (planActivationCache), so a producer and its consumer always agree
// on whether a micro-batch's message is sent: an entry is stored only when
// its samples come again before the run ends, the cache is emptied when the
// plan or the cached stages change (migration, a deeper freeze), and a write
// that fails stops the run. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_ACTIVATIONCACHE_H
#define FTPIPE_RUNTIME_ACTIVATIONCACHE_H

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Runtime/SkippedBackwards.h"
#include "FTPipe/Runtime/Tensor.h"
#include "FTPipe/Schedule/Freezing.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ftpipe {
namespace runtime {

/// A stage whose forward the cache replays.
struct CachedStage {
  int64_t stage = 0, device = 0;
  /// The sends a hit replays: those to stages not cached (a cached
  /// consumer skips its forward too).
  std::set<SendKey> replayed;
  /// Bytes of one micro-batch's replayed sends.
  int64_t bytes = 0;
  /// The planner's time of its forward (ManifestStage::forwardMs), if known.
  std::optional<double> forwardMs;
  /// Per send of its forward, the stage that receives it.
  std::map<SendKey, int64_t> receivers;
};

/// Which stages a run caches from micro-batch `first` to `end` (exclusive),
/// and what it costs and saves. Micro-batch m reads samples (m b + i) mod N,
/// i < b: the same samples come again every `period` = N / gcd(N, b)
/// micro-batches, so a stage stores the first `stores` micro-batches of the
/// window whose samples come again before `end` and replays `replays`.
struct ActivationCachePlan {
  std::vector<CachedStage> stages;
  int64_t samples = 1, microBatchSize = 1, end = 0;
  int64_t period = 0, stores = 0, replays = 0;
  /// Per cached stage, the first micro-batch it is cached from: the plan's
  /// first, or, for a stage a cache kept across a deeper freeze already
  /// held (keepAcrossFreeze), that one's.
  std::map<int64_t, int64_t> since;
  /// Without stages: why none is cached.
  std::string why;
  /// Per cached stage, the sends a hit replays.
  std::map<int64_t, std::set<SendKey>> covered() const;
  /// Bytes all of `device`'s cached stages keep at the most.
  int64_t bytesOn(int64_t device) const;
  /// The planner's forward time the replays save on `device`, in ms (none
  /// when a stage's time is not recorded).
  std::optional<double> savedMsOn(int64_t device) const;
  /// One line for a person: the stages, stores, replays, bytes and time.
  std::string describe() const;
};

/// The stages of `manifest`'s plan that are cached with `frozen` frozen: a
/// stage that does not compute the loss, whose parameters are all in
/// `frozen`, whose backward does not split and has no transfer and returns
/// no gradient of a parameter not in `frozen`, and whose producers are all
/// cached. With
/// `samples` samples of `microBatchSize` per micro-batch, from micro-batch
/// `first` to `end`.
ActivationCachePlan planActivationCache(const ArtifactManifest &manifest,
                                        const std::set<std::string> &frozen,
                                        int64_t samples, int64_t microBatchSize,
                                        int64_t first, int64_t end);

/// What a cache did, for the run's closing lines.
struct ActivationCacheStats {
  /// Forwards of cached stages run (and their entries stored) and replayed.
  int64_t forwards = 0, stored = 0, replayed = 0;
  /// Their thread CPU time: forwards run, replays.
  double forwardCpuSeconds = 0, replayCpuSeconds = 0;
  /// Bytes held now, and the most held: in memory and in the file.
  int64_t memoryBytes = 0, fileBytes = 0, peakMemoryBytes = 0,
          peakFileBytes = 0;
  /// The CPU time the replays saved: as many forwards at the mean CPU time
  /// of those run, less the replays' own.
  double savedCpuSeconds() const;
  std::string describe() const;
};

/// One device's cache: per (stage, first sample) the replayed sends' bytes.
class ActivationCache {
public:
  /// Keeps up to `memoryBytes` in memory and the rest in a file created in
  /// `spillDirectory` when first needed (the system's temporary directory
  /// when empty); `device` names the file.
  ActivationCache(int64_t memoryBytes, std::string spillDirectory,
                  int64_t device);
  ~ActivationCache();
  ActivationCache(const ActivationCache &) = delete;
  ActivationCache &operator=(const ActivationCache &) = delete;

  /// A stage's output for the micro-batch whose first sample is `sample`.
  using Key = std::pair<int64_t, int64_t>;
  struct Message {
    int64_t peer = 0, tag = 0;
    std::vector<char> bytes;
  };
  bool contains(Key key) const { return entries.count(key) != 0; }
  /// Keeps `messages` under `key` (in memory while the bound allows, else in
  /// the file).
  llvm::Error store(Key key, std::vector<Message> messages);
  /// Calls `send` for each message stored under `key`, in order.
  llvm::Error replay(Key key,
                     llvm::function_ref<void(int64_t peer, int64_t tag,
                                             const void *data, size_t bytes)>
                         send);
  /// Forgets every entry (the cached stages' outputs changed).
  void clear();

  ActivationCacheStats &stats() { return counters; }
  const ActivationCacheStats &stats() const { return counters; }

private:
  llvm::Error openFile();
  struct Stored {
    int64_t peer = 0, tag = 0;
    /// In memory, or `size` bytes at `offset` in the file.
    std::vector<char> bytes;
    bool inFile = false;
    int64_t offset = 0, size = 0;
  };
  std::map<Key, std::vector<Stored>> entries;
  int64_t memoryBound;
  std::string directory;
  int64_t device;
  int fd = -1;
  int64_t fileEnd = 0;
  ActivationCacheStats counters;
};

/// How a device's executor uses a cache (DeviceExecutor::setActivationCache).
struct ActivationCacheUse {
  ActivationCache *cache = nullptr;
  /// Per cached stage of this device, the sends a hit replays.
  std::map<int64_t, std::set<SendKey>> stages;
  /// Per cached stage of this device, the receiving stage of each send.
  std::map<int64_t, std::map<SendKey, int64_t>> receivers;
  /// ActivationCachePlan::since, of every device's cached stages.
  std::map<int64_t, int64_t> since;
  int64_t samples = 1, microBatchSize = 1, period = 1, end = 0;
  bool covers(int64_t stage) const { return cache && stages.count(stage); }
  /// Whether a hit of `stage`'s micro-batch `mb` sends the stored message
  /// `send`: its receiver is not cached, or was cached too recently to
  /// hold `mb`'s samples (it runs its forward, which reads the message).
  bool replays(int64_t stage, SendKey send, int64_t mb) const;
  /// The key of `stage`'s micro-batch `mb`.
  ActivationCache::Key key(int64_t stage, int64_t mb) const {
    return {stage, (mb * microBatchSize) % samples};
  }
  /// Whether micro-batch `mb`'s output is read again before the run ends.
  bool readAgain(int64_t mb) const { return mb + period < end; }
};

class PipelineModel;

/// planActivationCache for `model` (nothing for a model that is not
/// compiled artifacts) on `data`, from update `updates` to update `steps`
/// of `microBatches` micro-batches.
ActivationCachePlan
planActivationCache(const PipelineModel &model,
                    const std::set<std::string> &frozen,
                    const std::map<std::string, Tensor> &data, int64_t updates,
                    int64_t steps, int64_t microBatches);

/// Whether a cache filled under a plan whose cached stages began at
/// `since` goes on under `plan`, the same compiled plan with a frozen set
/// that grew (no re-compile): every stage cached before is still cached
/// (and, when the run compiles again as it freezes more, never: the next
/// plan empties the cache). Then `plan.since` keeps their first
/// micro-batches: a stage cached from micro-batch s holds the outputs of
/// micro-batches from s + period on, so every device knows, for each
/// message a hit of a producer stored before its consumer was cached,
/// whether the consumer still runs its forward and needs it
/// (ActivationCacheUse::replays).
bool keepAcrossFreeze(ActivationCachePlan &plan,
                      const std::map<int64_t, int64_t> &since);

/// The step up to which a cache filled at step `step` is read: `steps` (the
/// run's end), or, when the run compiles the model again as it freezes more
/// (--freeze-recompile, which moves to another plan and empties the cache),
/// the first step after `step` whose depth in `depths` (a policy known in
/// advance) differs from `step`'s: outputs not read again before then are
/// not stored.
int64_t cacheHorizon(const schedule::FreezeSchedule *depths, int64_t step,
                     int64_t steps);

/// `plan`'s use on `device` with `cache`.
ActivationCacheUse useOn(const ActivationCachePlan &plan, int64_t device,
                         ActivationCache *cache);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_ACTIVATIONCACHE_H
