//===- SetupCheckTest.cpp - ftpipe-run's memory check of a setup ---------===//
//
// checkRunMemory counts a replicated device as the planner does
// (schedule::checkMemory): its all-reduce's buffer beside its weights'
// state, on the run's layout; the planner's and the run's checks agree at
// the budget.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/SetupCheck.h"
#include "FTPipe/Partition/ReplicaSearch.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

namespace {

template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}

/// A manifest of `topology`'s stages (each forward receiving a tag from
/// each of its producers) with `memory` as its `device_memory`.
ArtifactManifest manifestOf(const schedule::StageGraph &topology,
                            std::vector<schedule::DeviceMemoryInputs> memory) {
  ArtifactManifest manifest;
  for (int64_t d = 0; d < topology.devices; ++d)
    manifest.artifacts.push_back("device" + std::to_string(d) + ".so");
  for (size_t s = 0; s < topology.device.size(); ++s) {
    ManifestStage stage;
    stage.id = int64_t(s);
    stage.device = topology.device[s];
    stage.forward = "forward" + std::to_string(s);
    manifest.stages.push_back(stage);
    EntryPoint &forward = manifest.entryPoints[stage.forward];
    forward.name = stage.forward;
    forward.device = stage.device;
    forward.stage = int64_t(s);
  }
  for (size_t s = 0; s < topology.producers.size(); ++s)
    for (int64_t producer : topology.producers[s]) {
      int64_t tag = producer * 1000 + int64_t(s);
      ManifestTransfer send, receive;
      send.tag = receive.tag = tag;
      receive.send = false;
      manifest.entryPoints["forward" + std::to_string(producer)]
          .transfers.push_back(send);
      manifest.entryPoints["forward" + std::to_string(s)].transfers.push_back(
          receive);
    }
  manifest.deviceMemory = std::move(memory);
  return manifest;
}

TEST(SetupCheck, ReplicasHoldTheirAllReducesBuffer) {
  // One device, one stage of 1 MB of weights and 1 kB kept per micro-batch:
  // SGD keeps 2 MB and a little of activations; its replicas all-reduce the
  // 1 MB of gradients from a copy, beside the 2 MB. A budget between the
  // two figures runs one process and refuses two.
  ArtifactManifest manifest;
  manifest.artifacts = {"device0.so"};
  ManifestStage stage;
  stage.forward = "forward0";
  manifest.stages = {stage};
  manifest.entryPoints["forward0"].name = "forward0";
  schedule::DeviceMemoryInputs inputs;
  inputs.stages = {{0, 1000}};
  inputs.paramBytesByHeight = {1'000'000};
  manifest.deviceMemory = {inputs};
  schedule::TrainingSetup setup;
  setup.schedule = schedule::Kind::GPipe;
  setup.microBatches = 2;
  setup.optimizer = schedule::Optimizer::SGD;
  schedule::ReplicaLayout one = schedule::ReplicaLayout::none(1), two;
  two.replicas = {2};

  std::vector<schedule::DeviceMemory> planned =
      plannedMemory(manifest, setup, one);
  ASSERT_EQ(planned.size(), 1u);
  uint64_t state = planned[0].totalBytes() - planned[0].activationBytes;
  EXPECT_EQ(state, 2'000'000u);
  ASSERT_LT(planned[0].activationBytes, 1'000'000u);

  manifest.deviceMemory[0].budgetBytes = state + 1'000'000 - 1;
  EXPECT_FALSE(bool(checkRunMemory(manifest, setup, one)));
  llvm::Error refused = checkRunMemory(manifest, setup, two);
  ASSERT_TRUE(bool(refused));
  std::string message = llvm::toString(std::move(refused));
  EXPECT_NE(message.find("3000000 bytes while its replicas' all-reduce "
                         "buffer of 1000000 bytes is held"),
            std::string::npos)
      << message;
  // The manifest's own layout is not what is checked: the run's is.
  manifest.replicas = two;
  EXPECT_FALSE(bool(checkRunMemory(manifest, setup, one)));

  manifest.deviceMemory[0].budgetBytes = state + 1'000'000;
  EXPECT_FALSE(bool(checkRunMemory(manifest, setup, two)));
}

TEST(SetupCheck, ThePlannersCheckAndTheRunsAgreeAtTheBudget) {
  // 4 layers of 1 MB weights under 1F1B with SGD, as 2 identical pipelines
  // of 2 devices: each device keeps 4 MB and a little of activations, and
  // 6 MB while its replicas' all-reduce buffer of 2 MB is held. On devices
  // of exactly what the fullest one needs, the planner's option is feasible
  // and ftpipe-run starts it; one byte less, both refuse it, naming the same
  // device with the same figures.
  partition::GraphBuilder builder;
  for (int i = 0; i < 4; ++i) {
    partition::NodeId node = builder.addNode("layer" + std::to_string(i),
                                             "test.op", {1.0, 2.0, 0, 1000});
    builder.addParamUse(node,
                        builder.addParam("w" + std::to_string(i), 1'000'000));
  }
  for (int i = 0; i + 1 < 4; ++i)
    builder.addValue(partition::NodeId(i), 1000, {partition::NodeId(i + 1)},
                     true);
  partition::Graph graph = unwrap(builder.build());
  partition::ObjectiveConfig config;
  config.schedule = schedule::Kind::OneFOneB;
  config.optimizer = schedule::Optimizer::SGD;
  config.microBatches = 4;
  schedule::TrainingSetup setup = partition::trainingSetupOf(config);
  schedule::ReplicaLayout layout = schedule::ReplicaLayout::uniform(2, 2);
  auto hardware = [](uint64_t memory) {
    partition::HardwareSpec spec;
    spec.name = "test";
    for (int i = 0; i < 4; ++i)
      spec.devices.push_back(
          {"dev" + std::to_string(i), memory, 1.0, 100.0, 0.0, 0});
    spec.intraNode = spec.network = {1000.0, 0.0};
    return unwrap(partition::Hardware::create(spec));
  };

  partition::Hardware roomy = hardware(1ull << 40);
  partition::Hardware pipeline =
      unwrap(partition::pipelineHardware(roomy, layout));
  partition::Plan plan;
  plan.nodeStage = {0, 0, 1, 1};
  plan.stageDevice = {0, 1};
  partition::ReplicaOption scored =
      unwrap(partition::scoreReplicated(graph, roomy, plan, layout, config));
  ASSERT_TRUE(scored.feasible) << scored.failure;
  partition::PlanMetrics metrics =
      unwrap(partition::evaluatePlan(graph, pipeline, plan, config));
  uint64_t fullest = *llvm::max_element(scored.memoryBytes);
  size_t device =
      llvm::find(scored.memoryBytes, fullest) - scored.memoryBytes.begin();
  // The rule binds, not the plan's own count (which ftpipe-run does not
  // know).
  for (const partition::DeviceMetrics &planned : metrics.devices)
    ASSERT_LT(planned.memoryBytes + 1'000'000, fullest);
  schedule::StageGraph topology =
      unwrap(partition::buildStageGraph(graph, pipeline, plan, config))
          .topology(2);
  ArtifactManifest manifest = manifestOf(topology, metrics.memoryInputs);
  ASSERT_EQ(manifest.stageGraph().producers, topology.producers);

  for (uint64_t budget : {fullest, fullest - 1}) {
    SCOPED_TRACE(budget);
    partition::ReplicaOption planner = unwrap(partition::scoreReplicated(
        graph, hardware(budget), plan, layout, config));
    for (schedule::DeviceMemoryInputs &inputs : manifest.deviceMemory)
      inputs.budgetBytes = budget;
    llvm::Error run = checkRunMemory(manifest, setup, layout);
    EXPECT_EQ(planner.feasible, budget == fullest) << planner.failure;
    EXPECT_EQ(bool(run), !planner.feasible);
    std::string refusal = llvm::toString(std::move(run));
    if (planner.feasible)
      continue;
    EXPECT_EQ(planner.failure.rfind("does not fit in memory as replicas 2,2: "
                                    "device " +
                                        std::to_string(device) + " needs " +
                                        std::to_string(fullest) + " bytes",
                                    0),
              0u)
        << planner.failure;
    // The same rule, the same message: the run's adds its setups.
    EXPECT_NE(refusal.find(planner.failure), std::string::npos)
        << refusal << "\n"
        << planner.failure;
    EXPECT_NE(refusal.find("--allow-over-budget"), std::string::npos);
  }
}

} // namespace
