//===- ExecutorActivationCache.cpp - Forwards the activation cache replays ===//
//
// The executor's side of ftpipe-run --activation-cache (ActivationCache.h):
// the forward of a stage the cache covers either sends what the cache holds
// for the micro-batch's samples, or runs with a transport that records the
// sends a hit will replay (those to stages not cached) and stores them when
// the samples come again before the run ends. It keeps nothing for a
// backward: a cached stage's backward does nothing and is skipped.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Support/ThreadCpuTime.h"

using namespace ftpipe::runtime;
using ftpipe::support::threadCpuSeconds;

namespace {
/// The stage code's transport during a cached stage's forward: passes
/// everything on and keeps a copy of the sends in `replayed`.
class RecordingTransport : public Transport {
public:
  RecordingTransport(Transport &inner, const std::set<SendKey> &replayed)
      : inner(inner), replayed(replayed) {}
  int64_t device() const override { return inner.device(); }
  void send(int64_t peer, int64_t tag, int64_t microbatch, const void *data,
            size_t bytes) override {
    if (replayed.count({peer, tag})) {
      const char *begin = static_cast<const char *>(data);
      messages.push_back({peer, tag, std::vector<char>(begin, begin + bytes)});
    }
    inner.send(peer, tag, microbatch, data, bytes);
  }
  void recv(int64_t peer, int64_t tag, int64_t microbatch, void *data,
            size_t bytes) override {
    inner.recv(peer, tag, microbatch, data, bytes);
  }
  std::vector<ActivationCache::Message> messages;

private:
  Transport &inner;
  const std::set<SendKey> &replayed;
};
} // namespace

llvm::Error DeviceExecutor::cachedForward(StageProgram &stage, int64_t mb) {
  ActivationCache &cache = *activationCache.cache;
  ActivationCacheStats &stats = cache.stats();
  ActivationCache::Key key = activationCache.key(stage.stage(), mb);
  Transport &transport = *timedTransport();
  double cpuStart = threadCpuSeconds();
  llvm::Error error = llvm::Error::success();
  if (cache.contains(key)) {
    timed([&] {
      error = cache.replay(
          key, [&](int64_t peer, int64_t tag, const void *data, size_t bytes) {
            if (activationCache.replays(stage.stage(), {peer, tag}, mb))
              transport.send(peer, tag, mb, data, bytes);
          });
    });
    stats.replayCpuSeconds += threadCpuSeconds() - cpuStart;
    return error;
  }
  // Recorded only when the samples come again before the run ends.
  bool storing = activationCache.readAgain(mb);
  static const std::set<SendKey> none;
  RecordingTransport recorder(
      transport, storing ? activationCache.stages.at(stage.stage()) : none);
  std::vector<Tensor> storage;
  std::vector<const Tensor *> data = dataOf(stage, mb, storage);
  setThreadTransport(&recorder);
  timed([&] { stage.forward(mb, paramsOf(stage, live), data); });
  setThreadTransport(&transport);
  stats.forwardCpuSeconds += threadCpuSeconds() - cpuStart;
  ++stats.forwards;
  if (!storing)
    return llvm::Error::success();
  return cache.store(key, std::move(recorder.messages));
}
