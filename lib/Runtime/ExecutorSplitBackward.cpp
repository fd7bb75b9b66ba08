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

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error DeviceExecutor::inputBackward(int64_t stage, int64_t mb) {
  StageProgram *stageProgram = program(stage);
  auto it = inFlight.find({stage, mb});
  if (!stageProgram || it == inFlight.end())
    return fail("device " + llvm::Twine(communicator.device()) +
                " runs the input part of stage " + llvm::Twine(stage) +
                "'s backward of micro-batch " + llvm::Twine(mb) +
                " before its forward");
  if (!stageProgram->splitsBackward())
    return fail("stage " + llvm::Twine(stage) +
                " has no split backward (input and weight parts): compile "
                "it with ftpipe-differentiate's split-backward (the "
                "default), or run a schedule without I and W");
  if (config.stashing != schedule::WeightVersions::None)
    return fail("zero-bubble schedules are synchronous: run them without "
                "weight stashing");
  std::vector<Tensor> storage;
  std::vector<const Tensor *> data = dataOf(*stageProgram, mb, storage);
  std::vector<Tensor> weightSaved;
  timed([&] {
    weightSaved = stageProgram->backwardInput(
        mb, paramsOf(*stageProgram, live), data, std::move(it->second.saved));
  });
  waitingWeight[{stage, mb}] = {it->second.version, std::move(weightSaved)};
  inFlight.erase(it);
  return llvm::Error::success();
}

llvm::Error DeviceExecutor::weightBackward(int64_t stage, int64_t mb) {
  StageProgram *stageProgram = program(stage);
  auto it = waitingWeight.find({stage, mb});
  if (!stageProgram || it == waitingWeight.end())
    return fail("device " + llvm::Twine(communicator.device()) +
                " runs the weight part of stage " + llvm::Twine(stage) +
                "'s backward of micro-batch " + llvm::Twine(mb) +
                " before its input part");
  std::vector<Tensor> storage;
  std::vector<const Tensor *> data = dataOf(*stageProgram, mb, storage);
  int64_t step = mb / config.schedule.microBatches;
  auto [sums, fresh] = gradients.try_emplace(step);
  if (fresh)
    sums->second = zeroGradients();
  std::vector<Tensor *> stageSums = gradientSumsOf(*stageProgram, sums->second);
  timed([&] {
    stageProgram->backwardWeight(mb, paramsOf(*stageProgram, live), data,
                                 std::move(it->second.saved), stageSums);
  });
  waitingWeight.erase(it);
  return llvm::Error::success();
}
