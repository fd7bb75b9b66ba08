//===- MemoryPredictionTest.cpp - Predicted against measured memory -------===//
//
// DeviceExecutor::predictMemory against the device's memory ledger, on stage
// programs whose memory needs are exact (no generated code): for every
// schedule and weight-versioning mode the two agree to the byte, and a stage
// that keeps one buffer the rules do not name shows up as a measured peak
// above the prediction.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Schedule/MemoryReplay.h"

#include "gtest/gtest.h"

using namespace ftpipe::runtime;
using namespace ftpipe::schedule;

namespace {

constexpr int64_t kWeights = 1000, kSaved = 300, kWeightSaved = 170, kBatch = 2,
                  kFeatures = 5;

/// A stage with one weight vector that saves kSaved floats per micro-batch
/// and, when its backward runs split, keeps kWeightSaved floats from its
/// input part to its weight part; `leak` keeps a copy of every saved value
/// for good.
class CountedStage : public StageProgram {
public:
  CountedStage(int64_t id, bool leak) : id(id), leak(leak) {
    params.push_back({"w" + std::to_string(id), {kWeights}, DType::F32});
    inputs.push_back({"x", {kBatch, kFeatures}, DType::F32});
  }
  int64_t stage() const override { return id; }
  const std::vector<ParameterInfo> &parameters() const override {
    return params;
  }
  const std::vector<DataInputInfo> &dataInputs() const override {
    return inputs;
  }
  bool computesLoss() const override { return true; }
  std::optional<ftpipe::runtime::StageMemory> memory() const override {
    ftpipe::runtime::StageMemory memory;
    memory.savedBytes = kSaved * sizeof(float);
    memory.dataBytes = kBatch * kFeatures * sizeof(float);
    memory.weightSavedBytes = kWeightSaved * sizeof(float);
    return memory;
  }
  ForwardResult forward(int64_t mb, const std::vector<const Tensor *> &p,
                        const std::vector<const Tensor *> &data) override {
    ForwardResult result;
    result.loss = p[0]->f32Values()[0] + data[0]->f32Values()[0];
    result.saved.emplace_back(DType::F32, std::vector<int64_t>{kSaved});
    if (leak)
      kept.push_back(result.saved.back());
    return result;
  }
  void backward(int64_t mb, const std::vector<const Tensor *> &p,
                const std::vector<const Tensor *> &data,
                std::vector<Tensor> saved,
                const std::vector<Tensor *> &gradSums) override {
    for (float &g : gradSums[0]->f32Values())
      g += 1.0f;
  }
  bool splitsBackward() const override { return true; }
  std::vector<Tensor> backwardInput(int64_t mb,
                                    const std::vector<const Tensor *> &p,
                                    const std::vector<const Tensor *> &data,
                                    std::vector<Tensor> saved) override {
    std::vector<Tensor> weightSaved;
    weightSaved.emplace_back(DType::F32, std::vector<int64_t>{kWeightSaved});
    return weightSaved;
  }
  void backwardWeight(int64_t mb, const std::vector<const Tensor *> &p,
                      const std::vector<const Tensor *> &data,
                      std::vector<Tensor> weightSaved,
                      const std::vector<Tensor *> &gradSums) override {
    backward(mb, p, data, {}, gradSums);
  }

private:
  int64_t id;
  bool leak;
  std::vector<ParameterInfo> params;
  std::vector<DataInputInfo> inputs;
  std::vector<Tensor> kept;
};

struct Peaks {
  int64_t measured = 0, predicted = 0;
};

/// Runs `stages` stages on device 0 under `config` and returns the ledger's
/// peak and the prediction for the same actions.
Peaks run(int64_t stages, const ExecutorConfig &config, bool leak) {
  std::vector<std::unique_ptr<CountedStage>> programs;
  std::vector<StageProgram *> pointers;
  ParameterPlacement placement;
  for (int64_t s = 0; s < stages; ++s) {
    programs.push_back(std::make_unique<CountedStage>(s, leak));
    pointers.push_back(programs.back().get());
    placement["w" + std::to_string(s)] = {0};
  }
  StageGraph graph = StageGraph::chain(std::vector<int64_t>(stages, 0));
  llvm::Expected<Schedule> schedule = generate(graph, config.schedule);
  EXPECT_TRUE(bool(schedule));
  ftpipe_mem_reset_peak(0);
  LocalMailbox mailbox(1);
  DeviceExecutor executor(mailbox.endpoint(0), pointers, placement, config);
  TensorMap weights;
  for (int64_t s = 0; s < stages; ++s)
    weights["w" + std::to_string(s)] =
        Tensor(DType::F32, std::vector<int64_t>{kWeights});
  EXPECT_FALSE(bool(executor.setWeights(std::move(weights))));
  TensorMap data;
  data["x"] = Tensor(DType::F32, {8, kFeatures});
  EXPECT_FALSE(bool(executor.setData(data)));
  std::optional<MemoryPrediction> predicted = executor.predictMemory(
      schedule->devices[0], sendsHeldUntil(*schedule, graph)[0]);
  EXPECT_TRUE(predicted.has_value());
  EXPECT_FALSE(bool(executor.run(schedule->devices[0])));
  return {executor.memory().ledger.peak, predicted ? predicted->peakBytes : 0};
}

TEST(MemoryPrediction, EqualsTheLedgerForEverySchedule) {
  struct Case {
    Kind kind;
    ftpipe::schedule::WeightVersions stashing;
    ftpipe::schedule::Optimizer optimizer;
  };
  for (Case c :
       {Case{Kind::GPipe, ftpipe::schedule::WeightVersions::None,
             ftpipe::schedule::Optimizer::AdamW},
        Case{Kind::OneFOneB, ftpipe::schedule::WeightVersions::None,
             ftpipe::schedule::Optimizer::SGD},
        Case{Kind::Async, ftpipe::schedule::WeightVersions::None,
             ftpipe::schedule::Optimizer::AdamW},
        Case{Kind::Async, ftpipe::schedule::WeightVersions::Stash,
             ftpipe::schedule::Optimizer::Adafactor},
        Case{Kind::Async, ftpipe::schedule::WeightVersions::DoubleBuffered,
             ftpipe::schedule::Optimizer::AdamW},
        // Split backwards: the W buffers between each I and its W.
        Case{Kind::ZeroBubbleH1, ftpipe::schedule::WeightVersions::None,
             ftpipe::schedule::Optimizer::AdamW}}) {
    ExecutorConfig config;
    config.schedule = {c.kind, 4, 3};
    config.stashing = c.stashing;
    config.optimizer.kind = c.optimizer;
    Peaks peaks = run(/*stages=*/2, config, /*leak=*/false);
    SCOPED_TRACE(nameOf(c.kind).str());
    EXPECT_GT(peaks.measured, 0);
    EXPECT_EQ(peaks.measured, peaks.predicted);
  }
}

TEST(MemoryPrediction, AnUncountedBufferShowsAboveThePrediction) {
  ExecutorConfig config;
  config.schedule = {Kind::OneFOneB, 4, 3};
  Peaks peaks = run(/*stages=*/2, config, /*leak=*/true);
  // 24 forwards keep 1200 bytes each.
  EXPECT_GE(peaks.measured, peaks.predicted + 20 * kSaved * 4);
}

} // namespace
