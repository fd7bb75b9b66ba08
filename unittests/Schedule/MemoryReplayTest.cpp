//===- MemoryReplayTest.cpp - A device's memory over its action list -----===//
//
// replayMemory's lifetimes on hand-made lists, sendsHeldUntil on hand-made
// and random lists (never shorter than a send lives in any order the lists
// allow), and replayedMemory against the additive bound (runtimeMemory) it
// replaces where lists can be built.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/MemoryReplay.h"

#include "RandomStageGraph.h"

#include "gtest/gtest.h"

#include <random>
#include <set>
#include <tuple>

using namespace ftpipe::schedule;

namespace {

std::vector<Action> parse(std::initializer_list<const char *> texts) {
  std::vector<Action> actions;
  for (const char *text : texts)
    actions.push_back(llvm::cantFail(parseAction(text)));
  return actions;
}

/// A list's sends, each gone as its action ends (no peers).
std::vector<size_t> alone(llvm::ArrayRef<Action> actions) {
  std::vector<size_t> until;
  for (size_t i = 0; i < actions.size(); ++i)
    until.push_back(i + 1);
  return until;
}

/// replayMemory of a list whose sends go as their action ends.
std::optional<ReplayPeak> replay(llvm::ArrayRef<Action> actions,
                                 const ReplayDevice &device) {
  return replayMemory(actions, alone(actions), device);
}

ReplayDevice oneStage(int64_t microBatches, WeightVersions versions) {
  ReplayDevice device;
  ReplayStage &stage = device.stages[0];
  stage.kept = 10;
  stage.forward = 5;
  stage.backward = 7;
  stage.input = 9;
  stage.weight = 3;
  stage.weightBuffer = 4;
  stage.backwardMessages = 1;
  device.weights = 100;
  device.trained = 80;
  device.optimizer = 160;
  device.update = 5;
  device.microBatches = microBatches;
  device.versions = versions;
  return device;
}

TEST(MemoryReplay, KeptBytesLiveFromForwardToBackward) {
  // GPipe: both micro-batches' kept bytes and the step's gradient set at B0.
  std::optional<ReplayPeak> peak =
      replay(parse({"0F0", "0F1", "0B0", "0B1", "U0"}),
             oneStage(2, WeightVersions::None));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 2u);
  EXPECT_EQ(peak->held.keptMicroBatches, 2);
  EXPECT_EQ(peak->held.gradients, 80);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 20 + 7 + 1);
  // 1F1B: one micro-batch's kept bytes at a time.
  peak = replay(parse({"0F0", "0B0", "0F1", "0B1", "U0"}),
                oneStage(2, WeightVersions::None));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 1u);
  EXPECT_EQ(peak->held.keptMicroBatches, 1);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 10 + 7 + 1);
  EXPECT_FALSE(replay({}, oneStage(2, WeightVersions::None)));
  std::vector<Action> one = parse({"0F0"});
  EXPECT_FALSE(replayMemory(one, {}, oneStage(2, WeightVersions::None)));
}

TEST(MemoryReplay, StashedCopyLivesUntilItsLastReader) {
  // Async, one micro-batch per step: at U0 micro-batch 1 still reads version
  // 0, so stashing copies the trained weights until B1.
  std::vector<Action> list =
      parse({"0F0", "0F1", "0B0", "U0", "0F2", "0B1", "U1", "0B2", "U2"});
  std::optional<ReplayPeak> stashed =
      replay(list, oneStage(1, WeightVersions::Stash));
  std::optional<ReplayPeak> none =
      replay(list, oneStage(1, WeightVersions::None));
  ASSERT_TRUE(stashed && none);
  EXPECT_EQ(stashed->held.stash, 80);
  EXPECT_EQ(stashed->bytes, none->bytes + 80);
  // 2BW keeps the same copies where one older version suffices.
  std::optional<ReplayPeak> doubled =
      replay(list, oneStage(1, WeightVersions::DoubleBuffered));
  ASSERT_TRUE(doubled);
  EXPECT_EQ(doubled->bytes, stashed->bytes);
  // Without a reader in flight at the update nothing is copied.
  std::optional<ReplayPeak> drained =
      replay(parse({"0F0", "0B0", "U0", "0F1", "0B1", "U1"}),
             oneStage(1, WeightVersions::Stash));
  ASSERT_TRUE(drained);
  EXPECT_EQ(drained->held.stash, 0);
}

TEST(MemoryReplay, WeightBufferLivesFromInputToWeightPart) {
  std::optional<ReplayPeak> peak =
      replay(parse({"0F0", "0F1", "0I0", "0I1", "0W0", "0W1", "U0"}),
             oneStage(2, WeightVersions::None));
  ASSERT_TRUE(peak);
  // At W0: both W buffers, no kept bytes, the gradient set open.
  EXPECT_EQ(peak->action, 4u);
  EXPECT_EQ(peak->held.weightBufferMicroBatches, 2);
  EXPECT_EQ(peak->held.keptMicroBatches, 0);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 8 + 3);
}

TEST(MemoryReplay, EachTaskCountsItsOwnPeakAndAnUpdateTheCacheLeft) {
  // Compiled code: a forward's peak holds the 100 bytes it saves and 30 of
  // scratch, a backward's 50. The runtime bounds the allocator's cache by
  // the running task's own peak (HostAllocator.h), so B0 counts 50 beside
  // both micro-batches' saved values (590); counting the device's largest
  // peak during every task gave 670.
  ReplayDevice device = oneStage(2, WeightVersions::None);
  ReplayStage &stage = device.stages[0];
  stage.kept = 100;
  stage.forward = 130;
  stage.backward = 50;
  stage.backwardMessages = 0;
  stage.adopted = true;
  std::vector<Action> list = parse({"0F0", "0F1", "0B0", "0B1", "U0"});
  std::optional<ReplayPeak> peak = replay(list, device);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 2u);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 200 + 50);
  // The cache B1 leaves holds its 50 and the 100 saved bytes it freed, which
  // an update with much scratch counts beside it.
  device.update = 300;
  peak = replay(list, device);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 4u);
  EXPECT_EQ(peak->carried, 150);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 300 + 150);
  // Saved values the runtime copied are freed for good; data slices too.
  stage.adopted = false;
  stage.transient = 10;
  peak = replay(list, device);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->carried, 40);
}

TEST(MemoryReplay, EachActionsCacheBoundFillsTheRoomThePeakLeaves) {
  // GPipe on one stage: totals 265 (F0), 275 (F1), 368 (B0, the peak), 358
  // (B1) and, at U0, 340 held with the update's 5 and the 7 B1 left in the
  // cache. Each action's bound is what the replay counts for the generated
  // code then (a task's 5 or 7 bytes, the update's carried 7) and the room
  // the peak leaves beside its total: a cache filled to it holds the device
  // at the peak, never above it. Bounding every task by its own peak only
  // (before 2026-11-28) left the cache no room for the buffers of the next
  // task, which came fresh from the system each time.
  std::vector<Action> list = parse({"0F0", "0F1", "0B0", "0B1", "U0"});
  std::optional<ReplayPeak> peak =
      replay(list, oneStage(2, WeightVersions::None));
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->bytes, 368);
  EXPECT_EQ(peak->cacheBounds,
            (std::vector<int64_t>{5 + 103, 5 + 93, 7, 7 + 10, 7 + 16}));
}

TEST(MemoryReplay, ATaskCountsTheLargestMessageItReceives) {
  // The communicator holds a received message beside the buffer it is
  // delivered into while the task runs, then frees it: 1F1B's B0 counts
  // the backward's 3 (and its 1 sent), not the forward's 2; no later
  // action holds them.
  ReplayDevice device = oneStage(2, WeightVersions::None);
  device.stages[0].forwardReceive = 2;
  device.stages[0].backwardReceive = 3;
  std::optional<ReplayPeak> peak =
      replay(parse({"0F0", "0B0", "0F1", "0B1", "U0"}), device);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 1u);
  EXPECT_EQ(peak->messages, 1 + 3);
  EXPECT_EQ(peak->bytes, 100 + 80 + 160 + 10 + 7 + 1 + 3);
}

TEST(MemoryReplay, APlanCountsAForwardsOwnWorkingSet) {
  // Device 1 of a chain under GPipe: its second forward holds the first
  // micro-batch's 100 kept bytes and its own working set of 180 (its saved
  // values among them), more than the backward's 50 beside both.
  StageGraph graph = StageGraph::chain({0, 1});
  std::vector<DeviceMemoryInputs> inputs(2);
  for (DeviceMemoryInputs &device : inputs) {
    DeviceMemoryInputs::Stage stage;
    stage.keptBytesPerMicroBatch = 100;
    stage.recomputePeakBytes = 50;
    stage.forwardWorkingBytes = 180;
    device.stages.push_back(stage);
    device.paramBytesByHeight = {0, 0};
    device.budgetBytes = uint64_t(1) << 30;
  }
  inputs[0].stages[0].height = 1;
  TrainingSetup setup;
  setup.schedule = Kind::GPipe;
  setup.microBatches = 2;
  std::vector<DeviceMemory> replayed = replayedMemory(graph, inputs, setup);
  ASSERT_EQ(replayed.size(), 2u);
  EXPECT_EQ(replayed[1].activationBytes, 100u + 180u);
  EXPECT_LE(replayed[1].totalBytes(),
            runtimeMemory(inputs[1], setup).totalBytes());
  // Without it (the cost model) a forward adds the working set and its
  // kept bytes.
  inputs[1].stages[0].forwardWorkingBytes = 0;
  EXPECT_EQ(replayedMemory(graph, inputs, setup)[1].activationBytes,
            200u + 50u);
}

TEST(MemoryReplay, ATiedParametersExchangeHoldsTwoCopies) {
  // GPT-2's embedding tied to a head on another device: at the update the
  // copy's gradient waits in a send buffer while the value arrives in a
  // message buffer, and the owner receives into a message buffer and adds
  // from a copy; an owner of three copies sends its value three times.
  EXPECT_EQ(tiedExchangeBytes(100, 2, /*owner=*/false), 200u);
  EXPECT_EQ(tiedExchangeBytes(100, 2, /*owner=*/true), 200u);
  EXPECT_EQ(tiedExchangeBytes(100, 4, /*owner=*/true), 300u);
  EXPECT_EQ(tiedExchangeBytes(100, 1, /*owner=*/true), 0u);

  // The copy's gradients are summed, its state is the owner's: 294.5 MiB of
  // AdamW state the plan counted for GPT-2 124M's embedding copy.
  DeviceMemoryInputs copy;
  copy.paramBytesByHeight = {1000};
  copy.tiedCopyBytes = 400;
  TrainingSetup setup;
  setup.optimizer = Optimizer::AdamW;
  DeviceMemory memory = deviceMemory(copy, setup);
  EXPECT_EQ(memory.gradientBytes, 1000u);
  EXPECT_EQ(memory.optimizerBytes, 1200u);
  DeviceMemoryInputs read;
  llvm::json::Path::Root root;
  ASSERT_TRUE(fromJSON(toJSON(copy), read, root));
  EXPECT_EQ(read.tiedCopyBytes, 400u);
}

Schedule
lists(std::initializer_list<std::initializer_list<const char *>> devices) {
  Schedule schedule;
  for (auto device : devices)
    schedule.devices.push_back(parse(device));
  return schedule;
}

TEST(MemoryReplay, SendsWaitUntilTheSenderHearsOfTheirReceive) {
  // GPipe over stages 0 and 1 on devices 0 and 1. Device 0 first hears of
  // 1F0 and 1F1 at 0B0, which receives 1B0's gradient (sent after both
  // ran): its forwards' buffers go after that receive, before 0B0's work
  // (0F0's is held through 0F1).
  StageGraph graph = StageGraph::chain({0, 1});
  Schedule gpipe = lists(
      {{"0F0", "0F1", "0B0", "0B1", "U0"}, {"1F0", "1F1", "1B0", "1B1", "U0"}});
  EXPECT_EQ(sendsHeldUntil(gpipe, graph)[0],
            (std::vector<size_t>{2, 2, 3, 4, 5}));
  // Device 1 receives nothing after its backwards: their gradients stay to
  // the end of its list.
  EXPECT_EQ(sendsHeldUntil(gpipe, graph)[1],
            (std::vector<size_t>{1, 2, 5, 5, 5}));

  // In the replay the second backward holds the first one's message, and
  // the update both.
  ReplayDevice last = oneStage(2, WeightVersions::None);
  last.stages[1] = last.stages[0];
  std::optional<ReplayPeak> peak =
      replayMemory(gpipe.devices[1], sendsHeldUntil(gpipe, graph)[1], last);
  std::optional<ReplayPeak> alonePeak = replay(gpipe.devices[1], last);
  ASSERT_TRUE(peak && alonePeak);
  EXPECT_EQ(alonePeak->pending, 0);
  EXPECT_EQ(peak->action, 2u);
  EXPECT_EQ(peak->pending, 0);
  std::vector<size_t> until = sendsHeldUntil(gpipe, graph)[1];
  ReplayDevice heavy = last;
  heavy.stages[1].backwardMessages = 1000;
  peak = replayMemory(gpipe.devices[1], until, heavy);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->action, 3u);
  EXPECT_EQ(peak->pending, 1000);
  EXPECT_EQ(peak->messages, 1000);

  // Lists that cannot run (device 0's backward waits for device 1's, which
  // waits for the forward device 0 runs after it) hold every send to their
  // end.
  Schedule stuck = lists({{"0B0", "0F0", "U0"}, {"1F0", "1B0", "U0"}});
  EXPECT_EQ(sendsHeldUntil(stuck, graph)[0], (std::vector<size_t>{1, 3, 3}));
}

TEST(MemoryReplay, SendsGoAtTheFirstCallAfterTheSenderHears) {
  // A chain over devices 0, 1 and 2 under 1F1B with 3 micro-batches.
  StageGraph graph = StageGraph::chain({0, 1, 2});
  ScheduleConfig config;
  config.kind = Kind::OneFOneB;
  config.microBatches = 3;
  llvm::Expected<Schedule> plan = generate(graph, config);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  ASSERT_EQ(plan->devices[0],
            parse({"0F0", "0F1", "0F2", "0B0", "0B1", "0B2", "U0"}));
  ASSERT_EQ(plan->devices[1],
            parse({"1F0", "1F1", "1B0", "1F2", "1B1", "1B2", "U0"}));
  // Device 0 hears of 1F0 and 1F1 at 0B0 (1B0's gradient, which 2B0's
  // preceded) and of 1F2 at 0B1.
  EXPECT_EQ(sendsHeldUntil(*plan, graph)[0],
            (std::vector<size_t>{3, 3, 4, 4, 5, 6, 7}));
  // Device 1 hears of 2F0 at 1B0, of 2F1 at 1B1, of 2F2 at 1B2. Device 0
  // sends nothing after its backwards, so device 1 never hears that they
  // got its gradients.
  EXPECT_EQ(sendsHeldUntil(*plan, graph)[1],
            (std::vector<size_t>{2, 4, 7, 5, 7, 7, 7}));

  // Split backwards: an I receives and sends as B does, a W neither.
  // Device 0 hears of 1F0 and 1F1 at 0I0 (1I0's gradient).
  Schedule split = lists({{"0F0", "0F1", "0I0", "0W0", "0I1", "0W1", "U0"},
                          {"1F0", "1F1", "1I0", "1W0", "1I1", "1W1", "U0"}});
  StageGraph two = StageGraph::chain({0, 1});
  EXPECT_EQ(sendsHeldUntil(split, two)[0],
            (std::vector<size_t>{2, 2, 3, 4, 5, 6, 7}));
}

/// Whether `until` (sendsHeldUntil of `process`) covers how long each send
/// lives in a random execution of `lists`: every action's receives wait
/// for their senders' sends, the processes' steps (receive, compute, send)
/// interleave at random, and a communicator call (before and after an
/// action's receives, after each of its sends) frees the sends whose
/// receivers have all received.
void expectCoversRandomRuns(const Schedule &lists, const StageGraph &graph,
                            std::mt19937 &rng) {
  std::vector<std::vector<int64_t>> consumers = graph.consumers();
  auto receivers = [&](const Action &action) {
    std::vector<Action> to;
    if (action.kind == ActionKind::Forward)
      for (int64_t c : consumers[action.stage])
        to.push_back(Action::forward(c, action.index));
    if (action.kind == ActionKind::Backward ||
        action.kind == ActionKind::InputBackward)
      for (int64_t p : graph.producers[action.stage])
        to.push_back(Action::backward(p, action.index));
    return to;
  };
  auto senders = [&](const Action &action) {
    std::vector<Action> from;
    if (action.kind == ActionKind::Forward)
      for (int64_t p : graph.producers[action.stage])
        from.push_back(Action::forward(p, action.index));
    if (action.kind == ActionKind::Backward ||
        action.kind == ActionKind::InputBackward)
      for (int64_t c : consumers[action.stage])
        from.push_back(Action::backward(c, action.index));
    return from;
  };
  // B and I of one stage and micro-batch are one receiver.
  auto key = [](Action action) {
    if (action.kind == ActionKind::InputBackward)
      action.kind = ActionKind::Backward;
    return std::make_tuple(int(action.kind), action.stage, action.index);
  };
  size_t processes = lists.devices.size();
  std::vector<std::vector<size_t>> until = sendsHeldUntil(lists, graph);
  std::set<std::tuple<int, int64_t, int64_t>> received, sent;
  // Per process: next action, its phase (0 receive, 1 compute, 2 send),
  // and the actions whose sends it holds.
  std::vector<size_t> next(processes, 0);
  std::vector<int> phase(processes, 0);
  std::vector<std::set<size_t>> holding(processes);
  auto call = [&](size_t p) {
    for (auto it = holding[p].begin(); it != holding[p].end();) {
      std::vector<Action> to = receivers(lists.devices[p][*it]);
      bool done = llvm::all_of(
          to, [&](const Action &a) { return received.count(key(a)); });
      it = done ? holding[p].erase(it) : std::next(it);
    }
  };
  while (true) {
    std::vector<size_t> ready;
    for (size_t p = 0; p < processes; ++p) {
      if (next[p] >= lists.devices[p].size())
        continue;
      const Action &action = lists.devices[p][next[p]];
      if (phase[p] == 0 && !llvm::all_of(senders(action), [&](const Action &a) {
            return sent.count(key(a));
          }))
        continue;
      ready.push_back(p);
    }
    if (ready.empty())
      break;
    size_t p = ready[rng() % ready.size()];
    size_t c = next[p];
    const Action &action = lists.devices[p][c];
    if (phase[p] == 0) {
      // A call before the receives and one after them.
      if (!senders(action).empty()) {
        call(p);
        received.insert(key(action));
        call(p);
      }
      phase[p] = 1;
    } else if (phase[p] == 1) {
      for (size_t a : holding[p])
        EXPECT_GT(until[p][a], c) << "process " << p << " action " << c
                                  << " holds the send of action " << a;
      phase[p] = 2;
    } else {
      if (!receivers(action).empty()) {
        holding[p].insert(c);
        sent.insert(key(action));
        call(p);
      }
      phase[p] = 0;
      ++next[p];
    }
  }
}

TEST(MemoryReplay, SendsHeldCoverEveryOrderOnRandomGraphs) {
  std::mt19937 rng(25);
  for (int trial = 0; trial < 200; ++trial) {
    StageGraph graph = test::randomGraph(rng);
    ScheduleConfig config;
    Kind kinds[] = {Kind::GPipe, Kind::OneFOneB, Kind::Async,
                    Kind::ZeroBubbleH1};
    config.kind = kinds[rng() % 4];
    config.microBatches = 1 + rng() % 4;
    config.steps = 1 + rng() % 3;
    llvm::Expected<Schedule> plan = generate(graph, config);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    for (int run = 0; run < 5; ++run)
      expectCoversRandomRuns(*plan, graph, rng);
    if (HasFailure())
      FAIL() << "trial " << trial << ":\n" << plan->str();
  }
}

/// Stages 0 and 2 on device 0, stage 1 on device 1 (GPT-2's tied plan).
DeviceMemoryInputs device(uint32_t stages) {
  DeviceMemoryInputs inputs;
  for (uint32_t s = 0; s < stages; ++s) {
    DeviceMemoryInputs::Stage stage;
    stage.height = stages == 2 ? 2 - 2 * s : 1;
    stage.keptBytesPerMicroBatch = 10000;
    stage.recomputePeakBytes = 3000;
    stage.weightWorkingBytes = 3000;
    inputs.stages.push_back(stage);
  }
  inputs.paramBytesByHeight = {20000, 0, 0};
  inputs.updateWorkingBytes = 0;
  inputs.largestParamBytes = 5000;
  inputs.budgetBytes = uint64_t(1) << 30;
  return inputs;
}

TEST(MemoryReplay, ReplayBoundsTighterThanEachTermsMaximum) {
  StageGraph graph = StageGraph::chain({0, 1, 0});
  std::vector<DeviceMemoryInputs> inputs = {device(2), device(1)};
  for (Kind kind : {Kind::GPipe, Kind::OneFOneB, Kind::Async}) {
    TrainingSetup setup;
    setup.schedule = kind;
    setup.microBatches = 4;
    setup.optimizer = Optimizer::AdamW;
    setup.weightVersions = WeightVersions::Stash;
    std::vector<DeviceMemory> replayed = replayedMemory(graph, inputs, setup);
    ASSERT_EQ(replayed.size(), 2u);
    for (size_t d = 0; d < 2; ++d)
      EXPECT_LE(replayed[d].totalBytes(),
                runtimeMemory(inputs[d], setup).totalBytes())
          << nameOf(kind).str() << " device " << d;
    if (kind != Kind::Async)
      continue;
    // Device 0 never holds two gradient sets, a stashed copy and every
    // micro-batch's kept bytes at once, which the additive bound adds.
    EXPECT_LT(replayed[0].totalBytes(),
              runtimeMemory(inputs[0], setup).totalBytes());
    // Adafactor's update works in doubles on the largest parameter.
    setup.optimizer = Optimizer::Adafactor;
    setup.weightVersions = WeightVersions::None;
    DeviceMemory before = replayedMemory(graph, inputs, setup)[1];
    inputs[1].largestParamBytes = 1 << 20;
    EXPECT_GT(replayedMemory(graph, inputs, setup)[1].totalBytes(),
              before.totalBytes());
  }
}

TEST(MemoryReplay, ReplicasCountTheirOwnLists) {
  // A chain of stages on devices 0 and 1, device 1 run twice under 1F1B
  // with M = 8: made for the layout, device 0 starts 3 micro-batches
  // before its first backward (its own process and device 1's two), where
  // the plan alone starts 2; each of device 1's replicas holds what the
  // plan's device 1 holds.
  StageGraph graph = StageGraph::chain({0, 1});
  DeviceMemoryInputs first, second;
  for (DeviceMemoryInputs *inputs : {&first, &second}) {
    DeviceMemoryInputs::Stage stage;
    stage.keptBytesPerMicroBatch = 10000;
    inputs->stages.push_back(stage);
    inputs->paramBytesByHeight = {0, 0};
    inputs->budgetBytes = uint64_t(1) << 30;
  }
  first.stages[0].height = 1;
  std::vector<DeviceMemoryInputs> inputs = {first, second};
  TrainingSetup setup;
  setup.schedule = Kind::OneFOneB;
  setup.microBatches = 8;
  std::vector<DeviceMemory> plain = replayedMemory(graph, inputs, setup);
  std::vector<DeviceMemory> replicated =
      replayedMemory(graph, inputs, setup, {1, 2});
  ASSERT_EQ(replicated.size(), 2u);
  EXPECT_EQ(replicated[0].activationBytes, plain[0].activationBytes + 10000);
  EXPECT_EQ(replicated[1].activationBytes, plain[1].activationBytes);
}

TEST(MemoryReplay, ZeroBubbleAutoKeepsTheBoundForAnyList) {
  StageGraph graph = StageGraph::chain({0, 1, 0});
  std::vector<DeviceMemoryInputs> inputs = {device(2), device(1)};
  TrainingSetup setup;
  setup.schedule = Kind::ZeroBubbleAuto;
  std::vector<DeviceMemory> replayed = replayedMemory(graph, inputs, setup);
  ASSERT_EQ(replayed.size(), 2u);
  EXPECT_EQ(replayed[0].totalBytes(),
            runtimeMemory(inputs[0], setup).totalBytes());
}

} // namespace
