//===- RunTest.cpp - Tests of the run's orchestration (Run.h, Gather.h) ---===//
//
// planTraining, loadTraining and runTraining over threads train the tiny MLP
// to the weights and losses of the plain emulation (TinyMlpReference.h),
// calling the hooks once per device step; the gathers bring every owner's
// parameters and every device's timeline to device 0; and the refusals
// happen before anything runs.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Run.h"
#include "FTPipe/Runtime/Gather.h"
#include "FTPipe/Runtime/Safetensors.h"

#include "TinyMlpReference.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <thread>

using namespace ftpipe;
using namespace ftpipe::runtime;
using ftpipe::schedule::Kind;

namespace {

ModelOptions tinyMlp(std::string placement) {
  ModelOptions model;
  model.builtin = "tiny-mlp";
  model.placement = std::move(placement);
  return model;
}

RunOptions trainFor(Kind kind, int64_t steps) {
  RunOptions options;
  options.schedule = kind;
  options.microBatches = 4;
  options.optimizer = schedule::Optimizer::AdamW;
  options.lr = 0.01;
  options.weightDecay = 0.01;
  options.steps = steps;
  options.seed = 7;
  return options;
}

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

template <typename T> std::string errorOf(llvm::Expected<T> value) {
  return value ? "" : llvm::toString(value.takeError());
}

TEST(Run, TinyMlpOverThreadsMatchesEmulation) {
  for (auto [placement, kind] :
       {std::pair{"0,1,2,3", Kind::OneFOneB}, std::pair{"0,1,2,0", Kind::Async},
        std::pair{"0,1,0", Kind::GPipe}}) {
    SCOPED_TRACE(std::string(placement) + " " + schedule::nameOf(kind).str());
    ModelOptions model = tinyMlp(placement);
    RunOptions options = trainFor(kind, 5);
    llvm::Expected<TrainingRun> planned = planTraining(model, options);
    ASSERT_TRUE(!!planned) << llvm::toString(planned.takeError());
    TrainingRun &run = *planned;
    ASSERT_EQ(errorOf(loadTraining(run, model, options)), "");
    TensorMap initial = run.weights;
    int64_t devices = run.model->stageGraph().devices;

    std::map<int64_t, double> losses;
    std::vector<int64_t> stepsSeen(devices), summaries(devices);
    RunHooks hooks;
    hooks.onStep = [&](int64_t d, const StepReport &report) {
      ++stepsSeen[d];
      if (report.loss)
        losses[report.step] = *report.loss;
    };
    hooks.onDeviceDone = [&](const DeviceSummary &summary) {
      ++summaries[summary.device];
      EXPECT_NE(summary.memory.find("memory"), std::string::npos);
    };
    hooks.fatal = [](const std::string &message) {
      ADD_FAILURE() << message;
      std::abort();
    };
    llvm::Expected<TrainingResult> result =
        runTraining(run, options, hooks, nullptr, nullptr);
    ASSERT_TRUE(!!result) << llvm::toString(result.takeError());
    ASSERT_TRUE(result->gathered);
    for (int64_t d = 0; d < devices; ++d) {
      EXPECT_EQ(stepsSeen[d], options.steps) << "device " << d;
      EXPECT_EQ(summaries[d], 1) << "device " << d;
    }

    TinyMlpShape shape;
    shape.stages = run.model->stageGraph().stages();
    std::vector<int64_t> stageDevices;
    for (llvm::StringRef part : llvm::split(placement, ','))
      stageDevices.push_back(std::stoll(part.str()));
    std::vector<double> expectedLosses;
    // The optimizer as the options ask for it, not as the run settled it.
    OptimizerConfig adamW;
    adamW.kind = schedule::Optimizer::AdamW;
    adamW.lr = 0.01;
    adamW.weightDecay = 0.01;
    TensorMap expected = reference::emulate(
        shape, initial, run.data, 4, options.steps, adamW,
        reference::versionsOf(run.schedule, stageDevices, 4 * options.steps,
                              schedule::WeightVersions::None),
        &expectedLosses);
    EXPECT_LT(reference::maxRelativeDifference(result->weights, expected),
              1e-4);
    EXPECT_GT(reference::maxRelativeDifference(initial, expected), 1e-2);
    ASSERT_EQ(losses.size(), expectedLosses.size());
    for (size_t k = 0; k < expectedLosses.size(); ++k)
      EXPECT_NEAR(losses[k], expectedLosses[k], 1e-4 * (1 + expectedLosses[k]));
  }
}

// Zero-bubble schedules run the tiny MLP's split backwards (every stage
// splits) and train to 1F1B's weights, bit for bit.
TEST(Run, ZeroBubbleTrainsToOneFOneBsWeights) {
  ModelOptions model = tinyMlp("0,1,2,0");
  std::map<Kind, TensorMap> weights;
  for (Kind kind : {Kind::OneFOneB, Kind::ZeroBubbleH1, Kind::ZeroBubbleAuto}) {
    SCOPED_TRACE(schedule::nameOf(kind).str());
    RunOptions options = trainFor(kind, 3);
    llvm::Expected<TrainingRun> run = planTraining(model, options);
    ASSERT_TRUE(!!run) << llvm::toString(run.takeError());
    for (int64_t stage = 0; stage < 4; ++stage)
      EXPECT_EQ(run->config.schedule.splits(stage), kind != Kind::OneFOneB);
    ASSERT_EQ(errorOf(loadTraining(*run, model, options)), "");
    llvm::Expected<TrainingResult> result =
        runTraining(*run, options, {}, nullptr, nullptr);
    ASSERT_TRUE(!!result) << llvm::toString(result.takeError());
    weights[kind] = result->weights;
  }
  for (Kind kind : {Kind::ZeroBubbleH1, Kind::ZeroBubbleAuto})
    for (const auto &[name, tensor] : weights[Kind::OneFOneB])
      EXPECT_EQ(weights[kind].at(name).bytes, tensor.bytes)
          << schedule::nameOf(kind).str() << " " << name;
}

TEST(Run, WritesItsOutputsAndComparesWithTheSimulator) {
  llvm::SmallString<128> directory;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ftpipe-run", directory));
  ModelOptions model = tinyMlp("0,1,2,3");
  RunOptions options = trainFor(Kind::OneFOneB, 2);
  options.savePath = (directory + "/final.safetensors").str();
  options.tracePath = (directory + "/trace.json").str();
  options.compareSimulator = true;
  llvm::Expected<TrainingRun> run = planTraining(model, options);
  ASSERT_TRUE(!!run) << llvm::toString(run.takeError());
  ASSERT_EQ(errorOf(loadTraining(*run, model, options)), "");
  llvm::Expected<TrainingResult> result =
      runTraining(*run, options, {}, nullptr, nullptr);
  ASSERT_TRUE(!!result) << llvm::toString(result.takeError());
  ASSERT_EQ(result->traces.size(), 4u);
  for (const std::vector<TraceEvent> &trace : result->traces)
    EXPECT_FALSE(trace.empty());
  ASSERT_TRUE(result->timing.has_value());
  EXPECT_EQ(result->timing->microBatches, 8);
  llvm::Expected<SafetensorsFile> saved = readSafetensors(options.savePath);
  ASSERT_TRUE(!!saved) << llvm::toString(saved.takeError());
  EXPECT_EQ(saved->tensors.size(), result->weights.size());
  for (const auto &[name, tensor] : result->weights)
    EXPECT_EQ(saved->tensors.at(name).bytes, tensor.bytes) << name;
  EXPECT_TRUE(llvm::sys::fs::exists(options.tracePath));
  llvm::sys::fs::remove_directories(directory);
}

TEST(Run, RefusesBeforeAnythingRuns) {
  ModelOptions both = tinyMlp("0,1");
  both.artifacts = "somewhere";
  both.placement.reset();
  EXPECT_EQ(errorOf(planTraining(both, RunOptions())),
            "give an artifact directory or --model, not both");
  ModelOptions shaped;
  shaped.artifacts = "somewhere";
  shaped.hidden = 16;
  EXPECT_EQ(errorOf(planTraining(shaped, RunOptions())),
            "--hidden is an option of --model tiny-mlp; compiled artifacts "
            "bring their own plan and shapes");
  EXPECT_EQ(errorOf(planTraining(tinyMlp("0,x"), RunOptions())),
            "--placement: 'x' is not a device");

  ModelOptions model = tinyMlp("0,1,2,3");
  RunOptions missing = trainFor(Kind::ZeroBubbleH1, 2);
  missing.scheduleFile = "no-such-schedule.csv";
  EXPECT_NE(errorOf(planTraining(model, missing)).find("schedule file"),
            std::string::npos);
  // A whole run's lists from a file cannot resume: refused before the
  // checkpoint is read.
  llvm::SmallString<128> csv;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("zb-h1", "csv", csv));
  {
    std::error_code error;
    llvm::raw_fd_ostream out(csv, error);
    ASSERT_FALSE(error);
    out << "0F0,0F1,0F2,0F3,0I0,0W0,0I1,0W1,0I2,0W2,0I3,0W3\r\n";
  }
  RunOptions fromFile = trainFor(Kind::ZeroBubbleH1, 2);
  fromFile.scheduleFile = csv.str().str();
  fromFile.resumePath = "no-such-checkpoint";
  ModelOptions one = tinyMlp("0");
  llvm::Expected<TrainingRun> run = planTraining(one, fromFile);
  llvm::sys::fs::remove(csv);
  ASSERT_TRUE(!!run) << llvm::toString(run.takeError());
  EXPECT_EQ(errorOf(loadTraining(*run, one, fromFile)),
            "--schedule-file gives a whole run's lists; leave out --resume");

  RunOptions alone = trainFor(Kind::OneFOneB, 2);
  alone.checkpointDir = "checkpoints";
  run = planTraining(model, alone);
  ASSERT_TRUE(!!run) << llvm::toString(run.takeError());
  EXPECT_EQ(errorOf(loadTraining(*run, model, alone)),
            "give --checkpoint-dir and --checkpoint-every together");

  RunOptions threads = trainFor(Kind::OneFOneB, 2);
  threads.threads = 3;
  run = planTraining(model, threads);
  ASSERT_TRUE(!!run) << llvm::toString(run.takeError());
  ASSERT_EQ(errorOf(loadTraining(*run, model, threads)), "");
  EXPECT_EQ(errorOf(runTraining(*run, threads, {}, nullptr, nullptr)),
            "the plan has 4 devices, --devices 3");
}

TEST(Gather, OwnersWeightsAndEveryTimelineReachDeviceZero) {
  std::vector<ParameterInfo> parameters = {
      {"a", {2}, DType::F32}, {"b", {3}, DType::F32}, {"c", {1}, DType::F32}};
  // b is tied: device 1 owns it, device 2 holds a copy.
  ParameterPlacement placement = {{"a", {0}}, {"b", {1, 2}}, {"c", {2}}};
  std::vector<TensorMap> owned(3);
  for (const ParameterInfo &param : parameters) {
    Tensor value(param.type, param.shape);
    for (float &x : value.f32Values())
      x = 10 * placement.at(param.name).front() + param.shape[0];
    owned[placement.at(param.name).front()][param.name] = value;
  }
  LocalMailbox mailbox(3, /*timeoutSeconds=*/10);
  std::vector<TensorMap> weights(3);
  std::vector<std::vector<std::vector<TraceEvent>>> traces(3);
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < 3; ++d)
    threads.emplace_back([&, d] {
      Communicator &communicator = mailbox.endpoint(d);
      weights[d] = gatherWeights(communicator, parameters, placement, owned[d]);
      traces[d] = gatherTraces(communicator,
                               std::vector<TraceEvent>(d + 1, TraceEvent()));
    });
  for (std::thread &thread : threads)
    thread.join();
  ASSERT_EQ(weights[0].size(), 3u);
  for (const auto &[name, tensor] : weights[0])
    EXPECT_EQ(tensor.bytes, owned[placement.at(name).front()].at(name).bytes)
        << name;
  ASSERT_EQ(traces[0].size(), 3u);
  for (int64_t d = 0; d < 3; ++d)
    EXPECT_EQ(traces[0][d].size(), size_t(d + 1));
  EXPECT_EQ(traces[1].size(), 1u);
}

} // namespace
