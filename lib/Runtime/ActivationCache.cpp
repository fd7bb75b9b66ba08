//===- ActivationCache.cpp - The frozen prefix's outputs across epochs ----===//
//
// Which stages a run caches (planActivationCache, from the manifest and the
// frozen set) and one device's store of their replayed sends, in memory up
// to a bound and then in an unnamed file (ActivationCache.h).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ActivationCache.h"
#include "FTPipe/Runtime/CompiledModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <numeric>
#include <unistd.h>

using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static int64_t bytesOf(const ManifestTensor &tensor) {
  int64_t elements = 1;
  for (int64_t size : tensor.shape)
    elements *= size;
  return elements * static_cast<int64_t>(dtypeBytes(tensor.type));
}

ActivationCachePlan ftpipe::runtime::planActivationCache(
    const ArtifactManifest &manifest, const std::set<std::string> &frozen,
    int64_t samples, int64_t microBatchSize, int64_t first, int64_t end) {
  ActivationCachePlan plan;
  plan.samples = samples;
  plan.microBatchSize = microBatchSize;
  plan.end = end;
  plan.period = samples / std::gcd(samples, microBatchSize);
  int64_t window = std::max<int64_t>(0, end - first);
  plan.replays = std::max<int64_t>(0, window - plan.period);
  plan.stores = std::min(plan.period, plan.replays);
  // The stages whose backward the run skips (SkippedBackwards.h): their
  // forwards keep nothing for a backward.
  std::set<int64_t> cached = frozenClosure(manifest, frozen);
  // The receiving stage of each forward message: (from, to, tag) -> stage.
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> receiver;
  for (const ManifestStage &stage : manifest.stages)
    for (const ManifestTransfer &transfer :
         manifest.entryPoints.at(stage.forward).transfers)
      if (!transfer.send)
        receiver[{transfer.peer, stage.device, transfer.tag}] = stage.id;
  for (int64_t s : manifest.stageOrder) {
    if (!cached.count(s))
      continue;
    const ManifestStage &stage = manifest.stages[s];
    CachedStage entry;
    entry.stage = s;
    entry.device = stage.device;
    entry.forwardMs = stage.forwardMs;
    for (const ManifestTransfer &transfer :
         manifest.entryPoints.at(stage.forward).transfers) {
      auto to = receiver.find({stage.device, transfer.peer, transfer.tag});
      if (transfer.send && to != receiver.end())
        entry.receivers[{transfer.peer, transfer.tag}] = to->second;
      if (!transfer.send || (to != receiver.end() && cached.count(to->second)))
        continue;
      entry.replayed.insert({transfer.peer, transfer.tag});
      entry.bytes += bytesOf(transfer.tensor);
    }
    plan.stages.push_back(std::move(entry));
    plan.since[s] = first;
  }
  if (plan.stages.empty())
    plan.why = "no stage has only frozen parameters and frozen producers";
  else if (plan.replays == 0)
    // The stages stay covered: they store nothing, and a cache kept across
    // a deeper freeze (keepAcrossFreeze) still replays what it holds.
    plan.why = llvm::formatv("no samples come again before the run ends (a "
                             "micro-batch's samples come again every {0} "
                             "micro-batches, {1} are left)",
                             plan.period, window);
  return plan;
}

bool ftpipe::runtime::keepAcrossFreeze(
    ActivationCachePlan &plan, const std::map<int64_t, int64_t> &since) {
  if (!llvm::all_of(since, [&](const auto &entry) {
        return plan.since.count(entry.first) != 0;
      }))
    return false;
  for (const auto &[stage, first] : since)
    plan.since[stage] = first;
  return true;
}

bool ActivationCacheUse::replays(int64_t stage, SendKey send,
                                 int64_t mb) const {
  auto to = receivers.at(stage).find(send);
  if (to == receivers.at(stage).end())
    return true;
  auto cachedFrom = since.find(to->second);
  return cachedFrom == since.end() || mb < cachedFrom->second + period;
}

ActivationCachePlan ftpipe::runtime::planActivationCache(
    const PipelineModel &model, const std::set<std::string> &frozen,
    const std::map<std::string, Tensor> &data, int64_t updates, int64_t steps,
    int64_t microBatches) {
  auto *compiled = dynamic_cast<const CompiledModel *>(&model);
  if (!compiled || data.empty()) {
    ActivationCachePlan plan;
    plan.why = "the model is not compiled artifacts";
    return plan;
  }
  return planActivationCache(
      compiled->manifest(), frozen, data.begin()->second.shape.front(),
      model.microBatchSize(), updates * microBatches, steps * microBatches);
}

std::map<int64_t, std::set<SendKey>> ActivationCachePlan::covered() const {
  std::map<int64_t, std::set<SendKey>> result;
  for (const CachedStage &stage : stages)
    result[stage.stage] = stage.replayed;
  return result;
}

int64_t ftpipe::runtime::cacheHorizon(const schedule::FreezeSchedule *depths,
                                      int64_t step, int64_t steps) {
  if (depths)
    for (int64_t later = step + 1; later < steps; ++later)
      if (depths->depthAt(later) != depths->depthAt(step))
        return later;
  return steps;
}

int64_t ActivationCachePlan::bytesOn(int64_t device) const {
  int64_t bytes = 0;
  for (const CachedStage &stage : stages)
    if (stage.device == device)
      bytes += stage.bytes * stores;
  return bytes;
}

std::optional<double> ActivationCachePlan::savedMsOn(int64_t device) const {
  double ms = 0;
  for (const CachedStage &stage : stages) {
    if (stage.device != device)
      continue;
    if (!stage.forwardMs)
      return std::nullopt;
    ms += *stage.forwardMs * replays;
  }
  return ms;
}

std::string ActivationCachePlan::describe() const {
  if (stages.empty() || replays == 0)
    return "activation cache: nothing cached: " + why;
  std::string list, bytes, saved;
  std::set<int64_t> devices;
  for (const CachedStage &stage : stages) {
    list += (list.empty() ? "" : ", ") +
            llvm::formatv("{0} (device {1})", stage.stage, stage.device).str();
    devices.insert(stage.device);
  }
  for (int64_t device : devices) {
    bytes +=
        (bytes.empty() ? "" : ", ") +
        llvm::formatv("{0:f2} MB on device {1}", bytesOn(device) / 1e6, device)
            .str();
    if (std::optional<double> ms = savedMsOn(device))
      saved += (saved.empty() ? "" : ", ") +
               llvm::formatv("{0:f1} ms on device {1}", *ms, device).str();
  }
  return llvm::formatv("activation cache: stages {0}: {1} micro-batches "
                       "stored, {2} replayed (samples come again every {3} "
                       "micro-batches); holds {4}; planned forward time "
                       "saved {5}",
                       list, stores, replays, period, bytes,
                       saved.empty() ? "unknown" : saved)
      .str();
}

double ActivationCacheStats::savedCpuSeconds() const {
  if (forwards == 0)
    return 0;
  return replayed * (forwardCpuSeconds / forwards) - replayCpuSeconds;
}

std::string ActivationCacheStats::describe() const {
  return llvm::formatv("activation cache: {0} forwards run ({1} stored), {2} "
                       "replayed; CPU {3:f3} s in forwards, {4:f3} s in "
                       "replays, {5:f3} s saved; held at most {6:f2} MB in "
                       "memory and {7:f2} MB in the file",
                       forwards, stored, replayed, forwardCpuSeconds,
                       replayCpuSeconds, savedCpuSeconds(),
                       peakMemoryBytes / 1e6, peakFileBytes / 1e6)
      .str();
}

ActivationCache::ActivationCache(int64_t memoryBytes,
                                 std::string spillDirectory, int64_t device)
    : memoryBound(memoryBytes), directory(std::move(spillDirectory)),
      device(device) {}

ActivationCache::~ActivationCache() {
  if (fd >= 0)
    ::close(fd);
}

llvm::Error ActivationCache::openFile() {
  llvm::SmallString<256> dir(directory);
  if (dir.empty())
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0)
    return fail(llvm::Twine(dir) + ": " + std::strerror(errno));
  std::string name = llvm::formatv("ftpipe-activation-cache-{0}-device{1}",
                                   ::getpid(), device);
  // A fresh file: never a link planted at the name, never an existing file.
  fd = ::openat(dirFd, name.c_str(),
                O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  int error = errno;
  if (fd >= 0)
    ::unlinkat(dirFd, name.c_str(), 0);
  ::close(dirFd);
  if (fd < 0)
    return fail(llvm::Twine(dir) + "/" + name + ": " + std::strerror(error));
  return llvm::Error::success();
}

llvm::Error ActivationCache::store(Key key, std::vector<Message> messages) {
  std::vector<Stored> stored;
  for (Message &message : messages) {
    Stored entry;
    entry.peer = message.peer;
    entry.tag = message.tag;
    entry.size = static_cast<int64_t>(message.bytes.size());
    if (counters.memoryBytes + entry.size <= memoryBound) {
      entry.bytes = std::move(message.bytes);
      counters.memoryBytes += entry.size;
    } else {
      if (fd < 0)
        if (llvm::Error error = openFile())
          return error;
      const char *data = message.bytes.data();
      int64_t left = entry.size, at = fileEnd;
      while (left > 0) {
        ssize_t wrote = ::pwrite(fd, data, left, at);
        if (wrote < 0 && errno == EINTR)
          continue;
        if (wrote <= 0)
          return fail("the activation cache's file: " +
                      llvm::Twine(std::strerror(errno)));
        data += wrote;
        left -= wrote;
        at += wrote;
      }
      entry.inFile = true;
      entry.offset = fileEnd;
      fileEnd += entry.size;
      counters.fileBytes += entry.size;
    }
    stored.push_back(std::move(entry));
  }
  counters.peakMemoryBytes =
      std::max(counters.peakMemoryBytes, counters.memoryBytes);
  counters.peakFileBytes = std::max(counters.peakFileBytes, counters.fileBytes);
  ++counters.stored;
  entries[key] = std::move(stored);
  return llvm::Error::success();
}

llvm::Error ActivationCache::replay(
    Key key,
    llvm::function_ref<void(int64_t, int64_t, const void *, size_t)> send) {
  auto it = entries.find(key);
  if (it == entries.end())
    return fail(llvm::formatv("the activation cache holds nothing for stage "
                              "{0}, sample {1}",
                              key.first, key.second));
  std::vector<char> buffer;
  for (const Stored &entry : it->second) {
    if (!entry.inFile) {
      send(entry.peer, entry.tag, entry.bytes.data(), entry.bytes.size());
      continue;
    }
    buffer.resize(entry.size);
    int64_t done = 0;
    while (done < entry.size) {
      ssize_t got = ::pread(fd, buffer.data() + done, entry.size - done,
                            entry.offset + done);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return fail("the activation cache's file: " +
                    llvm::Twine(got < 0 ? std::strerror(errno)
                                        : "shorter than written"));
      done += got;
    }
    send(entry.peer, entry.tag, buffer.data(), buffer.size());
  }
  ++counters.replayed;
  return llvm::Error::success();
}

void ActivationCache::clear() {
  entries.clear();
  counters.memoryBytes = 0;
  counters.fileBytes = 0;
  fileEnd = 0;
  if (fd >= 0 && ::ftruncate(fd, 0) != 0) {
    // A file that cannot shrink is dropped: the next store opens another.
    ::close(fd);
    fd = -1;
  }
}

ActivationCacheUse ftpipe::runtime::useOn(const ActivationCachePlan &plan,
                                          int64_t device,
                                          ActivationCache *cache) {
  ActivationCacheUse use;
  use.samples = plan.samples;
  use.microBatchSize = plan.microBatchSize;
  use.period = plan.period;
  use.end = plan.end;
  use.since = plan.since;
  for (const CachedStage &stage : plan.stages)
    if (stage.device == device) {
      use.stages[stage.stage] = stage.replayed;
      use.receivers[stage.stage] = stage.receivers;
    }
  if (!use.stages.empty())
    use.cache = cache;
  return use;
}
