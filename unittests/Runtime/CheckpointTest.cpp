//===- CheckpointTest.cpp - Optimizer state, resume and checkpoints -------===//
//
// The optimizer's state goes out and comes back exactly (each rule, with
// torch.optim's slot names and shapes); the schedule of a resumed run is
// the rest of the uninterrupted one with GPipe and 1F1B (and is not with
// async); the tiny MLP on 4 devices (threads) checkpointed after 3 steps and
// resumed to 6 ends bit-identical to 6 steps in one go, and not so when the
// optimizer state is zeroed; a corrupted file and another setup are
// refused.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Checkpoint.h"
#include "FTPipe/Runtime/TinyMlp.h"

#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <fstream>
#include <random>
#include <thread>

using namespace ftpipe;
using namespace ftpipe::runtime;
using namespace ftpipe::schedule;

namespace {

Tensor randomTensor(std::vector<int64_t> shape, std::mt19937 &random) {
  Tensor tensor(DType::F32, std::move(shape));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float &value : tensor.f32Values())
    value = normal(random);
  return tensor;
}

TEST(Checkpoint, OptimizerStateRoundTrip) {
  const std::vector<std::string> names = {"m", "v", "t"};
  const std::vector<std::vector<int64_t>> shapes = {{3, 4}, {4}, {2, 3, 4}};
  for (ftpipe::schedule::Optimizer kind :
       {ftpipe::schedule::Optimizer::SGD, ftpipe::schedule::Optimizer::AdamW,
        ftpipe::schedule::Optimizer::Adafactor}) {
    OptimizerConfig config;
    config.kind = kind;
    config.lr = 0.01;
    config.weightDecay = 0.01;
    config.warmupSteps = 2;
    std::mt19937 random(7);
    std::vector<Tensor> params, copies;
    for (const auto &shape : shapes)
      params.push_back(randomTensor(shape, random));
    runtime::Optimizer first(config);
    auto step = [&](runtime::Optimizer &optimizer, std::vector<Tensor> &values,
                    const std::vector<Tensor> &grads) {
      std::vector<Tensor *> pointers;
      std::vector<const Tensor *> gradPointers;
      for (size_t i = 0; i < values.size(); ++i) {
        pointers.push_back(&values[i]);
        gradPointers.push_back(&grads[i]);
      }
      optimizer.step(names, pointers, gradPointers);
    };
    auto grads = [&] {
      std::vector<Tensor> result;
      for (const auto &shape : shapes)
        result.push_back(randomTensor(shape, random));
      return result;
    };
    for (int i = 0; i < 3; ++i)
      step(first, params, grads());
    TensorMap state;
    for (size_t i = 0; i < names.size(); ++i)
      first.saveState(names[i], shapes[i], state);
    if (kind == ftpipe::schedule::Optimizer::AdamW) {
      EXPECT_EQ(state.at("t.exp_avg").shape, shapes[2]);
      EXPECT_EQ(state.at("t.exp_avg_sq").shape, shapes[2]);
    }
    if (kind == ftpipe::schedule::Optimizer::Adafactor) {
      EXPECT_EQ(state.at("t.exp_avg_sq_row").shape,
                (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(state.at("t.exp_avg_sq_col").shape,
                (std::vector<int64_t>{2, 4}));
      EXPECT_EQ(state.at("v.exp_avg_sq").shape, shapes[1]);
    }

    runtime::Optimizer second(config);
    for (size_t i = 0; i < names.size(); ++i)
      ASSERT_FALSE(bool(second.loadState(names[i], shapes[i], state)));
    second.setSteps(3);
    copies = params;
    for (int i = 0; i < 2; ++i) {
      std::vector<Tensor> g = grads();
      step(first, params, g);
      step(second, copies, g);
    }
    for (size_t i = 0; i < params.size(); ++i)
      EXPECT_EQ(params[i].bytes, copies[i].bytes)
          << names[i] << " optimizer " << static_cast<int>(kind);
  }
}

TEST(Checkpoint, LoadStateRefusesMissingAndMisShaped) {
  OptimizerConfig config;
  runtime::Optimizer optimizer(config);
  TensorMap state = {{"w.exp_avg", Tensor(DType::F32, {2, 2})}};
  llvm::Error missing = optimizer.loadState("w", {2, 2}, state);
  EXPECT_EQ(llvm::toString(std::move(missing)),
            "optimizer state 'w.exp_avg_sq' is missing");
  state["w.exp_avg_sq"] = Tensor(DType::F32, {4});
  llvm::Error shaped = optimizer.loadState("w", {2, 2}, state);
  EXPECT_EQ(llvm::toString(std::move(shaped)),
            "optimizer state 'w.exp_avg_sq' is F32 [4], expected F32 [2, 2]");
}

/// Device d's actions after its update `updates - 1`.
std::vector<Action> suffix(const std::vector<Action> &actions,
                           int64_t updates) {
  auto it = std::find_if(actions.begin(), actions.end(), [&](const Action &a) {
    return a.kind == ActionKind::Update && a.index == updates - 1;
  });
  return std::vector<Action>(it + 1, actions.end());
}

TEST(Checkpoint, ShiftedScheduleIsTheRestOfTheRun) {
  for (const std::vector<int64_t> &placement :
       {std::vector<int64_t>{0, 1, 2, 3}, {0, 1, 2, 3, 0}, {0, 1, 0, 1}}) {
    StageGraph graph = StageGraph::chain(placement);
    for (Kind kind : {Kind::GPipe, Kind::OneFOneB, Kind::Async}) {
      ScheduleConfig whole{kind, 3, 7}, rest{kind, 3, 4};
      Schedule full = *generate(graph, whole);
      Schedule resumed = *generate(graph, rest);
      shiftSchedule(resumed, 3, 3);
      bool same = true;
      for (int64_t d = 0; d < graph.devices; ++d) {
        std::vector<Action> tail = suffix(full.devices[d], 3);
        same &= tail.size() == resumed.devices[d].size() &&
                std::equal(tail.begin(), tail.end(), resumed.devices[d].begin(),
                           [](const Action &a, const Action &b) {
                             return a.kind == b.kind && a.stage == b.stage &&
                                    a.index == b.index;
                           });
      }
      // Async keeps the pipeline full across steps; a resumed run refills it.
      EXPECT_EQ(same, kind != Kind::Async)
          << nameOf(kind).str() << " on " << placement.size() << " stages";
    }
  }
}

/// The tiny MLP on 4 devices (threads) for `steps` steps: from the start,
/// or from `resume`; writes the checkpoint after `checkpointAt` updates into
/// `setup` when given. Returns every parameter's final value.
TensorMap train(const PipelineModel &model, ExecutorConfig config,
                int64_t steps, const TensorMap &data,
                const LoadedCheckpoint *resume, bool dropOptimizerState,
                const CheckpointSetup *setup, int64_t checkpointAt) {
  const StageGraph &graph = model.stageGraph();
  int64_t done = resume ? resume->updates : 0;
  config.schedule.steps = steps - done;
  Schedule schedule = *generate(graph, config.schedule);
  shiftSchedule(schedule, done, config.schedule.microBatches);
  TensorMap initial = resume ? resume->weights : model.randomWeights(3);

  LocalMailbox mailbox(graph.devices, /*timeoutSeconds=*/20);
  std::vector<TensorMap> owned(graph.devices);
  std::vector<std::string> errors(graph.devices);
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < graph.devices; ++d)
    threads.emplace_back([&, d] {
      auto stages = tinyMlpStages({4, 8, 4, 2}, {0, 1, 2, 3}, d);
      std::vector<StageProgram *> pointers;
      for (auto &stage : stages)
        pointers.push_back(stage.get());
      DeviceExecutor executor(mailbox.endpoint(d), pointers, model.placement(),
                              config);
      TensorMap mine;
      for (const ParameterInfo &param : executor.parameters())
        mine[param.name] = initial.at(param.name);
      llvm::Error error = executor.setWeights(std::move(mine));
      if (!error)
        error = executor.setData(data);
      if (!error && resume) {
        TensorMap state = resume->optimizerState[d];
        if (dropOptimizerState)
          for (auto &[name, tensor] : state)
            std::fill(tensor.bytes.begin(), tensor.bytes.end(), 0);
        error = executor.resume(done, state);
      }
      auto ownedNow = [&] {
        TensorMap result;
        for (const auto &[name, holders] : model.placement())
          if (holders.front() == d)
            result[name] = executor.weights().at(name);
        return result;
      };
      if (!error)
        error = executor.run(schedule.devices[d], [&](const StepReport &r) {
          if (setup && r.step + 1 == checkpointAt)
            if (llvm::Error saved =
                    saveCheckpoint(mailbox.endpoint(d), *setup, r.step + 1,
                                   ownedNow(), executor.optimizerState()))
              errors[d] = llvm::toString(std::move(saved));
        });
      if (error)
        errors[d] = llvm::toString(std::move(error));
      owned[d] = ownedNow();
    });
  for (std::thread &thread : threads)
    thread.join();
  TensorMap all;
  for (int64_t d = 0; d < graph.devices; ++d) {
    EXPECT_EQ(errors[d], "") << "device " << d;
    all.merge(owned[d]);
  }
  return all;
}

std::string temporaryDirectory() {
  llvm::SmallString<128> path;
  EXPECT_FALSE(
      llvm::sys::fs::createUniqueDirectory("ftpipe-checkpoint-test", path));
  return path.str().str();
}

TEST(Checkpoint, ResumeInProcessIsExact) {
  TinyMlpShape shape{4, 8, 4, 2};
  auto model = createTinyMlpModel(shape, {0, 1, 2, 3});
  TensorMap data = tinyMlpData(shape, 32, 5);
  for (Kind kind : {Kind::GPipe, Kind::OneFOneB}) {
    ExecutorConfig config;
    config.schedule = {kind, 4, 6};
    config.optimizer.lr = 0.01;
    config.optimizer.warmupSteps = 2;
    CheckpointSetup setup;
    setup.directory = temporaryDirectory();
    setup.identity = identifyRun(*model, config, data);
    TensorMap straight = train(*model, config, 6, data, nullptr, false, &setup,
                               /*checkpointAt=*/3);
    llvm::Expected<LoadedCheckpoint> loaded =
        loadCheckpoint(setup.directory, setup.identity);
    ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
    EXPECT_EQ(loaded->updates, 3);
    TensorMap resumed =
        train(*model, config, 6, data, &*loaded, false, nullptr, -1);
    ASSERT_EQ(resumed.size(), straight.size());
    for (const auto &[name, tensor] : straight)
      EXPECT_EQ(resumed.at(name).bytes, tensor.bytes) << name;
    // With the optimizer's moments zeroed the run goes elsewhere.
    TensorMap forgetful =
        train(*model, config, 6, data, &*loaded, true, nullptr, -1);
    EXPECT_NE(forgetful.at("layers.1.weight").bytes,
              straight.at("layers.1.weight").bytes);

    // Another setup, and a flipped byte.
    RunIdentity other = identifyRun(*model, config, tinyMlpData(shape, 16, 5));
    llvm::Expected<LoadedCheckpoint> refused =
        loadCheckpoint(setup.directory, other);
    ASSERT_FALSE(bool(refused));
    EXPECT_NE(llvm::toString(refused.takeError())
                  .find("is a checkpoint of another training setup: data "
                        "tensor 'x' is F32 [16, 4] here, F32 [32, 4] in the "
                        "checkpoint"),
              std::string::npos);
    std::string file = loaded->directory + "/optimizer-device-2.safetensors";
    {
      std::fstream stream(file,
                          std::ios::in | std::ios::out | std::ios::binary);
      stream.seekg(-1, std::ios::end);
      char last = 0;
      stream.get(last);
      stream.seekp(-1, std::ios::end);
      stream.put(static_cast<char>(last ^ 0x10));
    }
    llvm::Expected<LoadedCheckpoint> corrupted =
        loadCheckpoint(setup.directory, setup.identity);
    ASSERT_FALSE(bool(corrupted));
    EXPECT_NE(llvm::toString(corrupted.takeError()).find("(corrupted)"),
              std::string::npos);
    llvm::sys::fs::remove_directories(setup.directory);
  }
}

TEST(Checkpoint, FrozenParametersStayAndResume) {
  TinyMlpShape shape{4, 8, 4, 2};
  auto model = createTinyMlpModel(shape, {0, 1, 2, 3});
  TensorMap data = tinyMlpData(shape, 32, 5);
  TensorMap initial = model->randomWeights(3);
  ExecutorConfig config;
  config.schedule = {Kind::OneFOneB, 4, 6};
  config.optimizer.lr = 0.01;
  config.frozen = {"layers.0.weight", "layers.0.bias"};
  CheckpointSetup setup;
  setup.directory = temporaryDirectory();
  setup.identity = identifyRun(*model, config, data);
  TensorMap straight = train(*model, config, 6, data, nullptr, false, &setup,
                             /*checkpointAt=*/3);
  // Never updated: bit for bit the initial weights; the others moved.
  for (const std::string &name : config.frozen)
    EXPECT_EQ(straight.at(name).bytes, initial.at(name).bytes) << name;
  EXPECT_NE(straight.at("layers.1.weight").bytes,
            initial.at("layers.1.weight").bytes);
  llvm::Expected<LoadedCheckpoint> loaded =
      loadCheckpoint(setup.directory, setup.identity);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  // No optimizer state for them.
  for (const TensorMap &state : loaded->optimizerState)
    for (const auto &[name, tensor] : state)
      EXPECT_FALSE(llvm::StringRef(name).starts_with("layers.0.")) << name;
  TensorMap resumed =
      train(*model, config, 6, data, &*loaded, false, nullptr, -1);
  for (const auto &[name, tensor] : straight)
    EXPECT_EQ(resumed.at(name).bytes, tensor.bytes) << name;
  // The checkpoint records the frozen set: a run that trains them is another
  // setup.
  ExecutorConfig trainsAll = config;
  trainsAll.frozen.clear();
  llvm::Expected<LoadedCheckpoint> refused =
      loadCheckpoint(setup.directory, identifyRun(*model, trainsAll, data));
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("frozen"),
            std::string::npos);
  llvm::sys::fs::remove_directories(setup.directory);
}

} // namespace
