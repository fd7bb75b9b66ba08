//===- ZeroBubble.cpp - zb-auto: zero-bubble lists from stage costs -------===//
//
// The greedy candidates come from a timed list scheduler (compute one task
// per device at a time, a message's transfer time added to its consumer's
// ready time, no link contention), its ready tasks ranked by kind and
// micro-batch or by their tails (the least time the step needs after them,
// stagePaths); the simulator, which models the links, then scores every
// candidate. The shortest few are then justified forwards and backwards
// (Justifier, ZeroBubbleImprove.h), which moves tasks into idle gaps, brought
// back within each device's budget where that lifted it above (a waiting W run
// sooner, a forward later), and kept when the simulator finds them shorter and
// they fit. The shortest of all is then searched further, its device orders
// changed by a tabu search on the step's longest path (Justifier::
// searchOrders), and kept on the same terms. A device's memory changes only
// with its own actions, so counting it as the greedy starts them is exact.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/ZeroBubble.h"

#include "ZeroBubbleImprove.h"

#include "FTPipe/Schedule/StepBound.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <map>
#include <optional>

using namespace ftpipe::schedule;
using namespace ftpipe::schedule::detail;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// How a device picks among its ready tasks.
enum class Rank : uint8_t {
  /// By kind (F, I or B, W as the policy orders them), then the oldest
  /// micro-batch, then the first stage.
  Kind,
  /// By kind, then the longest tail (the least time the step still needs
  /// once the task ends, stagePaths).
  Tail,
  /// F and I or B alike by the longest tail, W after them.
  TailAcrossKinds,
};

/// A greedy variant: how many micro-batches each stage may hold in flight
/// (capFactor x (height + 1), at most M; 0: M), whether a ready forward
/// goes before a ready backward (I or B), and whether a ready W goes just
/// before a forward (else it runs only when nothing else may: it is never
/// on another device's critical path, but a backlog of Ws lengthens the
/// drain).
struct Policy {
  int64_t capFactor = 1;
  bool forwardFirst = false;
  bool weightBeforeForward = false;
  Rank rank = Rank::Kind;
  /// With a tail rank: each micro-batch before the last adds this share of
  /// the busiest device's work per micro-batch to its tasks' tails, so that
  /// older micro-batches, which later ones queue behind, go first.
  double microBatchWeight = 0.0;
};

/// One step (micro-batches 0 .. M-1, then U0 on every device) by list
/// scheduling under `policy`; nullopt when it gets stuck.
class ListScheduler {
public:
  ListScheduler(const StageGraph &graph, const TimedStageGraph &sg,
                const Links &links, const ScheduleConfig &config,
                const ZeroBubbleLimits &limits)
      : graph(graph), sg(sg), links(links), config(config), limits(limits),
        consumers(graph.consumers()), heights(graph.heights()) {
    for (const StageEdge &e : sg.edges)
      edges[{e.src, e.dst}] = &e;
    std::vector<bool> split;
    for (int64_t s = 0; s < graph.stages(); ++s)
      split.push_back(config.splits(s));
    paths = stagePaths(sg, split, &links);
    std::vector<double> busy(graph.devices, 0.0);
    for (int64_t s = 0; s < graph.stages(); ++s)
      busy[graph.device[s]] += sg.fwdMs[s] + costOf(s, kBackward) +
                               (config.splits(s) ? sg.weightMs[s] : 0.0);
    perMicroBatchMs = *llvm::max_element(busy);
  }

  std::optional<Schedule> run(Policy policy) const;

private:
  double costOf(int64_t s, Part part) const {
    if (part == kForward)
      return sg.fwdMs[s];
    if (part == kWeight)
      return sg.weightMs[s];
    return (config.splits(s) ? sg.inputMs[s] : sg.bwdMs[s]) + sg.recomputeMs[s];
  }
  /// Transfer time of producer p's activations to consumer c (gradients:
  /// the other way), 0 on one device or without a recorded edge.
  double transferMs(int64_t p, int64_t c, bool gradients) const {
    auto it = edges.find({uint32_t(p), uint32_t(c)});
    if (it == edges.end())
      return 0.0;
    const StageEdge &e = *it->second;
    return gradients ? links.transferMs(e.bwdBytes, e.bwdTensors,
                                        graph.device[c], graph.device[p])
                     : links.transferMs(e.fwdBytes, e.fwdTensors,
                                        graph.device[p], graph.device[c]);
  }

  const StageGraph &graph;
  const TimedStageGraph &sg;
  const Links &links;
  const ScheduleConfig &config;
  const ZeroBubbleLimits &limits;
  std::vector<std::vector<int64_t>> consumers;
  std::vector<int64_t> heights;
  std::map<std::pair<uint32_t, uint32_t>, const StageEdge *> edges;
  StagePaths paths;
  double perMicroBatchMs = 0.0;
};
} // namespace

std::optional<Schedule> ListScheduler::run(Policy policy) const {
  int64_t S = graph.stages(), M = config.microBatches, P = graph.devices;
  auto id = [&](int64_t s, int64_t m, Part part) {
    return (s * M + m) * 3 + part;
  };
  std::vector<int64_t> depsLeft(S * M * 3, 0);
  std::vector<double> readyAt(S * M * 3, 0.0);
  // Per device, the tasks whose dependencies all started (ready at readyAt).
  std::vector<std::vector<int64_t>> released(P);
  auto release = [&](int64_t s, int64_t m, Part part, double at) {
    int64_t task = id(s, m, part);
    readyAt[task] = std::max(readyAt[task], at);
    if (--depsLeft[task] == 0)
      released[graph.device[s]].push_back(task);
  };
  int64_t total = 0;
  for (int64_t s = 0; s < S; ++s) {
    total += (config.splits(s) ? 3 : 2) * M;
    for (int64_t m = 0; m < M; ++m) {
      depsLeft[id(s, m, kForward)] = graph.producers[s].size() + 1;
      depsLeft[id(s, m, kBackward)] = consumers[s].size() + 1;
      depsLeft[id(s, m, kWeight)] = 1;
      release(s, m, kForward, 0.0);
    }
  }
  auto bytesOf = [&](const std::vector<uint64_t> &perStage, int64_t s) {
    return perStage.empty() ? int64_t(0) : int64_t(perStage[s]);
  };
  std::vector<int64_t> inFlight(S, 0), deviceInFlight(P, 0), bytes(P, 0);
  // Per device, the most bytes an I of one of its stages adds while it runs
  // (its W buffer and working set).
  std::vector<int64_t> inputNeed(P, 0);
  for (int64_t s = 0; s < S; ++s)
    if (config.splits(s))
      inputNeed[graph.device[s]] =
          std::max(inputNeed[graph.device[s]],
                   bytesOf(limits.memory.weightBufferBytes, s) +
                       bytesOf(limits.memory.workingBytes, s));
  std::vector<double> busyUntil(P, 0.0);
  Schedule schedule;
  schedule.devices.resize(P);

  double t = 0.0;
  for (int64_t done = 0; done < total;) {
    bool started = false;
    for (int64_t d = 0; d < P; ++d) {
      if (busyUntil[d] > t)
        continue;
      int64_t best = -1;
      std::tuple<int, double, int64_t, int64_t> bestKey;
      for (int64_t task : released[d]) {
        if (readyAt[task] > t)
          continue;
        int64_t s = task / 3 / M, m = task / 3 % M;
        Part part = Part(task % 3);
        if (part == kForward) {
          int64_t cap = policy.capFactor
                            ? std::min(M, policy.capFactor * (heights[s] + 1))
                            : M;
          uint64_t budget = limits.deviceBudgetBytes.empty()
                                ? std::numeric_limits<uint64_t>::max()
                                : limits.deviceBudgetBytes[d];
          if (inFlight[s] >= cap ||
              (deviceInFlight[d] > 0 &&
               uint64_t(bytes[d] + bytesOf(limits.memory.activationBytes, s) +
                        bytesOf(limits.memory.workingBytes, s)) > budget))
            continue;
        }
        int forwardRank = policy.forwardFirst ? 1 : 3;
        // Near the budget (the device's next I could overflow it), a ready
        // W goes first: it frees its buffer.
        bool tight =
            !limits.deviceBudgetBytes.empty() &&
            uint64_t(bytes[d] + inputNeed[d]) > limits.deviceBudgetBytes[d];
        int rank = part == kForward    ? forwardRank
                   : part == kBackward ? (policy.forwardFirst ? 3 : 1)
                   : tight             ? 0
                           : (policy.weightBeforeForward ? forwardRank - 1 : 4);
        double tail = 0.0;
        if (policy.rank != Rank::Kind) {
          tail = costOf(s, part) +
                 (part == kForward    ? paths.forwardTailMs[s]
                  : part == kBackward ? paths.backwardTailMs[s]
                                      : 0.0) +
                 (M - 1 - m) * policy.microBatchWeight * perMicroBatchMs;
          if (policy.rank == Rank::TailAcrossKinds && part != kWeight)
            rank = 1;
        }
        std::tuple<int, double, int64_t, int64_t> key{rank, -tail, m, s};
        if (best < 0 || key < bestKey) {
          best = task;
          bestKey = key;
        }
      }
      if (best < 0)
        continue;
      llvm::erase(released[d], best);
      int64_t s = best / 3 / M, m = best / 3 % M;
      Part part = Part(best % 3);
      double end = t + costOf(s, part);
      busyUntil[d] = end;
      started = true;
      ++done;
      bool split = config.splits(s);
      switch (part) {
      case kForward:
        schedule.devices[d].push_back(Action::forward(s, m));
        ++inFlight[s];
        ++deviceInFlight[d];
        bytes[d] += bytesOf(limits.memory.activationBytes, s);
        for (int64_t c : consumers[s])
          release(c, m, kForward, end + transferMs(s, c, false));
        release(s, m, kBackward, end);
        break;
      case kBackward:
        schedule.devices[d].push_back(split ? Action::input(s, m)
                                            : Action::backward(s, m));
        --inFlight[s];
        --deviceInFlight[d];
        bytes[d] -= bytesOf(limits.memory.activationBytes, s);
        if (split) {
          bytes[d] += bytesOf(limits.memory.weightBufferBytes, s);
          release(s, m, kWeight, end);
        }
        for (int64_t p : graph.producers[s])
          release(p, m, kBackward, end + transferMs(p, s, true));
        break;
      case kWeight:
        schedule.devices[d].push_back(Action::weight(s, m));
        bytes[d] -= bytesOf(limits.memory.weightBufferBytes, s);
        break;
      }
    }
    if (started)
      continue; // devices that finished at t choose again
    double next = std::numeric_limits<double>::infinity();
    for (int64_t d = 0; d < P; ++d) {
      if (busyUntil[d] > t)
        next = std::min(next, busyUntil[d]);
      for (int64_t task : released[d])
        if (readyAt[task] > t)
          next = std::min(next, readyAt[task]);
    }
    if (next == std::numeric_limits<double>::infinity())
      return std::nullopt;
    t = next;
  }
  for (std::vector<Action> &actions : schedule.devices)
    actions.push_back(Action::update(0));
  return schedule;
}

/// `lists` with each B of a stage that splits as I then W at once.
static Schedule splitEachBackward(Schedule lists,
                                  const ScheduleConfig &config) {
  for (std::vector<Action> &actions : lists.devices) {
    std::vector<Action> split;
    for (const Action &action : actions) {
      if (action.kind != ActionKind::Backward || !config.splits(action.stage)) {
        split.push_back(action);
        continue;
      }
      split.push_back(Action::input(action.stage, action.index));
      split.push_back(Action::weight(action.stage, action.index));
    }
    actions = std::move(split);
  }
  return lists;
}

/// 1F1B as the simulator runs it (each device's order of its stages'
/// forwards and backwards), each split B as I then W at once. The simulator
/// lets a stage's backward start before its consumers' when only gradients
/// of values it passes on come back from them, which the lists' contract
/// (dryRun) does not: such an order is left out of the candidates.
static llvm::Expected<Schedule> splitOneFOneB(const TimedStageGraph &sg,
                                              const Links &links,
                                              const ScheduleConfig &config) {
  SimulatorConfig oneF;
  oneF.kind = Kind::OneFOneB;
  oneF.microBatches = config.microBatches;
  llvm::Expected<SimResult> result = simulate(sg, links, oneF);
  if (!result)
    return result.takeError();
  Schedule schedule;
  schedule.devices.resize(links.devices);
  for (const SimEvent &e : result->events) {
    std::vector<Action> &actions = schedule.devices[e.device];
    if (e.kind == SimEvent::Kind::Forward)
      actions.push_back(Action::forward(e.stage, e.microBatch));
    else if (e.kind == SimEvent::Kind::Backward)
      actions.push_back(Action::backward(e.stage, e.microBatch));
  }
  for (std::vector<Action> &actions : schedule.devices)
    actions.push_back(Action::update(0));
  return splitEachBackward(std::move(schedule), config);
}

llvm::Expected<Schedule> ftpipe::schedule::generateZeroBubbleAuto(
    const StageGraph &graph, const TimedStageGraph &sg, const Links &links,
    const ScheduleConfig &config, const ZeroBubbleLimits &limits,
    const ZeroBubbleSearch &search) {
  if (config.kind != Kind::ZeroBubbleAuto)
    return fail("generateZeroBubbleAuto builds zb-auto, not " +
                nameOf(config.kind));
  if (llvm::Error error = graph.validate())
    return std::move(error);
  int64_t S = graph.stages();
  if (int64_t(sg.numStages()) != S || !llvm::equal(sg.device, graph.device) ||
      uint64_t(graph.devices) != links.devices)
    return fail("zb-auto: the timed stage graph, the stage graph and the "
                "links disagree on the stages or devices");
  for (int64_t s = 0; s < S; ++s)
    if (config.splits(s) &&
        (sg.inputMs.size() != size_t(S) || sg.weightMs.size() != size_t(S)))
      return fail("zb-auto: stage " + llvm::Twine(s) +
                  " splits, the stage graph has no I and W costs");
  auto sized = [&](const std::vector<uint64_t> &list, int64_t n) {
    return list.empty() || int64_t(list.size()) == n;
  };
  if (!sized(limits.memory.activationBytes, S) ||
      !sized(limits.memory.weightBufferBytes, S) ||
      !sized(limits.memory.workingBytes, S) ||
      !sized(limits.memory.weightWorkingBytes, S) ||
      !sized(limits.deviceBudgetBytes, graph.devices))
    return fail("zb-auto: the memory limits do not name every stage and "
                "device");

  ScheduleConfig one = config;
  one.steps = 1;
  std::vector<Schedule> candidates;
  ScheduleConfig h1 = one;
  h1.kind = Kind::ZeroBubbleH1;
  if (llvm::Expected<Schedule> lists = generate(graph, h1))
    candidates.push_back(std::move(*lists));
  else
    return lists.takeError();
  // ZB-H1 within 1F1B's memory, when the stages' bytes are known.
  if (!limits.memory.activationBytes.empty() &&
      !limits.memory.weightBufferBytes.empty()) {
    if (llvm::Expected<Schedule> lists = generate(graph, h1, &limits.memory))
      candidates.push_back(std::move(*lists));
    else
      return lists.takeError();
  }
  // 1F1B's lists as generate() builds them (every W right after its I: what
  // fits whenever 1F1B with its W buffers does), and as the simulator runs
  // 1F1B (when that order runs dry).
  ScheduleConfig oneF{Kind::OneFOneB, one.microBatches, 1};
  if (llvm::Expected<Schedule> lists = generate(graph, oneF))
    candidates.push_back(splitEachBackward(std::move(*lists), one));
  else
    return lists.takeError();
  if (llvm::Expected<Schedule> lists = splitOneFOneB(sg, links, one)) {
    if (llvm::Error error = dryRun(graph, one, *lists).takeError())
      llvm::consumeError(std::move(error));
    else
      candidates.push_back(std::move(*lists));
  } else {
    return lists.takeError();
  }
  ListScheduler greedy(graph, sg, links, one, limits);
  for (int64_t capFactor : {1, 2, 4, 0})
    for (bool forwardFirst : {false, true})
      for (bool weightBeforeForward : {false, true})
        if (std::optional<Schedule> lists = greedy.run(
                {capFactor, forwardFirst, weightBeforeForward, Rank::Kind}))
          candidates.push_back(std::move(*lists));
  for (Rank rank : {Rank::Tail, Rank::TailAcrossKinds})
    for (double microBatchWeight : {0.0, 0.1, 0.2, 0.3})
      for (int64_t capFactor : {1, 0})
        for (bool forwardFirst : {false, true})
          if (std::optional<Schedule> lists = greedy.run(
                  {capFactor, forwardFirst, false, rank, microBatchWeight}))
            candidates.push_back(std::move(*lists));

  // Byte counts for the dry run: what limits gives, else nothing counted.
  StageMemory memory = limits.memory;
  memory.activationBytes.resize(S, 0);
  memory.weightBufferBytes.resize(S, 0);
  uint64_t leastPeak = std::numeric_limits<uint64_t>::max();
  int64_t leastPeakDevice = 0;
  // The simulated step of a candidate that keeps every device within its
  // budget; nullopt for one that does not (its peak noted).
  auto score =
      [&](const Schedule &candidate) -> llvm::Expected<std::optional<double>> {
    llvm::Expected<DryRunResult> dry = dryRun(graph, one, candidate, &memory);
    if (!dry)
      return dry.takeError(); // a bug in a generator
    bool fits = true;
    uint64_t worst = 0;
    int64_t worstDevice = 0;
    for (int64_t d = 0; d < graph.devices; ++d) {
      if (dry->peakBytes[d] > worst) {
        worst = dry->peakBytes[d];
        worstDevice = d;
      }
      fits &= limits.deviceBudgetBytes.empty() ||
              dry->peakBytes[d] <= limits.deviceBudgetBytes[d];
    }
    if (!fits) {
      if (worst < leastPeak) {
        leastPeak = worst;
        leastPeakDevice = worstDevice;
      }
      return std::nullopt;
    }
    SimulatorConfig simConfig;
    simConfig.kind = Kind::ZeroBubbleAuto;
    simConfig.microBatches = config.microBatches;
    simConfig.recordEvents = false;
    simConfig.orders = candidate;
    llvm::Expected<SimResult> sim = simulate(sg, links, simConfig);
    if (!sim)
      return sim.takeError();
    return sim->msPerMiniBatch;
  };
  // (step, candidate) of those that fit, shortest first.
  std::vector<std::pair<double, size_t>> fitting;
  for (auto [i, candidate] : llvm::enumerate(candidates)) {
    llvm::Expected<std::optional<double>> ms = score(candidate);
    if (!ms)
      return ms.takeError();
    if (*ms)
      fitting.push_back({**ms, i});
  }
  if (fitting.empty())
    return fail(llvm::formatv("zb-auto: no schedule keeps every device within "
                              "its memory budget (the least peak: {0} bytes "
                              "on device {1})",
                              leastPeak, leastPeakDevice)
                    .str());
  llvm::stable_sort(fitting);
  Schedule *best = &candidates[fitting.front().second];
  double bestMs = fitting.front().first;
  // The shortest lists of different steps, justified.
  Justifier justifier(graph, sg, links, one);
  std::vector<Schedule> justified;
  for (size_t k = 0, tried = 0; k < fitting.size() && tried < 4; ++k) {
    if (k > 0 && fitting[k].first == fitting[k - 1].first)
      continue;
    ++tried;
    if (std::optional<Schedule> lists =
            justifier.improve(candidates[fitting[k].second], 8))
      if (std::optional<Schedule> fit = justifier.withinMemory(*lists, limits))
        justified.push_back(std::move(*fit));
  }
  for (Schedule &lists : justified) {
    llvm::Expected<std::optional<double>> ms = score(lists);
    if (!ms)
      return ms.takeError();
    if (*ms && **ms < bestMs) {
      best = &lists;
      bestMs = **ms;
    }
  }
  // The shortest lists, their device orders searched further.
  std::optional<Schedule> searched;
  if (search.iterations > 0)
    if (std::optional<Schedule> lists =
            justifier.searchOrders(*best, search.iterations, search.patience))
      searched = justifier.withinMemory(*lists, limits);
  if (searched) {
    llvm::Expected<std::optional<double>> ms = score(*searched);
    if (!ms)
      return ms.takeError();
    if (*ms && **ms < bestMs) {
      best = &*searched;
      bestMs = **ms;
    }
  }

  // The same lists every step, micro-batches renumbered, then the update.
  Schedule schedule;
  schedule.devices.resize(graph.devices);
  for (int64_t step = 0; step < config.steps; ++step)
    for (int64_t d = 0; d < graph.devices; ++d)
      for (const Action &action : best->devices[d])
        schedule.devices[d].push_back(
            action.kind == ActionKind::Update
                ? Action::update(step)
                : Action{action.kind, action.stage,
                         action.index + step * config.microBatches});
  return schedule;
}

llvm::Expected<ZeroBubbleLimits>
ftpipe::schedule::zeroBubbleLimits(const StageGraph &graph,
                                   llvm::ArrayRef<DeviceMemoryInputs> inputs,
                                   const TrainingSetup &setup) {
  if (int64_t(inputs.size()) != graph.devices)
    return fail(llvm::formatv("zb-auto: memory of {0} devices for a stage "
                              "graph of {1}",
                              inputs.size(), graph.devices)
                    .str());
  ZeroBubbleLimits limits;
  StageMemory &memory = limits.memory;
  std::vector<size_t> next(inputs.size(), 0);
  for (int64_t d : graph.device) {
    if (next[d] == inputs[d].stages.size())
      return fail(llvm::formatv("zb-auto: the memory of device {0} lists {1} "
                                "stages, fewer than the stage graph puts there",
                                d, inputs[d].stages.size())
                      .str());
    const DeviceMemoryInputs::Stage &stage = inputs[d].stages[next[d]++];
    memory.activationBytes.push_back(stage.keptBytesPerMicroBatch);
    memory.weightBufferBytes.push_back(stage.weightBufferBytesPerMicroBatch);
    memory.workingBytes.push_back(stage.recomputePeakBytes);
    memory.weightWorkingBytes.push_back(stage.weightWorkingBytes);
  }
  TrainingSetup under = setup;
  under.schedule = Kind::ZeroBubbleAuto;
  for (auto [d, in] : llvm::enumerate(inputs)) {
    if (next[d] != in.stages.size())
      return fail(llvm::formatv("zb-auto: the memory of device {0} lists {1} "
                                "stages, the stage graph puts {2} there",
                                d, in.stages.size(), next[d])
                      .str());
    DeviceMemory total = deviceMemory(in, under);
    uint64_t fixed = total.totalBytes() - total.activationBytes;
    limits.deviceBudgetBytes.push_back(
        total.budgetBytes > fixed ? total.budgetBytes - fixed : 0);
  }
  return limits;
}

ZeroBubbleH1Bound
ftpipe::schedule::zeroBubbleH1Bound(const TimedStageGraph &stages,
                                    const std::vector<bool> &split,
                                    uint32_t microBatches) {
  std::map<uint32_t, ZeroBubbleH1Bound> perDevice;
  bool parts = stages.inputMs.size() == stages.numStages() &&
               stages.weightMs.size() == stages.numStages();
  for (size_t s = 0; s < stages.numStages(); ++s) {
    ZeroBubbleH1Bound &d = perDevice[stages.device[s]];
    d.device = stages.device[s];
    d.forwardMs += stages.fwdMs[s];
    bool splits = parts && (split.empty() || split[s]);
    d.inputMs +=
        (splits ? stages.inputMs[s] : stages.bwdMs[s]) + stages.recomputeMs[s];
    d.weightMs += splits ? stages.weightMs[s] : 0.0;
  }
  ZeroBubbleH1Bound busiest;
  auto load = [](const ZeroBubbleH1Bound &d) {
    return d.forwardMs + d.inputMs + d.weightMs;
  };
  for (const auto &[device, d] : perDevice)
    if (load(d) > load(busiest))
      busiest = d;
  double idle =
      double(perDevice.size() - 1) *
      std::max(0.0, busiest.forwardMs + busiest.inputMs - busiest.weightMs);
  busiest.msPerMiniBatch = microBatches * load(busiest) + idle;
  busiest.idleFraction =
      busiest.msPerMiniBatch > 0 ? idle / busiest.msPerMiniBatch : 0.0;
  return busiest;
}
