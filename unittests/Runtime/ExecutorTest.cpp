//===- ExecutorTest.cpp - Training the tiny MLP in one process
//-------------===//
//
// Every schedule and weight-stashing mode, on one device per stage and on a
// Mixed-Pipe placement (two non-adjacent stages on one device), one thread
// per device over the in-process communicator: the weights after training
// equal the plain emulation (TinyMlpReference.h) within float rounding,
// tied copies end equal to their owner, and the loss falls; data set and
// weights validation.
//
//===----------------------------------------------------------------------===//

#include "TinyMlpReference.h"

#include "FTPipe/Runtime/Replicas.h"

#include "gtest/gtest.h"

#include <optional>
#include <thread>

using namespace ftpipe::runtime;
using namespace ftpipe::schedule;

namespace {

struct RunResult {
  /// Per device, its weights at the end.
  std::vector<TensorMap> weights;
  Schedule schedule;
  std::vector<double> losses;
  std::vector<int64_t> peakVersions;
};

/// Runs the plan on one thread per process: per device of `placement`, its
/// replicas in `replicas` (empty: one each). RunResult's weights are per
/// process (ReplicaLayout's numbering).
RunResult runInProcess(const TinyMlpShape &shape,
                       const std::vector<int64_t> &placement,
                       const ExecutorConfig &config, const TensorMap &initial,
                       const TensorMap &data, ReplicaLayout replicas = {}) {
  StageGraph graph = StageGraph::chain(placement);
  ParameterPlacement params = tinyMlpPlacement(shape, placement);
  for (const auto &[name, holders] : params)
    if (holders.size() > 1)
      graph.tiedDevices.push_back(holders);
  llvm::Expected<Schedule> schedule = generate(graph, config.schedule);
  EXPECT_TRUE(bool(schedule));
  if (!schedule)
    return {};
  llvm::Expected<DryRunResult> dry = dryRun(graph, config.schedule, *schedule);
  EXPECT_TRUE(bool(dry)) << llvm::toString(dry.takeError());

  if (replicas.replicas.empty())
    replicas = ReplicaLayout::none(graph.devices);
  Schedule lists = replicateSchedule(*schedule, replicas);
  int64_t processes = replicas.processes();
  RunResult result;
  result.schedule = *schedule;
  result.weights.resize(processes);
  result.peakVersions.resize(processes);
  LocalMailbox mailbox(processes, /*timeoutSeconds=*/20);
  std::vector<std::string> errors(processes);
  std::vector<std::thread> threads;
  std::mutex lossMutex;
  for (int64_t p = 0; p < processes; ++p)
    threads.emplace_back([&, p] {
      int64_t d = replicas.replicaOf(p).first;
      auto stages = tinyMlpStages(shape, placement, d);
      std::vector<StageProgram *> pointers;
      for (auto &stage : stages)
        pointers.push_back(stage.get());
      std::optional<ReplicaCommunicator> replicated;
      if (replicas.replicated())
        replicated.emplace(mailbox.endpoint(p), replicas);
      Communicator &communicator =
          replicated ? static_cast<Communicator &>(*replicated)
                     : mailbox.endpoint(p);
      DeviceExecutor executor(communicator, pointers, params, config);
      TensorMap mine;
      for (const ParameterInfo &param : executor.parameters())
        mine[param.name] = initial.at(param.name);
      llvm::Error error = executor.setWeights(std::move(mine));
      if (!error)
        error = executor.setData(data);
      if (!error)
        error = executor.run(lists.devices[p], [&](const StepReport &r) {
          if (r.loss) {
            std::lock_guard<std::mutex> lock(lossMutex);
            result.losses.push_back(*r.loss);
          }
        });
      if (error) {
        errors[p] = llvm::toString(std::move(error));
        // The others would wait for this process: end their waits.
        for (int64_t other = 0; other < processes; ++other)
          mailbox.endpoint(other).abort("process " + std::to_string(p) +
                                        " failed: " + errors[p]);
      }
      result.weights[p] = executor.weights();
      result.peakVersions[p] = executor.peakVersions();
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int64_t p = 0; p < processes; ++p)
    EXPECT_EQ(errors[p], "") << "process " << p;
  EXPECT_EQ(mailbox.pending(), 0u);
  return result;
}

/// The owner's value of every parameter; copies must equal it exactly.
TensorMap merged(const RunResult &run, const ParameterPlacement &placement) {
  TensorMap all;
  for (const auto &[name, holders] : placement) {
    const Tensor &owner = run.weights[holders.front()].at(name);
    for (int64_t holder : holders)
      EXPECT_EQ(run.weights[holder].at(name).bytes, owner.bytes)
          << name << " on device " << holder;
    all[name] = owner;
  }
  return all;
}

struct Case {
  std::vector<int64_t> placement;
  Kind kind;
  ftpipe::schedule::WeightVersions stashing;
  int64_t microBatches;
};

std::string describe(const Case &c) {
  std::string text = nameOf(c.kind).str() + " stashing " +
                     std::to_string(static_cast<int>(c.stashing)) + " M " +
                     std::to_string(c.microBatches) + " placement";
  for (int64_t d : c.placement)
    text += " " + std::to_string(d);
  return text;
}

TEST(Executor, EverySchedulePlacementAndStashingMatchesEmulation) {
  TinyMlpShape shape;
  TensorMap initial = tinyMlpWeights(shape, 7);
  TensorMap data = tinyMlpData(shape, 32, 11);
  OptimizerConfig adam;
  adam.kind = ftpipe::schedule::Optimizer::AdamW;
  adam.lr = 0.01;
  adam.weightDecay = 0.01;
  adam.warmupSteps = 2;
  std::vector<Case> cases;
  for (std::vector<int64_t> placement :
       {std::vector<int64_t>{0, 1, 2, 3}, std::vector<int64_t>{0, 1, 2, 0},
        std::vector<int64_t>{0, 1, 2, 3, 0}}) {
    cases.push_back(
        {placement, Kind::GPipe, ftpipe::schedule::WeightVersions::None, 4});
    cases.push_back(
        {placement, Kind::OneFOneB, ftpipe::schedule::WeightVersions::None, 4});
    cases.push_back(
        {placement, Kind::Async, ftpipe::schedule::WeightVersions::None, 4});
    cases.push_back(
        {placement, Kind::Async, ftpipe::schedule::WeightVersions::Stash, 1});
    cases.push_back(
        {placement, Kind::Async, ftpipe::schedule::WeightVersions::Stash, 4});
    cases.push_back({placement, Kind::Async,
                     ftpipe::schedule::WeightVersions::DoubleBuffered, 4});
  }
  std::map<int64_t, TensorMap> synchronous;
  for (const Case &c : cases) {
    SCOPED_TRACE(describe(c));
    shape.stages = static_cast<int64_t>(c.placement.size());
    initial = tinyMlpWeights(shape, 7);
    ExecutorConfig config;
    config.schedule = {c.kind, c.microBatches, /*steps=*/10};
    config.stashing = c.stashing;
    config.optimizer = adam;
    RunResult run = runInProcess(shape, c.placement, config, initial, data);
    TensorMap weights = merged(run, tinyMlpPlacement(shape, c.placement));
    reference::Versions versions = reference::versionsOf(
        run.schedule, c.placement, c.microBatches * 10, c.stashing);
    std::vector<double> losses;
    TensorMap expected = reference::emulate(
        shape, initial, data, c.microBatches, 10, adam, versions, &losses);
    EXPECT_LT(reference::maxRelativeDifference(weights, expected), 1e-4);
    // The weights moved: a run that did nothing would not match.
    EXPECT_GT(reference::maxRelativeDifference(initial, expected), 1e-2);
    // The losses the last stage reported are the emulation's.
    ASSERT_EQ(run.losses.size(), losses.size());
    for (size_t k = 0; k < losses.size(); ++k)
      EXPECT_NEAR(run.losses[k], losses[k], 1e-4 * (1 + losses[k]));
    if (c.kind != Kind::Async) {
      // Synchronous schedules: the plain sequential run, and each other
      // (for the same model depth).
      auto [it, first] = synchronous.try_emplace(shape.stages, weights);
      if (!first) {
        EXPECT_LT(reference::maxRelativeDifference(weights, it->second), 1e-4);
      }
    }
    if (c.stashing == ftpipe::schedule::WeightVersions::DoubleBuffered) {
      for (int64_t versionsHeld : run.peakVersions)
        EXPECT_LE(versionsHeld, 2);
    }
    if (c.stashing == ftpipe::schedule::WeightVersions::Stash &&
        c.microBatches == 1) {
      // Stage 0 keeps one version per micro-batch in flight: the depth.
      EXPECT_EQ(run.peakVersions[0], shape.stages);
    }
  }
}

// Replicated devices (micro-batches round-robin over a device's replicas,
// their gradients summed at each update) train as the plan does: the
// emulation of the plan's schedule with the same global batch, for every
// schedule, with the tied embedding on devices of different replica counts;
// every replica of a device ends with the same bits; the step losses,
// reported once per step, are the emulation's.
TEST(Executor, ReplicasTrainAsThePlan) {
  TinyMlpShape shape;
  TensorMap data = tinyMlpData(shape, 32, 11);
  OptimizerConfig adam;
  adam.kind = ftpipe::schedule::Optimizer::AdamW;
  adam.lr = 0.01;
  adam.weightDecay = 0.01;
  struct ReplicaCase {
    std::vector<int64_t> placement, replicas;
  };
  for (const ReplicaCase &layoutCase :
       {ReplicaCase{{0, 1}, {2, 2}}, ReplicaCase{{0, 1, 2}, {1, 2, 1}},
        ReplicaCase{{0, 1, 2}, {2, 1, 3}}, ReplicaCase{{0, 1, 0}, {3, 2}}})
    for (auto [kind, stashing] :
         {std::pair{Kind::GPipe, ftpipe::schedule::WeightVersions::None},
          std::pair{Kind::OneFOneB, ftpipe::schedule::WeightVersions::None},
          std::pair{Kind::Async, ftpipe::schedule::WeightVersions::Stash},
          std::pair{Kind::Async,
                    ftpipe::schedule::WeightVersions::DoubleBuffered}}) {
      Case c{layoutCase.placement, kind, stashing, 6};
      ReplicaLayout layout{layoutCase.replicas};
      SCOPED_TRACE(describe(c) + " replicas " + layout.str());
      shape.stages = static_cast<int64_t>(c.placement.size());
      TensorMap initial = tinyMlpWeights(shape, 7);
      ExecutorConfig config;
      config.schedule = {c.kind, c.microBatches, /*steps=*/6};
      config.stashing = c.stashing;
      config.optimizer = adam;
      RunResult run =
          runInProcess(shape, c.placement, config, initial, data, layout);
      ParameterPlacement params = tinyMlpPlacement(shape, c.placement);
      // Replica j's weights as a run of the plan's devices.
      RunResult asPlan = run;
      asPlan.weights.clear();
      for (int64_t d = 0; d < layout.devices(); ++d) {
        asPlan.weights.push_back(run.weights[layout.process(d, 0)]);
        for (int64_t j = 1; j < layout.replicas[d]; ++j)
          for (const auto &[name, tensor] : asPlan.weights.back())
            EXPECT_EQ(run.weights[layout.process(d, j)].at(name).bytes,
                      tensor.bytes)
                << name << " on device " << d << " replica " << j;
      }
      TensorMap weights = merged(asPlan, params);
      reference::Versions versions = reference::versionsOf(
          run.schedule, c.placement, c.microBatches * 6, c.stashing);
      std::vector<double> losses;
      TensorMap expected = reference::emulate(
          shape, initial, data, c.microBatches, 6, adam, versions, &losses);
      EXPECT_LT(reference::maxRelativeDifference(weights, expected), 1e-4);
      EXPECT_GT(reference::maxRelativeDifference(initial, expected), 1e-2);
      // Each step's loss reported once, over all replicas' micro-batches.
      ASSERT_EQ(run.losses.size(), losses.size());
      for (size_t k = 0; k < losses.size(); ++k)
        EXPECT_NEAR(run.losses[k], losses[k], 1e-4 * (1 + losses[k]));
    }
}

TEST(Executor, TwoBWRefusesAThirdVersion) {
  // One device, stage 0 alone: a forward before each update leaves a
  // micro-batch of every version in flight; the second update would make
  // a third version.
  TinyMlpShape shape;
  ExecutorConfig config;
  config.schedule = {Kind::Async, 1, 3};
  config.stashing = ftpipe::schedule::WeightVersions::DoubleBuffered;
  std::vector<int64_t> placement = {0, 0, 0, 0};
  LocalMailbox mailbox(1);
  auto stages = tinyMlpStages(shape, placement, 0);
  DeviceExecutor executor(mailbox.endpoint(0), {stages[0].get()},
                          tinyMlpPlacement(shape, placement), config);
  TensorMap weights = tinyMlpWeights(shape, 1), mine;
  for (const ParameterInfo &param : executor.parameters())
    mine[param.name] = weights.at(param.name);
  ASSERT_FALSE(bool(executor.setWeights(mine)));
  TensorMap data = tinyMlpData(shape, 8, 1);
  ASSERT_FALSE(bool(executor.setData(data)));
  llvm::Expected<Schedule> schedule =
      parseSchedule("device 0: 0F0 U0 0F1 U1 0F2 U2\n");
  ASSERT_TRUE(bool(schedule));
  llvm::Error error = executor.run(schedule->devices[0]);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "2BW keeps two weight versions, device 0 needs 3 at update 1: "
            "use at least as many micro-batches per step as the pipeline is "
            "deep");
}

TEST(Executor, ABackwardBeforeWhatItReadsIsRefused) {
  // A one-stage MLP (no messages), lists that the dry run would refuse:
  // each backward part names the action it needs first.
  TinyMlpShape shape;
  shape.stages = 1;
  ExecutorConfig config;
  config.schedule = {Kind::ZeroBubbleH1, 1, 1};
  std::vector<int64_t> placement = {0};
  auto stages = tinyMlpStages(shape, placement, 0);
  TensorMap weights = tinyMlpWeights(shape, 1);
  TensorMap data = tinyMlpData(shape, 8, 1);
  auto refusal = [&](llvm::StringRef list) -> std::string {
    LocalMailbox mailbox(1);
    DeviceExecutor executor(mailbox.endpoint(0), {stages[0].get()},
                            tinyMlpPlacement(shape, placement), config);
    TensorMap mine;
    for (const ParameterInfo &param : executor.parameters())
      mine[param.name] = weights.at(param.name);
    EXPECT_FALSE(bool(executor.setWeights(mine)));
    EXPECT_FALSE(bool(executor.setData(data)));
    llvm::Expected<Schedule> schedule = parseSchedule(list);
    EXPECT_TRUE(bool(schedule)) << llvm::toString(schedule.takeError());
    if (!schedule)
      return "";
    llvm::Error error = executor.run(schedule->devices[0]);
    return error ? llvm::toString(std::move(error)) : "no error";
  };
  EXPECT_EQ(refusal("device 0: 0B0\n"),
            "device 0 runs the backward of stage 0 micro-batch 0 before its "
            "forward");
  EXPECT_EQ(refusal("device 0: 0I0\n"),
            "device 0 runs the input part of the backward of stage 0 "
            "micro-batch 0 before its forward");
  EXPECT_EQ(refusal("device 0: 0F0 0W0\n"),
            "device 0 runs the weight part of the backward of stage 0 "
            "micro-batch 0 before its input part");
  EXPECT_EQ(refusal("device 0: 0F0 0I0 0I0\n"),
            "device 0 runs the input part of the backward of stage 0 "
            "micro-batch 0 before its forward");
}

TEST(Executor, LossFallsOnTheSyntheticTask) {
  // y = sin(x A) is smooth and within reach of an MLP with 8 hidden units
  // per layer, so 60 async steps of AdamW at lr 0.01 must at least halve
  // the loss of the first step; an update
  // with a wrong sign, scale or weight version would not. The first test
  // shows the reported losses are the emulation's.
  TinyMlpShape shape;
  TensorMap initial = tinyMlpWeights(shape, 3);
  TensorMap data = tinyMlpData(shape, 32, 5);
  for (ftpipe::schedule::WeightVersions stashing :
       {ftpipe::schedule::WeightVersions::None,
        ftpipe::schedule::WeightVersions::Stash,
        ftpipe::schedule::WeightVersions::DoubleBuffered}) {
    ExecutorConfig config;
    config.schedule = {Kind::Async, 4, 60};
    config.stashing = stashing;
    config.optimizer.lr = 0.01;
    RunResult run = runInProcess(shape, {0, 1, 2, 0}, config, initial, data);
    ASSERT_EQ(run.losses.size(), 60u);
    double first = run.losses.front();
    double last = (run.losses[57] + run.losses[58] + run.losses[59]) / 3;
    EXPECT_LT(last, 0.5 * first) << "stashing " << int(stashing);
  }
}

TEST(Validation, DataSetMismatchesAreNamed) {
  std::vector<DataInputInfo> inputs = {{"input_ids", {2, 5}, DType::I64},
                                       {"labels", {2}, DType::I64}};
  TensorMap data;
  data["input_ids"] = Tensor(DType::I32, {10, 5});
  data["attention_mask"] = Tensor(DType::I64, {10, 5});
  llvm::Error error = validateDataset(inputs, data);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "the data set does not match the model: 'input_ids' is I32 [10, "
            "5], the model reads I64 [N, 5]; 'labels' is missing; "
            "'attention_mask' is not an input of the model");
  data.erase("attention_mask");
  data["input_ids"] = Tensor(DType::I64, {10, 5});
  data["labels"] = Tensor(DType::I64, {9});
  error = validateDataset(inputs, data);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "the data set does not match the model: 'labels' has 9 samples, "
            "'input_ids' 10");
  data["labels"] = Tensor(DType::I64, {10});
  EXPECT_FALSE(bool(validateDataset(inputs, data)));
}

TEST(Validation, WeightMismatchesAreNamed) {
  std::vector<ParameterInfo> params = {{"wte.weight", {10, 4}, DType::F32},
                                       {"ln_f.bias", {4}, DType::F32}};
  TensorMap weights;
  weights["wte.weight"] = Tensor(DType::F32, {4, 10});
  weights["lm_head.weight"] = Tensor(DType::F32, {10, 4});
  llvm::Error error = validateWeights(params, weights);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "the weights do not match the model: 'wte.weight' is F32 [4, 10], "
            "the model has F32 [10, 4]; 'ln_f.bias' is missing; "
            "'lm_head.weight' is not a parameter of the model");
}

} // namespace
