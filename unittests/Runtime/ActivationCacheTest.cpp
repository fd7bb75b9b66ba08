//===- ActivationCacheTest.cpp - The frozen prefix's cached outputs -------===//
//
// planSkippedBackwards and planActivationCache on hand-made manifests (which
// stages' backwards are skipped and which sends to them dropped, which stages
// are cached, which of their sends a hit replays, how many micro-batches are
// stored and replayed), the keys of micro-batches, ActivationCache's store
// and replay in memory and in its file, and priceFreezeRecompile (whether
// compiling again pays once those backwards are skipped). The run with MPI
// processes against Hugging Face is test/Reference/train-activation-cache.test.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/ActivationCache.h"
#include "FTPipe/Runtime/FreezeRecompile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;

namespace {

ManifestTransfer transfer(bool send, int64_t peer, int64_t tag,
                          std::vector<int64_t> shape) {
  ManifestTransfer result;
  result.send = send;
  result.peer = peer;
  result.tag = tag;
  result.tensor.shape = std::move(shape);
  return result;
}

/// A chain of four stages, stage s on device s with parameter "p<s>",
/// forward messages of 2x8 floats (tag 2s to s+1), and a skip message of
/// 4 floats from stage 0 to stage 2 (tag 10); the last stage computes the
/// loss. Stages in `compiledFrozen` have a backward with no transfer and no
/// gradient; the others receive and send gradients and return their
/// parameter's.
ArtifactManifest chain(const std::set<int64_t> &compiledFrozen) {
  ArtifactManifest manifest;
  manifest.artifacts = {"d0", "d1", "d2", "d3"};
  manifest.lossStage = 3;
  for (int64_t s = 0; s < 4; ++s) {
    ManifestStage stage;
    stage.id = s;
    stage.device = s;
    stage.forward = "f" + std::to_string(s);
    stage.backward = "b" + std::to_string(s);
    stage.forwardMs = 1.5;
    EntryPoint forward, backward;
    forward.name = stage.forward;
    backward.name = stage.backward;
    forward.stage = backward.stage = s;
    forward.device = backward.device = s;
    backward.backward = true;
    EntryValue param;
    param.kind = EntryValue::Kind::Param;
    param.name = "p" + std::to_string(s);
    forward.arguments.push_back(param);
    if (s > 0)
      forward.transfers.push_back(transfer(false, s - 1, 2 * (s - 1), {2, 8}));
    if (s < 3)
      forward.transfers.push_back(transfer(true, s + 1, 2 * s, {2, 8}));
    if (s == 0)
      forward.transfers.push_back(transfer(true, 2, 10, {4}));
    if (s == 2)
      forward.transfers.push_back(transfer(false, 0, 10, {4}));
    if (!compiledFrozen.count(s)) {
      if (s < 3)
        backward.transfers.push_back(transfer(false, s + 1, 2 * s + 1, {2, 8}));
      if (s > 0)
        backward.transfers.push_back(
            transfer(true, s - 1, 2 * (s - 1) + 1, {2, 8}));
      EntryValue grad = param;
      grad.kind = EntryValue::Kind::Grad;
      backward.results.push_back(grad);
    }
    manifest.entryPoints[forward.name] = forward;
    manifest.entryPoints[backward.name] = backward;
    manifest.stages.push_back(stage);
    manifest.stageOrder.push_back(s);
    ManifestParameter parameter;
    parameter.devices = {s};
    parameter.frozen = compiledFrozen.count(s) != 0;
    manifest.parameters[param.name] = parameter;
  }
  return manifest;
}

TEST(ActivationCachePlan, CachesTheFrozenStageCompiledFrozen) {
  ActivationCachePlan plan =
      planActivationCache(chain({0}), {"p0"}, 24, 2, 0, 48);
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0].stage, 0);
  EXPECT_EQ(plan.stages[0].replayed, (std::set<SendKey>{{1, 0}, {2, 10}}));
  EXPECT_EQ(plan.stages[0].bytes, (16 + 4) * 4);
  // 24 samples, 2 a micro-batch: the same samples every 12 micro-batches.
  EXPECT_EQ(plan.period, 12);
  EXPECT_EQ(plan.stores, 12);
  EXPECT_EQ(plan.replays, 36);
  EXPECT_EQ(plan.bytesOn(0), 12 * 80);
  EXPECT_EQ(plan.bytesOn(1), 0);
  EXPECT_EQ(plan.savedMsOn(0), 36 * 1.5);
}

TEST(SkippedBackwards, TheFrozenOnlyClosure) {
  // p0 and p1 frozen by the run in code that still differentiates them:
  // stages 0 and 1 skip their backwards, stage 2 does not send stage 1 its
  // input gradient (tag 3).
  SkippedBackwards skipped = planSkippedBackwards(chain({}), {"p0", "p1"}, 8);
  EXPECT_EQ(skipped.stages, (std::set<int64_t>{0, 1}));
  EXPECT_EQ(skipped.droppedSends,
            (std::map<int64_t, std::set<SendKey>>{{2, {{1, 3}}}}));
  // From micro-batch 8 on, decided by the micro-batch on every device.
  EXPECT_FALSE(skipped.skips(0, 7));
  EXPECT_TRUE(skipped.skips(0, 8));
  EXPECT_FALSE(skipped.skips(2, 8));
  EXPECT_EQ(skipped.dropped(2, 7), nullptr);
  ASSERT_NE(skipped.dropped(2, 8), nullptr);
  EXPECT_EQ(skipped.dropped(1, 8), nullptr);
  // Compiled frozen: nothing to drop (stage 1 sends stage 0 nothing).
  skipped = planSkippedBackwards(chain({0}), {"p0"}, 0);
  EXPECT_EQ(skipped.stages, (std::set<int64_t>{0}));
  EXPECT_TRUE(skipped.droppedSends.empty());
  // A frozen stage after a trained one, the loss stage, or nothing frozen:
  // no skip.
  EXPECT_TRUE(planSkippedBackwards(chain({}), {"p1"}, 0).stages.empty());
  EXPECT_EQ(planSkippedBackwards(chain({}), {"p0", "p1", "p2", "p3"}, 0).stages,
            (std::set<int64_t>{0, 1, 2}));
  EXPECT_TRUE(planSkippedBackwards(chain({}), {}, 0).stages.empty());
  EXPECT_NE(planSkippedBackwards(chain({}), {"p0", "p1"}, 12)
                .describe(3)
                .find("from step 3, the backwards of stages 0, 1 are skipped"),
            std::string::npos);
}

TEST(ActivationCachePlan, CachesAStageFrozenOnlyDuringTheRun) {
  // p0 frozen by the run, but the code still computes and sends gradients:
  // its backward is skipped (SkippedBackwards.h), so it is cached.
  ActivationCachePlan plan =
      planActivationCache(chain({}), {"p0"}, 24, 2, 0, 48);
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0].replayed, (std::set<SendKey>{{1, 0}, {2, 10}}));
  // A parameter frozen in the code but trained by the run is not cached
  // (the executor would refuse such a plan anyway).
  plan = planActivationCache(chain({0}), {}, 24, 2, 0, 48);
  EXPECT_TRUE(plan.stages.empty());
  EXPECT_NE(plan.why.find("no stage has only frozen parameters"),
            std::string::npos);
}

TEST(ActivationCachePlan, ReplaysOnlyWhatLeavesTheCachedStages) {
  ActivationCachePlan plan =
      planActivationCache(chain({0, 1}), {"p0", "p1"}, 24, 2, 0, 48);
  ASSERT_EQ(plan.stages.size(), 2u);
  // Stage 0's message to stage 1 is not sent on a hit: stage 1 is cached.
  EXPECT_EQ(plan.stages[0].replayed, (std::set<SendKey>{{2, 10}}));
  EXPECT_EQ(plan.stages[1].replayed, (std::set<SendKey>{{2, 2}}));
  EXPECT_EQ(plan.covered().size(), 2u);
}

TEST(ActivationCachePlan, KeptAcrossADeeperFreeze) {
  // Stage 0 cached from micro-batch 8; the run freezes p1 from micro-batch
  // 20 under the same plan: stage 0 keeps its start, stage 1 starts at 20.
  ActivationCachePlan before =
      planActivationCache(chain({}), {"p0"}, 24, 2, 8, 48);
  EXPECT_EQ(before.since, (std::map<int64_t, int64_t>{{0, 8}}));
  ActivationCachePlan plan =
      planActivationCache(chain({}), {"p0", "p1"}, 24, 2, 20, 48);
  ASSERT_TRUE(keepAcrossFreeze(plan, before.since));
  EXPECT_EQ(plan.since, (std::map<int64_t, int64_t>{{0, 8}, {1, 20}}));
  ActivationCache cache(0, "", 0);
  ActivationCacheUse use = useOn(plan, 0, &cache);
  // Stage 0's stored message to stage 1 (tag 0) is sent while stage 1 runs
  // its forward (it holds micro-batches from 20 + 12 on), then not; its
  // message to stage 2 (not cached) always.
  EXPECT_TRUE(use.replays(0, {1, 0}, 31));
  EXPECT_FALSE(use.replays(0, {1, 0}, 32));
  EXPECT_TRUE(use.replays(0, {2, 10}, 40));
  // A stage cached before and not now: the cache cannot go on.
  ActivationCachePlan shallower =
      planActivationCache(chain({}), {"p0"}, 24, 2, 20, 48);
  EXPECT_FALSE(keepAcrossFreeze(shallower, plan.since));
}

TEST(FreezeRecompilePrice, AgainstTheLastCompile) {
  // The chain, 1.5 ms forwards and 3 ms backwards, stage 0 frozen (its
  // backward skipped): 4 x 1.5 + 3 x 3 = 15 ms of work a micro-batch, 60 a
  // step of 4; at best 15 ms a step on 4 devices, 30 on 2 cores.
  ArtifactManifest manifest = chain({});
  for (ManifestStage &stage : manifest.stages)
    stage.backwardMs = 3.0;
  ftpipe::schedule::ScheduleConfig config;
  config.kind = ftpipe::schedule::Kind::OneFOneB;
  config.microBatches = 4;
  RecompilePrice price =
      priceFreezeRecompile(manifest, config, {"p0"}, 100, std::nullopt, 4, 8);
  EXPECT_TRUE(price.pays);
  EXPECT_EQ(price.why, "no compile measured yet");
  price = priceFreezeRecompile(manifest, config, {"p0"}, 100, 1.0, 4, 8);
  EXPECT_TRUE(price.pays) << price.why;
  EXPECT_NE(price.why.find("a re-compile at best 15.000 ms (60.000 ms of "
                           "work over 4 devices)"),
            std::string::npos)
      << price.why;
  // Fewer steps left: the same saving a step, not enough in all.
  EXPECT_FALSE(
      priceFreezeRecompile(manifest, config, {"p0"}, 1, 1.0, 4, 8).pays);
  // On 2 cores the devices' idle time is the others' compute: at best the
  // work over the cores, which the running plan is close to.
  price = priceFreezeRecompile(manifest, config, {"p0"}, 100, 1.0, 4, 2);
  EXPECT_FALSE(price.pays) << price.why;
  EXPECT_NE(price.why.find("at best 30.000 ms (60.000 ms of work over 2 "
                           "cores)"),
            std::string::npos)
      << price.why;
}

TEST(ActivationCachePlan, NeedsFrozenProducers) {
  // Stage 1 compiled frozen, but its producer stage 0 trains.
  ActivationCachePlan plan =
      planActivationCache(chain({1}), {"p1"}, 24, 2, 0, 48);
  EXPECT_TRUE(plan.stages.empty());
  // A stage whose backward splits (zero-bubble I and W) is cached too: its
  // I and W are skipped.
  ArtifactManifest split = chain({0});
  split.stages[0].backwardInput = "bi0";
  EXPECT_EQ(planActivationCache(split, {"p0"}, 24, 2, 0, 48).stages.size(), 1u);
  // The loss stage is never cached.
  plan = planActivationCache(chain({0, 1, 2, 3}), {"p0", "p1", "p2", "p3"}, 24,
                             2, 0, 48);
  EXPECT_EQ(plan.covered().count(3), 0u);
  EXPECT_EQ(plan.stages.size(), 3u);
}

TEST(ActivationCachePlan, StoresOnlyWhatIsReadAgain) {
  // From micro-batch 16 to 48 (a migration after step 4 of 12, 4 a step).
  ActivationCachePlan plan =
      planActivationCache(chain({0}), {"p0"}, 24, 2, 16, 48);
  EXPECT_EQ(plan.stores, 12);
  EXPECT_EQ(plan.replays, 20);
  // 10 samples, 4 a micro-batch: the same 4 samples every 5 micro-batches
  // (gcd 2); a run of 4 micro-batches reads none twice: nothing is stored
  // (the stage stays covered, for a cache kept across a deeper freeze).
  plan = planActivationCache(chain({0}), {"p0"}, 10, 4, 0, 4);
  EXPECT_EQ(plan.period, 5);
  EXPECT_EQ(plan.stores, 0);
  EXPECT_EQ(plan.replays, 0);
  EXPECT_EQ(plan.stages.size(), 1u);
  EXPECT_NE(plan.describe().find("nothing cached: no samples come again"),
            std::string::npos);
  ActivationCache unused(0, "", 0);
  EXPECT_FALSE(useOn(plan, 0, &unused).readAgain(0));
  plan = planActivationCache(chain({0}), {"p0"}, 10, 4, 0, 7);
  EXPECT_EQ(plan.stores, 2);
  EXPECT_EQ(plan.replays, 2);
  ActivationCache cache(0, "", 0);
  ActivationCacheUse use = useOn(plan, 0, &cache);
  EXPECT_TRUE(use.covers(0));
  EXPECT_FALSE(useOn(plan, 1, &cache).covers(1));
  // Micro-batch m starts at sample 4m mod 10: 0 4 8 2 6, then again.
  for (int64_t mb = 0; mb < 5; ++mb) {
    EXPECT_EQ(use.key(0, mb).second, (4 * mb) % 10);
    EXPECT_EQ(use.key(0, mb), use.key(0, mb + 5));
    for (int64_t other = 0; other < mb; ++other)
      EXPECT_NE(use.key(0, mb), use.key(0, other));
  }
  EXPECT_TRUE(use.readAgain(1));
  EXPECT_FALSE(use.readAgain(2));
}

TEST(ActivationCachePlan, HorizonEndsAtTheNextDepth) {
  ftpipe::schedule::FreezeSchedule depths;
  depths.points = {{3, 1}, {8, 2}};
  EXPECT_EQ(cacheHorizon(nullptr, 4, 12), 12);
  EXPECT_EQ(cacheHorizon(&depths, 0, 12), 3);
  EXPECT_EQ(cacheHorizon(&depths, 4, 12), 8);
  EXPECT_EQ(cacheHorizon(&depths, 8, 12), 12);
}

std::vector<ActivationCache::Message> messages(char first, size_t bytes) {
  std::vector<ActivationCache::Message> result(2);
  result[0] = {1, 0, std::vector<char>(bytes, first)};
  result[1] = {2, 10, std::vector<char>(bytes / 2, first + 1)};
  return result;
}

/// What replay sends, as (peer, tag, bytes).
std::vector<std::tuple<int64_t, int64_t, std::vector<char>>>
replayed(ActivationCache &cache, ActivationCache::Key key) {
  std::vector<std::tuple<int64_t, int64_t, std::vector<char>>> sent;
  llvm::Error error = cache.replay(
      key, [&](int64_t peer, int64_t tag, const void *data, size_t bytes) {
        const char *begin = static_cast<const char *>(data);
        sent.emplace_back(peer, tag, std::vector<char>(begin, begin + bytes));
      });
  EXPECT_FALSE(error) << llvm::toString(std::move(error));
  return sent;
}

TEST(ActivationCache, KeepsInMemoryThenInTheFile) {
  llvm::SmallString<128> directory;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ftpipe-cache", directory));
  {
    // 24 bytes fit: the first entry (16 + 8) in memory, the second in the file.
    ActivationCache cache(24, directory.str().str(), 3);
    ASSERT_FALSE(cache.store({0, 0}, messages('a', 16)));
    ASSERT_FALSE(cache.store({0, 2}, messages('x', 16)));
    EXPECT_TRUE(cache.contains({0, 0}));
    EXPECT_FALSE(cache.contains({1, 0}));
    EXPECT_EQ(cache.stats().memoryBytes, 24);
    EXPECT_EQ(cache.stats().fileBytes, 24);
    for (auto [key, first] : {std::pair{ActivationCache::Key{0, 0}, 'a'},
                              std::pair{ActivationCache::Key{0, 2}, 'x'}}) {
      auto sent = replayed(cache, key);
      ASSERT_EQ(sent.size(), 2u);
      EXPECT_EQ(sent[0], std::make_tuple(int64_t(1), int64_t(0),
                                         std::vector<char>(16, first)));
      EXPECT_EQ(sent[1], std::make_tuple(int64_t(2), int64_t(10),
                                         std::vector<char>(8, first + 1)));
    }
    EXPECT_EQ(cache.stats().stored, 2);
    EXPECT_EQ(cache.stats().replayed, 2);
    // The file has no name: the directory stays empty.
    std::error_code error;
    EXPECT_EQ(llvm::sys::fs::directory_iterator(directory, error),
              llvm::sys::fs::directory_iterator());
    cache.clear();
    EXPECT_FALSE(cache.contains({0, 0}));
    EXPECT_EQ(cache.stats().memoryBytes, 0);
    EXPECT_EQ(cache.stats().fileBytes, 0);
    EXPECT_EQ(cache.stats().peakFileBytes, 24);
    // After clear() the file is reused from its start.
    ASSERT_FALSE(cache.store({0, 4}, messages('m', 32)));
    EXPECT_EQ(std::get<2>(replayed(cache, {0, 4})[0]),
              std::vector<char>(32, 'm'));
    llvm::Error missing =
        cache.replay({9, 9}, [](int64_t, int64_t, const void *, size_t) {});
    EXPECT_TRUE(bool(missing));
    llvm::consumeError(std::move(missing));
  }
  llvm::sys::fs::remove_directories(directory);
}

TEST(ActivationCache, SaysWhyTheFileCannotBeMade) {
  ActivationCache cache(0, "/nonexistent/ftpipe-cache-dir", 0);
  llvm::Error error = cache.store({0, 0}, messages('a', 4));
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error))
                .find("/nonexistent/ftpipe-cache-dir: No such file"),
            std::string::npos);
}

TEST(ActivationCacheStats, SavedCpuTime) {
  ActivationCacheStats stats;
  EXPECT_EQ(stats.savedCpuSeconds(), 0);
  stats.forwards = 4;
  stats.forwardCpuSeconds = 2;
  stats.replayed = 6;
  stats.replayCpuSeconds = 0.5;
  EXPECT_DOUBLE_EQ(stats.savedCpuSeconds(), 6 * 0.5 - 0.5);
}

} // namespace
