//===- MigrationTest.cpp - Moving state between two plans' placements -----===//
//
// partitionState's hand-over rule and migrateState's exchange over the
// in-process communicator (three devices as threads): every device ends
// with exactly the weights its new stages read and the optimizer state of
// the parameters it now owns, bit for bit. The whole runtime path (a run
// that migrates equals one that does not) is test/Runtime/migration.test.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Migration.h"
#include "FTPipe/Runtime/TinyMlp.h"

#include "gtest/gtest.h"

#include <thread>

using namespace ftpipe;
using namespace ftpipe::runtime;

namespace {

/// A tensor of `n` floats, each `value` plus its index.
Tensor filled(int64_t n, float value) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = value + i;
  return Tensor::f32({n}, values);
}

std::vector<float> valuesOf(const Tensor &tensor) {
  return {tensor.f32Values().begin(), tensor.f32Values().end()};
}

/// Three parameters: "a" (4 floats), "b.weight" (3), tied "c" (2). Before:
/// a on 0, b.weight on 1, c on 1 with a copy on 2. After: a on 0 with a copy
/// on 2 (a placement's first holder owns), b.weight on 0, c on 2 alone.
const ParameterPlacement kFrom = {{"a", {0}}, {"b.weight", {1}}, {"c", {1, 2}}};
const ParameterPlacement kTo = {{"a", {0, 2}}, {"b.weight", {0}}, {"c", {2}}};
/// Both plans unreplicated: device d is process d.
const schedule::ReplicaLayout kThree = schedule::ReplicaLayout::none(3);
const ProcessPlacement kFromThree = {kFrom, kThree}, kToThree = {kTo, kThree};

/// Device `d`'s state under kFrom: its weights, and AdamW-like state of the
/// parameters it owns (values that say whose they are).
DeviceState stateBefore(int64_t d) {
  DeviceState state;
  state.updates = 5;
  const std::map<std::string, int64_t> sizes = {
      {"a", 4}, {"b.weight", 3}, {"c", 2}};
  for (const auto &[name, holders] : kFrom) {
    if (std::find(holders.begin(), holders.end(), d) == holders.end())
      continue;
    state.weights[name] = filled(sizes.at(name), 10.0f * sizes.at(name));
    if (holders.front() == d) {
      state.optimizerState[name + ".exp_avg"] =
          filled(sizes.at(name), 100.0f * sizes.at(name));
      state.optimizerState[name + ".exp_avg_sq"] =
          filled(sizes.at(name), 1000.0f * sizes.at(name));
    }
  }
  return state;
}

std::vector<std::string> names(const TensorMap &tensors) {
  std::vector<std::string> result;
  for (const auto &entry : tensors)
    result.push_back(entry.first);
  return result;
}

TEST(Migration, PartitionSendsWeightsToHoldersAndStateToOwners) {
  auto parts = partitionState(1, kFromThree, kToThree, stateBefore(1));
  ASSERT_TRUE(bool(parts)) << llvm::toString(parts.takeError());
  // Device 1 owned b.weight and c: b.weight (and its state) go to 0, c (and
  // its state) to 2; device 1 keeps nothing.
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ(names(parts->at(0).weights), std::vector<std::string>{"b.weight"});
  EXPECT_EQ(
      names(parts->at(0).optimizerState),
      (std::vector<std::string>{"b.weight.exp_avg", "b.weight.exp_avg_sq"}));
  EXPECT_EQ(names(parts->at(2).weights), std::vector<std::string>{"c"});
  EXPECT_EQ(names(parts->at(2).optimizerState),
            (std::vector<std::string>{"c.exp_avg", "c.exp_avg_sq"}));
  EXPECT_EQ(parts->at(2).updates, 5);
  // A copy sends nothing: device 2 held c as a copy.
  auto copy = partitionState(2, kFromThree, kToThree, stateBefore(2));
  ASSERT_TRUE(bool(copy));
  EXPECT_TRUE(copy->empty());
  // Device 0 owned a and still does: it keeps the value and the state, and
  // sends the value alone to the new copy on 2.
  auto owner = partitionState(0, kFromThree, kToThree, stateBefore(0));
  ASSERT_TRUE(bool(owner));
  EXPECT_EQ(names(owner->at(0).weights), std::vector<std::string>{"a"});
  EXPECT_EQ(names(owner->at(0).optimizerState),
            (std::vector<std::string>{"a.exp_avg", "a.exp_avg_sq"}));
  EXPECT_EQ(names(owner->at(2).weights), std::vector<std::string>{"a"});
  EXPECT_TRUE(owner->at(2).optimizerState.empty());
}

TEST(Migration, PartitionRefusesStateItDoesNotOwnAndOtherModels) {
  DeviceState foreign = stateBefore(2);
  foreign.optimizerState["c.exp_avg"] = filled(2, 0);
  auto refused = partitionState(2, kFromThree, kToThree, foreign);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()),
            "device 2 holds optimizer state 'c.exp_avg' of a parameter it "
            "does not own");
  ParameterPlacement other = kTo;
  other.erase("c");
  other["d"] = {0};
  auto otherModel =
      partitionState(0, kFromThree, {other, kThree}, stateBefore(0));
  ASSERT_FALSE(bool(otherModel));
  EXPECT_EQ(llvm::toString(otherModel.takeError()),
            "parameter 'c' is not in the next plan");
}

TEST(Migration, EveryDeviceEndsWithItsNewShareBitForBit) {
  constexpr int64_t devices = 3;
  LocalMailbox mailbox(devices, /*timeoutSeconds=*/10);
  std::vector<DeviceState> after(devices);
  std::vector<MigrationTraffic> traffic(devices);
  std::vector<std::string> errors(devices);
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < devices; ++d)
    threads.emplace_back([&, d] {
      auto moved = migrateState(mailbox.endpoint(d), kFromThree, kToThree,
                                stateBefore(d), &traffic[d]);
      if (moved)
        after[d] = std::move(*moved);
      else
        errors[d] = llvm::toString(moved.takeError());
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int64_t d = 0; d < devices; ++d)
    ASSERT_EQ(errors[d], "") << "device " << d;
  EXPECT_EQ(mailbox.pending(), 0u);
  // What each device reads and owns under kTo, and nothing else.
  EXPECT_EQ(names(after[0].weights),
            (std::vector<std::string>{"a", "b.weight"}));
  EXPECT_EQ(
      names(after[0].optimizerState),
      (std::vector<std::string>{"a.exp_avg", "a.exp_avg_sq", "b.weight.exp_avg",
                                "b.weight.exp_avg_sq"}));
  EXPECT_TRUE(after[1].weights.empty());
  EXPECT_TRUE(after[1].optimizerState.empty());
  EXPECT_EQ(names(after[2].weights), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(names(after[2].optimizerState),
            (std::vector<std::string>{"c.exp_avg", "c.exp_avg_sq"}));
  for (const DeviceState &state : after)
    EXPECT_EQ(state.updates, 5);
  // The values are the old owners'.
  EXPECT_EQ(valuesOf(after[2].weights.at("a")),
            (std::vector<float>{40, 41, 42, 43}));
  EXPECT_EQ(valuesOf(after[0].weights.at("a")),
            (std::vector<float>{40, 41, 42, 43}));
  EXPECT_EQ(valuesOf(after[0].optimizerState.at("b.weight.exp_avg_sq")),
            (std::vector<float>{3000, 3001, 3002}));
  EXPECT_EQ(valuesOf(after[2].optimizerState.at("c.exp_avg")),
            (std::vector<float>{200, 201}));
  // Device 0 kept a with its state, sent a's value to 2 and received
  // b.weight with its state from 1; 2 received a, and c with its state.
  EXPECT_EQ(traffic[0].tensorsSent, 1);
  EXPECT_EQ(traffic[0].tensorsReceived, 3);
  EXPECT_EQ(traffic[1].tensorsSent, 6);
  EXPECT_EQ(traffic[1].tensorsReceived, 0);
  EXPECT_EQ(traffic[2].tensorsSent, 0);
  EXPECT_EQ(traffic[2].tensorsReceived, 4);
  EXPECT_EQ(traffic[0].bytesSent + traffic[1].bytesSent,
            traffic[0].bytesReceived + traffic[2].bytesReceived);
}

/// Process `p`'s state under `plan`: the weights of the parameters its
/// device holds and the optimizer state of those it owns, each value a
/// function of the parameter's name alone (replicas hold the same).
DeviceState stateUnder(ProcessPlacement plan, int64_t p) {
  DeviceState state;
  state.updates = 7;
  int64_t device = plan.replicas.replicaOf(p).first;
  for (const auto &[name, holders] : plan.parameters) {
    if (std::find(holders.begin(), holders.end(), device) == holders.end())
      continue;
    float seed = float(name.front());
    state.weights[name] = filled(3, seed);
    if (holders.front() == device)
      state.optimizerState[name + ".exp_avg"] = filled(3, 100 * seed);
  }
  return state;
}

/// Runs migrateState on every process of `from` as threads; each process's
/// result, or its error.
std::vector<DeviceState> migrateAll(ProcessPlacement from, ProcessPlacement to,
                                    std::vector<MigrationTraffic> &traffic) {
  int64_t processes = from.replicas.processes();
  LocalMailbox mailbox(processes, /*timeoutSeconds=*/10);
  std::vector<DeviceState> after(processes);
  traffic.assign(processes, {});
  std::vector<std::thread> threads;
  for (int64_t p = 0; p < processes; ++p)
    threads.emplace_back([&, p] {
      auto moved = migrateState(mailbox.endpoint(p), from, to,
                                stateUnder(from, p), &traffic[p]);
      if (moved)
        after[p] = std::move(*moved);
      else
        ADD_FAILURE() << "process " << p << ": "
                      << llvm::toString(moved.takeError());
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(mailbox.pending(), 0u);
  return after;
}

void expectSameState(const DeviceState &actual, const DeviceState &expected,
                     int64_t p) {
  EXPECT_EQ(actual.updates, expected.updates) << "process " << p;
  EXPECT_EQ(names(actual.weights), names(expected.weights)) << "process " << p;
  EXPECT_EQ(names(actual.optimizerState), names(expected.optimizerState))
      << "process " << p;
  for (const auto &[name, value] : expected.weights)
    if (actual.weights.count(name))
      EXPECT_EQ(valuesOf(actual.weights.at(name)), valuesOf(value)) << name;
  for (const auto &[name, value] : expected.optimizerState)
    if (actual.optimizerState.count(name))
      EXPECT_EQ(valuesOf(actual.optimizerState.at(name)), valuesOf(value))
          << name;
}

TEST(Migration, ToReplicasAndBackEveryReplicaGetsItsCopy) {
  // 4 devices once (a; b; c tied between 2 and 3; d) and 2 devices twice
  // (device 0 on processes 0 and 1 holds a and a copy of c; device 1 on 2
  // and 3 owns b, c and d), on 4 processes.
  const ParameterPlacement four = {
      {"a", {0}}, {"b", {1}}, {"c", {2, 3}}, {"d", {3}}};
  const ParameterPlacement two = {
      {"a", {0}}, {"b", {1}}, {"c", {1, 0}}, {"d", {1}}};
  const schedule::ReplicaLayout none = schedule::ReplicaLayout::none(4),
                                twice = schedule::ReplicaLayout::uniform(2, 2);
  ProcessPlacement pipeline = {four, none}, replicated = {two, twice};
  std::vector<MigrationTraffic> traffic;
  std::vector<DeviceState> there = migrateAll(pipeline, replicated, traffic);
  for (int64_t p = 0; p < 4; ++p)
    expectSameState(there[p], stateUnder(replicated, p), p);
  // Process 0 kept a (and its state) and sent them to process 1, the other
  // replica of device 0; process 1 sent b with its state to 2 and 3.
  EXPECT_EQ(traffic[0].tensorsSent, 2);
  EXPECT_EQ(traffic[1].tensorsSent, 4);
  EXPECT_EQ(traffic[1].tensorsReceived, 3); // a, its state and c from 2
  // And back: each process ends with its first state. A process that ran a
  // replica of the old owner keeps its copy (2 and 3 keep c and d), and the
  // old owner's replicas share the sending: b goes to process 1 from device
  // 1's replica 1 mod 2, process 3.
  std::vector<DeviceState> back = migrateAll(replicated, pipeline, traffic);
  for (int64_t p = 0; p < 4; ++p)
    expectSameState(back[p], stateUnder(pipeline, p), p);
  EXPECT_EQ(traffic[2].tensorsSent, 0);
  EXPECT_EQ(traffic[3].tensorsSent, 2);
  // Another replica layout of as many processes: 2,1,1 on three devices.
  const ParameterPlacement three = {
      {"a", {0}}, {"b", {1}}, {"c", {2, 0}}, {"d", {2}}};
  const schedule::ReplicaLayout mixed = *schedule::parseReplicas("2,1,1", 3);
  std::vector<DeviceState> between =
      migrateAll(replicated, {three, mixed}, traffic);
  for (int64_t p = 0; p < 4; ++p)
    expectSameState(between[p], stateUnder({three, mixed}, p), p);
}

TEST(Migration, RefusesLayoutsOfOtherProcessCounts) {
  const ParameterPlacement two = {{"a", {0}}, {"b", {1}}};
  const schedule::ReplicaLayout none = schedule::ReplicaLayout::none(2),
                                twice = schedule::ReplicaLayout::uniform(2, 2);
  LocalMailbox mailbox(2, /*timeoutSeconds=*/10);
  auto moved = migrateState(mailbox.endpoint(0), {two, none}, {two, twice},
                            stateUnder({two, none}, 0));
  ASSERT_FALSE(bool(moved));
  EXPECT_EQ(llvm::toString(moved.takeError()),
            "the plans run as 2 and 4 processes, the run has 2");
}

/// The tiny MLP plans below: two devices, unreplicated.
const schedule::ReplicaLayout kTwo = schedule::ReplicaLayout::none(2);

/// A run of 6 steps of 2 micro-batches under 1F1B.
ExecutorConfig sixSteps() {
  ExecutorConfig config;
  config.schedule = {schedule::Kind::OneFOneB, 2, 6};
  return config;
}

TEST(Migration, PlanGeneratesTheRestUnderTheNextPlan) {
  TinyMlpShape shape;
  auto current = createTinyMlpModel(shape, {0, 1, 0, 1});
  auto planned = planMigration(*current, kTwo, sixSteps(),
                               createTinyMlpModel(shape, {1, 1, 0, 0}), "next",
                               /*atStep=*/4, /*allowOverBudget=*/false);
  ASSERT_TRUE(bool(planned)) << llvm::toString(planned.takeError());
  EXPECT_EQ(planned->atStep, 4);
  EXPECT_EQ(planned->model->placement().at("layers.0.weight").front(), 1);
  // The rest: steps 4 and 5, micro-batches 8 to 11, updates U4 and U5, on
  // the next plan's devices (stage 0 now on device 1).
  ASSERT_EQ(planned->rest.devices.size(), 2u);
  const std::vector<schedule::Action> &device1 = planned->rest.devices[1];
  ASSERT_FALSE(device1.empty());
  EXPECT_EQ(device1.front(), schedule::Action::forward(0, 8));
  EXPECT_EQ(device1.back(), schedule::Action::update(5));
  int64_t updates = 0;
  for (const schedule::Action &action : device1)
    updates += action.kind == schedule::ActionKind::Update;
  EXPECT_EQ(updates, 2);
}

TEST(Migration, PlanRefusesOtherModelsDevicesAndSteps) {
  TinyMlpShape shape;
  auto current = createTinyMlpModel(shape, {0, 1, 0, 1});
  auto refusal = [&](std::unique_ptr<PipelineModel> next, int64_t atStep) {
    auto planned = planMigration(*current, kTwo, sixSteps(), std::move(next),
                                 "next", atStep, false);
    return planned ? std::string() : llvm::toString(planned.takeError());
  };
  EXPECT_EQ(refusal(createTinyMlpModel(shape, {0, 1, 2, 1}), 3),
            "--migrate-to next: the plan has 3 devices, the run 2");
  TinyMlpShape wider = shape;
  wider.hidden = 16;
  EXPECT_EQ(
      refusal(createTinyMlpModel(wider, {1, 0, 1, 0}), 3)
          .rfind("--migrate-to next: not a plan of the running model: ", 0),
      0u);
  EXPECT_EQ(refusal(createTinyMlpModel(shape, {1, 0, 1, 0}), 6),
            "--migrate-at 6: the run migrates after a step and before its "
            "last, so from 1 to 5 with --steps 6");
}

TEST(Migration, FrozenParametersStayFrozenAndTheNextPlanFreezesNoMore) {
  TinyMlpShape shape;
  auto current = createTinyMlpModel(shape, {0, 1, 0, 1});
  ExecutorConfig config = sixSteps();
  config.frozen = {"layers.0.weight"};
  auto planned = planMigration(*current, kTwo, config,
                               createTinyMlpModel(shape, {1, 1, 0, 0}), "next",
                               /*atStep=*/3, /*allowOverBudget=*/false);
  ASSERT_TRUE(bool(planned)) << llvm::toString(planned.takeError());
  // The current plan's frozen parameters stay frozen under the next one.
  EXPECT_EQ(planned->config.frozen, config.frozen);
  EXPECT_FALSE(bool(
      checkFrozenAtMigration(*planned, {"layers.0.weight", "layers.0.bias"})));
  llvm::Error trained = checkFrozenAtMigration(*planned, {"layers.0.bias"});
  ASSERT_TRUE(bool(trained));
  EXPECT_EQ(llvm::toString(std::move(trained)),
            "--migrate-to next: the plan freezes 'layers.0.weight', which the "
            "run still trains after step 3 (its backward computes no "
            "gradient for it)");
}

} // namespace
