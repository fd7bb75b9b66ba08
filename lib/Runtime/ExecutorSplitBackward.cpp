//===- ExecutorSplitBackward.cpp - A split backward's I and W actions -----===//
//
// Zero-bubble schedules run a stage's backward as two actions (Schedule.h):
// I, the input part, which sends the gradients its producers wait for and
// returns the values its weight part reads, and W, the weight part, which
// adds the parameter gradients into the step's sums from those values. The
// executor keeps them (the W buffers) from I to W; held() and the memory
// ledger count them. The schedules are synchronous: no weight stashing.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Executor.h"

using namespace ftpipe::runtime;

llvm::Error DeviceExecutor::inputBackward(int64_t stage, int64_t mb) {
  if (skipped.skips(stage, mb)) { // SkippedBackwards.h
    inFlight.erase({stage, mb});
    return llvm::Error::success();
  }
  auto found =
      kept(inFlight, stage, mb, "the input part of the backward", "forward");
  if (!found)
    return found.takeError();
  StageProgram *stageProgram = found->first;
  KeptValues::iterator it = found->second;
  if (!stageProgram->splitsBackward())
    return llvm::createStringError(
        "stage " + llvm::Twine(stage) +
        " has no split backward (input and weight parts): compile it with "
        "ftpipe-differentiate's split-backward (the default), or run a "
        "schedule without I and W");
  if (config.stashing != schedule::WeightVersions::None)
    return llvm::createStringError("zero-bubble schedules are synchronous: "
                                   "run them without weight stashing");
  std::vector<Tensor> storage;
  std::vector<const Tensor *> data = dataOf(*stageProgram, mb, storage);
  std::vector<Tensor> weightSaved;
  withoutDroppedSends(stage, mb, [&] {
    timed([&] {
      weightSaved = stageProgram->backwardInput(
          mb, paramsOf(*stageProgram, live), data, std::move(it->second.saved));
    });
  });
  waitingWeight[{stage, mb}] = {it->second.version, std::move(weightSaved)};
  inFlight.erase(it);
  return llvm::Error::success();
}

llvm::Error DeviceExecutor::weightBackward(int64_t stage, int64_t mb) {
  if (skipped.skips(stage, mb)) {
    waitingWeight.erase({stage, mb});
    return llvm::Error::success();
  }
  auto found = kept(waitingWeight, stage, mb, "the weight part of the backward",
                    "input part");
  if (!found)
    return found.takeError();
  StageProgram *stageProgram = found->first;
  KeptValues::iterator it = found->second;
  std::vector<Tensor> storage;
  std::vector<const Tensor *> data = dataOf(*stageProgram, mb, storage);
  std::vector<Tensor *> sums = gradientSums(*stageProgram, mb);
  timed([&] {
    stageProgram->backwardWeight(mb, paramsOf(*stageProgram, live), data,
                                 std::move(it->second.saved), sums);
  });
  waitingWeight.erase(it);
  return llvm::Error::success();
}
