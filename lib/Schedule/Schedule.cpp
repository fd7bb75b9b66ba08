//===- Schedule.cpp - Generators and dry run of pipeline schedules --------===//
//
// Both the generators and the dry run execute a schedule in unit-time rounds
// on an ExecutionState: the generators choose each device's next action
// among its stages' ready ones, the dry run takes the next one of each
// device's given list. Actions that became possible in one round run in the
// next at the earliest.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Schedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <optional>

using namespace ftpipe::schedule;
using llvm::createStringError;
using llvm::inconvertibleErrorCode;

static llvm::Error fail(const llvm::Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Text forms
//===----------------------------------------------------------------------===//

/// The letter of a stage action in the text form.
static char letterOf(ActionKind kind) {
  switch (kind) {
  case ActionKind::Forward:
    return 'F';
  case ActionKind::Backward:
    return 'B';
  case ActionKind::InputBackward:
    return 'I';
  case ActionKind::WeightBackward:
    return 'W';
  case ActionKind::Update:
    break;
  }
  return 'U';
}

std::string Action::str() const {
  if (kind == ActionKind::Update)
    return "U" + std::to_string(index);
  return std::to_string(stage) + letterOf(kind) + std::to_string(index);
}

llvm::Expected<Action> ftpipe::schedule::parseAction(llvm::StringRef text) {
  auto bad = [&] {
    return fail("'" + text +
                "' is not an action (\"2F0\", \"1B3\", \"1I3\", \"1W3\", "
                "\"U0\")");
  };
  int64_t stage = 0, index = 0;
  if (text.consume_front("U"))
    return text.getAsInteger(10, index) || index < 0
               ? llvm::Expected<Action>(bad())
               : Action::update(index);
  size_t letter = text.find_first_of("FBIW");
  if (letter == llvm::StringRef::npos ||
      text.take_front(letter).getAsInteger(10, stage) ||
      text.drop_front(letter + 1).getAsInteger(10, index) || stage < 0 ||
      index < 0)
    return bad();
  for (ActionKind kind :
       {ActionKind::Forward, ActionKind::Backward, ActionKind::InputBackward,
        ActionKind::WeightBackward})
    if (letterOf(kind) == text[letter])
      return Action{kind, stage, index};
  return bad();
}

std::string Schedule::str() const {
  std::string out;
  for (auto [d, actions] : llvm::enumerate(devices)) {
    out += "device " + std::to_string(d) + ":";
    for (const Action &action : actions)
      out += " " + action.str();
    out += "\n";
  }
  return out;
}

llvm::Expected<Schedule> ftpipe::schedule::parseSchedule(llvm::StringRef text) {
  Schedule schedule;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    auto [head, rest] = line.split(':');
    int64_t device = 0;
    if (!head.consume_front("device ") ||
        head.trim().getAsInteger(10, device) ||
        device != static_cast<int64_t>(schedule.devices.size()))
      return fail("expected \"device " + llvm::Twine(schedule.devices.size()) +
                  ": ...\", got '" + line + "'");
    std::vector<Action> actions;
    llvm::SmallVector<llvm::StringRef> words;
    rest.split(words, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef word : words) {
      llvm::Expected<Action> action = parseAction(word);
      if (!action)
        return action.takeError();
      actions.push_back(*action);
    }
    schedule.devices.push_back(std::move(actions));
  }
  return schedule;
}

//===----------------------------------------------------------------------===//
// Stage graph
//===----------------------------------------------------------------------===//

StageGraph StageGraph::chain(std::vector<int64_t> placement) {
  StageGraph graph;
  graph.device = std::move(placement);
  graph.producers.resize(graph.device.size());
  for (size_t s = 1; s < graph.device.size(); ++s)
    graph.producers[s] = {static_cast<int64_t>(s - 1)};
  for (int64_t d : graph.device)
    graph.devices = std::max(graph.devices, d + 1);
  return graph;
}

std::vector<std::vector<int64_t>> StageGraph::consumers() const {
  std::vector<std::vector<int64_t>> result(stages());
  for (int64_t s = 0; s < stages(); ++s)
    for (int64_t p : producers[s])
      result[p].push_back(s);
  return result;
}

std::vector<int64_t> StageGraph::heights() const {
  // Stages are not required to be in topological order: relax until stable
  // (validate() rejects cycles, so at most stages() passes).
  std::vector<int64_t> height(stages(), 0);
  for (int64_t pass = 0; pass < stages(); ++pass)
    for (int64_t s = 0; s < stages(); ++s)
      for (int64_t p : producers[s])
        height[p] = std::max(height[p], height[s] + 1);
  return height;
}

llvm::Error StageGraph::validate() const {
  if (producers.size() != device.size())
    return fail("the stage graph has " + llvm::Twine(producers.size()) +
                " producer lists for " + llvm::Twine(device.size()) +
                " stages");
  std::vector<bool> used(devices, false);
  for (int64_t s = 0; s < stages(); ++s) {
    if (device[s] < 0 || device[s] >= devices)
      return fail("stage " + llvm::Twine(s) + " is on device " +
                  llvm::Twine(device[s]) + ", not one of the " +
                  llvm::Twine(devices) + " devices");
    used[device[s]] = true;
    for (int64_t p : producers[s])
      if (p < 0 || p >= stages() || p == s)
        return fail("stage " + llvm::Twine(s) + " has producer " +
                    llvm::Twine(p) + ", not another stage");
  }
  for (int64_t d = 0; d < devices; ++d)
    if (!used[d])
      return fail("device " + llvm::Twine(d) + " holds no stage");
  for (const auto &group : tiedDevices)
    for (int64_t d : group)
      if (d < 0 || d >= devices)
        return fail("tied device " + llvm::Twine(d) + " does not exist");
  // Kahn's algorithm: every stage must get ordered.
  std::vector<int64_t> missing(stages());
  for (int64_t s = 0; s < stages(); ++s)
    missing[s] = producers[s].size();
  std::vector<int64_t> ready;
  for (int64_t s = 0; s < stages(); ++s)
    if (!missing[s])
      ready.push_back(s);
  auto consumerLists = consumers();
  int64_t ordered = 0;
  while (!ready.empty()) {
    int64_t s = ready.back();
    ready.pop_back();
    ++ordered;
    for (int64_t c : consumerLists[s])
      if (!--missing[c])
        ready.push_back(c);
  }
  if (ordered != stages())
    return fail("the stage graph has a cycle");
  return llvm::Error::success();
}

ActionBytes ftpipe::schedule::actionBytes(const Action &action,
                                          const StageMemory &memory) {
  auto bytesOf = [&](const std::vector<uint64_t> &perStage) {
    return perStage.empty() ? int64_t(0) : int64_t(perStage[action.stage]);
  };
  int64_t activations = bytesOf(memory.activationBytes),
          weightBuffer = bytesOf(memory.weightBufferBytes),
          working = bytesOf(memory.workingBytes);
  switch (action.kind) {
  case ActionKind::Forward:
    return {activations + working, activations};
  case ActionKind::Backward:
    return {working, -activations};
  case ActionKind::InputBackward:
    // The weight part's values exist before the activations go.
    return {weightBuffer + working, weightBuffer - activations};
  case ActionKind::WeightBackward:
    return {bytesOf(memory.weightWorkingBytes), -weightBuffer};
  case ActionKind::Update:
    break;
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Execution in unit-time rounds
//===----------------------------------------------------------------------===//

namespace {
/// Which actions ran, and in which round; what each device keeps.
class ExecutionState {
public:
  ExecutionState(const StageGraph &graph, const ScheduleConfig &config,
                 const StageMemory *memory = nullptr)
      : graph(graph), config(config), memory(memory),
        consumers(graph.consumers()), total(config.microBatches * config.steps),
        forwardRound(graph.stages(), std::vector<int64_t>(total, -1)),
        backwardRound(graph.stages(), std::vector<int64_t>(total, -1)),
        weightRound(graph.stages(), std::vector<int64_t>(total, -1)),
        updateRound(graph.devices, std::vector<int64_t>(config.steps, -1)),
        inFlight(graph.devices, 0), waitingWeight(graph.devices, 0),
        peakInFlight(graph.devices, 0), peakWaitingWeight(graph.devices, 0),
        bytes(graph.devices, 0), peakBytes(graph.devices, 0),
        component(graph.devices) {
    // Devices joined by tied groups update together: union-find.
    std::iota(component.begin(), component.end(), 0);
    auto find = [&](int64_t d) {
      while (component[d] != d)
        d = component[d] = component[component[d]];
      return d;
    };
    for (const auto &group : graph.tiedDevices)
      for (int64_t d : group)
        component[find(d)] = find(group.front());
    for (int64_t d = 0; d < graph.devices; ++d)
      component[d] = find(d);
  }

  int64_t microBatches() const { return total; }
  int64_t stepOf(int64_t mb) const { return mb / config.microBatches; }
  /// B or I: the backward part the stage's producers wait for.
  Action backwardOf(int64_t stage, int64_t mb) const {
    return config.splits(stage) ? Action::input(stage, mb)
                                : Action::backward(stage, mb);
  }

  /// Whether `action` on `device` may run in round `round` (ignoring the
  /// rendezvous of tied updates); otherwise what it waits for.
  std::optional<std::string> waitsFor(const Action &action, int64_t device,
                                      int64_t round) const {
    auto before = [&](int64_t r) { return r >= 0 && r < round; };
    switch (action.kind) {
    case ActionKind::Forward:
      for (int64_t p : graph.producers[action.stage])
        if (!before(forwardRound[p][action.index]))
          return Action::forward(p, action.index).str();
      if (config.kind != Kind::Async && stepOf(action.index) > 0 &&
          !before(updateRound[device][stepOf(action.index) - 1]))
        return Action::update(stepOf(action.index) - 1).str();
      return std::nullopt;
    case ActionKind::Backward:
    case ActionKind::InputBackward:
      if (!before(forwardRound[action.stage][action.index]))
        return Action::forward(action.stage, action.index).str();
      for (int64_t c : consumers[action.stage])
        if (!before(backwardRound[c][action.index]))
          return backwardOf(c, action.index).str();
      return std::nullopt;
    case ActionKind::WeightBackward:
      if (!before(backwardRound[action.stage][action.index]))
        return Action::input(action.stage, action.index).str();
      return std::nullopt;
    case ActionKind::Update:
      for (int64_t s = 0; s < graph.stages(); ++s)
        if (graph.device[s] == device)
          for (int64_t m = action.index * config.microBatches;
               m < (action.index + 1) * config.microBatches; ++m) {
            if (!before(backwardRound[s][m]))
              return backwardOf(s, m).str();
            if (config.splits(s) && !before(weightRound[s][m]))
              return Action::weight(s, m).str();
          }
      return std::nullopt;
    }
    return std::nullopt;
  }

  void run(const Action &action, int64_t device, int64_t round) {
    switch (action.kind) {
    case ActionKind::Forward:
      forwardRound[action.stage][action.index] = round;
      peakInFlight[device] = std::max(peakInFlight[device], ++inFlight[device]);
      break;
    case ActionKind::Backward:
      backwardRound[action.stage][action.index] = round;
      --inFlight[device];
      break;
    case ActionKind::InputBackward:
      backwardRound[action.stage][action.index] = round;
      --inFlight[device];
      peakWaitingWeight[device] =
          std::max(peakWaitingWeight[device], ++waitingWeight[device]);
      break;
    case ActionKind::WeightBackward:
      weightRound[action.stage][action.index] = round;
      --waitingWeight[device];
      break;
    case ActionKind::Update:
      updateRound[device][action.index] = round;
      break;
    }
    ActionBytes change = bytesOf(action);
    peakBytes[device] =
        std::max(peakBytes[device], bytes[device] + change.peak);
    bytes[device] += change.held;
    peakBytes[device] = std::max(peakBytes[device], bytes[device]);
  }

  /// The bytes `device` would hold at once while running `action` (as run()
  /// counts them).
  int64_t peakIf(const Action &action, int64_t device) const {
    return bytes[device] + bytesOf(action).peak;
  }

  int64_t componentOf(int64_t device) const { return component[device]; }

  /// What `action` does to its device's bytes (nothing without memory).
  ActionBytes bytesOf(const Action &action) const {
    return memory && action.kind != ActionKind::Update
               ? actionBytes(action, *memory)
               : ActionBytes();
  }
  DryRunResult result(int64_t rounds) const {
    DryRunResult result;
    result.rounds = rounds;
    result.peakInFlight = peakInFlight;
    result.peakWaitingWeight = peakWaitingWeight;
    if (memory)
      result.peakBytes.assign(peakBytes.begin(), peakBytes.end());
    return result;
  }

private:
  const StageGraph &graph;
  const ScheduleConfig &config;
  const StageMemory *memory;
  std::vector<std::vector<int64_t>> consumers;
  int64_t total;
  std::vector<std::vector<int64_t>> forwardRound, backwardRound, weightRound,
      updateRound;
  std::vector<int64_t> inFlight, waitingWeight, peakInFlight, peakWaitingWeight,
      bytes, peakBytes;
  std::vector<int64_t> component;
};
} // namespace

static llvm::Error checkConfig(const StageGraph &graph,
                               const ScheduleConfig &config) {
  if (llvm::Error error = graph.validate())
    return error;
  if (config.microBatches < 1 || config.steps < 1)
    return fail("a schedule needs at least one micro-batch and one step");
  if (!config.split.empty() && !isZeroBubble(config.kind))
    return fail("only zero-bubble schedules split backwards, not " +
                nameOf(config.kind));
  if (!config.split.empty() &&
      static_cast<int64_t>(config.split.size()) != graph.stages())
    return fail("the split list names " + llvm::Twine(config.split.size()) +
                " stages, the stage graph has " + llvm::Twine(graph.stages()));
  if (!config.replicas.empty() &&
      static_cast<int64_t>(config.replicas.size()) != graph.devices)
    return fail("the replicas name " + llvm::Twine(config.replicas.size()) +
                " devices, the stage graph has " + llvm::Twine(graph.devices));
  if (llvm::any_of(config.replicas, [](int64_t r) { return r < 1; }))
    return fail("every device runs on at least one process");
  return llvm::Error::success();
}

/// Per stage, the micro-batches 1F1B starts before its first backward: the
/// processes on its longest path to a last stage, its own included
/// (ScheduleConfig::replicas); height + 1 without replicas or under async.
static std::vector<int64_t> inFlightLimits(const StageGraph &graph,
                                           const ScheduleConfig &config) {
  std::vector<int64_t> heights = graph.heights();
  std::vector<int64_t> limit(graph.stages());
  if (config.replicas.empty() || config.kind == Kind::Async) {
    for (int64_t s = 0; s < graph.stages(); ++s)
      limit[s] = heights[s] + 1;
    return limit;
  }
  // By increasing height every consumer comes first.
  std::vector<int64_t> order(graph.stages());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(
      order, [&](int64_t a, int64_t b) { return heights[a] < heights[b]; });
  std::vector<std::vector<int64_t>> consumers = graph.consumers();
  for (int64_t s : order) {
    int64_t below = 0;
    for (int64_t c : consumers[s])
      below = std::max(below, limit[c]);
    limit[s] = config.replicas[graph.device[s]] + below;
  }
  return limit;
}

/// One stage's own order of forwards and backwards (B, or I when it
/// splits; no W), starting `limit` forwards before the first backward
/// under 1F1B.
static std::vector<Action> stageOrder(int64_t stage, int64_t limit,
                                      const ScheduleConfig &config) {
  std::vector<Action> order;
  auto backward = [&](int64_t mb) {
    return config.splits(stage) ? Action::input(stage, mb)
                                : Action::backward(stage, mb);
  };
  auto oneFOneB = [&](int64_t first, int64_t count) {
    int64_t warmup = std::min(count, limit);
    for (int64_t i = 0; i < warmup; ++i)
      order.push_back(Action::forward(stage, first + i));
    for (int64_t i = 0; i < count; ++i) {
      order.push_back(backward(first + i));
      if (warmup + i < count)
        order.push_back(Action::forward(stage, first + warmup + i));
    }
  };
  int64_t m = config.microBatches;
  if (config.kind == Kind::Async) {
    oneFOneB(0, m * config.steps);
    return order;
  }
  for (int64_t step = 0; step < config.steps; ++step) {
    if (config.kind != Kind::GPipe) {
      oneFOneB(step * m, m);
      continue;
    }
    for (int64_t i = 0; i < m; ++i)
      order.push_back(Action::forward(stage, step * m + i));
    for (int64_t i = 0; i < m; ++i)
      order.push_back(Action::backward(stage, step * m + i));
  }
  return order;
}

std::vector<std::vector<Action>>
ftpipe::schedule::stageOrders(const StageGraph &graph,
                              const ScheduleConfig &config) {
  std::vector<int64_t> limits = inFlightLimits(graph, config);
  std::vector<std::vector<Action>> orders;
  for (int64_t s = 0; s < graph.stages(); ++s)
    orders.push_back(stageOrder(s, limits[s], config));
  return orders;
}

/// Orders a device's candidates: an update first, then a backward before a
/// forward, then the older micro-batch, then the lower stage.
static bool comesFirst(const Action &a, const Action &b) {
  auto rank = [](ActionKind kind) {
    return kind == ActionKind::Update     ? 0
           : kind == ActionKind::Backward ? 1
                                          : 2;
  };
  return std::make_tuple(rank(a.kind), a.index, a.stage) <
         std::make_tuple(rank(b.kind), b.index, b.stage);
}

/// Actions of the run that device `d` runs (updates included).
static int64_t actionsOn(const StageGraph &graph, const ScheduleConfig &config,
                         int64_t d) {
  int64_t count = config.steps;
  for (int64_t s = 0; s < graph.stages(); ++s)
    if (graph.device[s] == d)
      count += (config.splits(s) ? 3 : 2) * config.microBatches * config.steps;
  return count;
}

/// Per rendezvous component, the update k that each of its devices has
/// next (`head`) and may run in `round`; nullopt when they disagree or one
/// waits.
static std::map<int64_t, std::optional<int64_t>>
readyUpdates(const ExecutionState &state, int64_t devices,
             llvm::function_ref<const Action *(int64_t)> head, int64_t round) {
  std::map<int64_t, std::optional<int64_t>> ready;
  for (int64_t d = 0; d < devices; ++d) {
    const Action *action = head(d);
    std::optional<int64_t> k;
    if (action && action->kind == ActionKind::Update &&
        !state.waitsFor(*action, d, round))
      k = action->index;
    auto [it, inserted] = ready.try_emplace(state.componentOf(d), k);
    if (!inserted && it->second != k)
      it->second = std::nullopt;
  }
  return ready;
}

/// GPipe, 1F1B and async: each device interleaves its stages' own orders.
static llvm::Expected<Schedule> interleave(const StageGraph &graph,
                                           const ScheduleConfig &config) {
  std::vector<std::vector<Action>> orders = stageOrders(graph, config);
  std::vector<size_t> next(graph.stages(), 0);
  std::vector<int64_t> updates(graph.devices, 0);

  ExecutionState state(graph, config);
  Schedule schedule;
  schedule.devices.resize(graph.devices);
  size_t remaining = 0;
  for (int64_t d = 0; d < graph.devices; ++d)
    remaining += actionsOn(graph, config, d);
  for (int64_t round = 0; remaining; ++round) {
    // Updates ready on every device of a rendezvous component run together.
    std::map<int64_t, bool> componentReady;
    for (int64_t d = 0; d < graph.devices; ++d) {
      bool ready = updates[d] < config.steps &&
                   !state.waitsFor(Action::update(updates[d]), d, round);
      auto [it, inserted] =
          componentReady.try_emplace(state.componentOf(d), ready);
      if (!inserted)
        it->second = it->second && ready;
    }
    std::vector<std::pair<int64_t, Action>> chosen;
    for (int64_t d = 0; d < graph.devices; ++d) {
      std::optional<Action> best;
      if (updates[d] < config.steps && componentReady[state.componentOf(d)])
        best = Action::update(updates[d]);
      for (int64_t s = 0; s < graph.stages(); ++s) {
        if (graph.device[s] != d || next[s] == orders[s].size())
          continue;
        const Action &head = orders[s][next[s]];
        if (!state.waitsFor(head, d, round) &&
            (!best || comesFirst(head, *best)))
          best = head;
      }
      if (best)
        chosen.emplace_back(d, *best);
    }
    if (chosen.empty())
      return fail("the " + nameOf(config.kind) +
                  " stage orders deadlock on this stage graph");
    for (auto &[d, action] : chosen) {
      state.run(action, d, round);
      schedule.devices[d].push_back(action);
      if (action.kind == ActionKind::Update)
        ++updates[d];
      else
        ++next[action.stage];
      --remaining;
    }
  }
  return schedule;
}

/// ZB-H1: each device walks its 1F1B list (I for B on the stages that
/// split); in a round where the list's next action may not run, it runs its
/// oldest W instead. The lists' forwards and backwards keep 1F1B's order,
/// so each device holds the activations 1F1B holds. With `bound` (bytes per
/// device, counted with `memory`), a device also runs its oldest W before a
/// listed action that would lift it above its bound, and runs a W in an
/// idle round only where the W itself stays within it (or the W must run
/// before the update).
static llvm::Expected<Schedule>
zeroBubbleH1(const StageGraph &graph, const ScheduleConfig &config,
             const StageMemory *memory = nullptr,
             const std::vector<uint64_t> *bound = nullptr) {
  ScheduleConfig oneFOneB{Kind::OneFOneB, config.microBatches, config.steps};
  llvm::Expected<Schedule> lists = interleave(graph, oneFOneB);
  if (!lists)
    return lists.takeError();
  for (std::vector<Action> &actions : lists->devices)
    for (Action &action : actions)
      if (action.kind == ActionKind::Backward && config.splits(action.stage))
        action.kind = ActionKind::InputBackward;

  ExecutionState state(graph, config, memory);
  auto fits = [&](const Action &action, int64_t d) {
    return !bound || state.peakIf(action, d) <= int64_t((*bound)[d]);
  };
  Schedule schedule;
  schedule.devices.resize(graph.devices);
  std::vector<size_t> next(graph.devices, 0);
  std::vector<std::deque<Action>> weights(graph.devices);
  size_t remaining = 0;
  for (int64_t d = 0; d < graph.devices; ++d)
    remaining += actionsOn(graph, config, d);
  for (int64_t round = 0; remaining; ++round) {
    auto head = [&](int64_t d) -> const Action * {
      return next[d] < lists->devices[d].size() ? &lists->devices[d][next[d]]
                                                : nullptr;
    };
    std::map<int64_t, std::optional<int64_t>> updates =
        readyUpdates(state, graph.devices, head, round);
    // Per device: the action it runs and whether it is its list's next.
    std::vector<std::tuple<int64_t, Action, bool>> chosen;
    for (int64_t d = 0; d < graph.devices; ++d) {
      const Action *action = head(d);
      bool ready =
          action && (action->kind == ActionKind::Update
                         ? updates[state.componentOf(d)] == action->index
                         : !state.waitsFor(*action, d, round));
      if (ready && (weights[d].empty() || fits(*action, d)))
        chosen.emplace_back(d, *action, true);
      else if (!weights[d].empty() &&
               !state.waitsFor(weights[d].front(), d, round) &&
               (ready || !action || action->kind == ActionKind::Update ||
                fits(weights[d].front(), d)))
        chosen.emplace_back(d, weights[d].front(), false);
    }
    if (chosen.empty())
      return fail("the zb-h1 lists deadlock on this stage graph");
    for (auto &[d, action, listed] : chosen) {
      state.run(action, d, round);
      schedule.devices[d].push_back(action);
      if (listed)
        ++next[d];
      else
        weights[d].pop_front();
      if (action.kind == ActionKind::InputBackward)
        weights[d].push_back(Action::weight(action.stage, action.index));
      --remaining;
    }
  }
  return schedule;
}

/// ZB-H1 within 1F1B's memory: each device's bound is its peak under 1F1B
/// with flush; its waiting Ws run before a listed action would pass it. The
/// stages that split start as `config` says; while the dry run still puts a
/// device above its bound (an I whose own W buffer does not fit), the split
/// stage of that device with the largest W buffer runs its backward whole
/// (B) instead. A device without split stages runs its 1F1B
/// list (zb-h1 keeps each device's order of forwards and backwards) and so
/// holds what it holds under 1F1B at every point: the loop ends with every
/// device at or below its 1F1B peak.
static llvm::Expected<Schedule>
zeroBubbleH1WithinOneFOneB(const StageGraph &graph,
                           const ScheduleConfig &config,
                           const StageMemory &memory) {
  ScheduleConfig oneFOneB{Kind::OneFOneB, config.microBatches, config.steps};
  llvm::Expected<Schedule> oneFLists = interleave(graph, oneFOneB);
  if (!oneFLists)
    return oneFLists.takeError();
  llvm::Expected<DryRunResult> bound =
      dryRun(graph, oneFOneB, *oneFLists, &memory);
  if (!bound)
    return bound.takeError();
  ScheduleConfig within = config;
  within.split.resize(graph.stages());
  for (int64_t s = 0; s < graph.stages(); ++s)
    within.split[s] = config.splits(s);
  while (true) {
    llvm::Expected<Schedule> lists =
        zeroBubbleH1(graph, within, &memory, &bound->peakBytes);
    if (!lists)
      return lists.takeError();
    llvm::Expected<DryRunResult> dry = dryRun(graph, within, *lists, &memory);
    if (!dry)
      return dry.takeError();
    bool over = false;
    for (int64_t d = 0; d < graph.devices; ++d) {
      if (dry->peakBytes[d] <= bound->peakBytes[d])
        continue;
      std::optional<int64_t> largest;
      for (int64_t s = 0; s < graph.stages(); ++s)
        if (graph.device[s] == d && within.split[s] &&
            (!largest ||
             memory.weightBufferBytes[s] > memory.weightBufferBytes[*largest]))
          largest = s;
      if (!largest) // cannot be: the device runs its 1F1B list
        return fail("zb-h1: device " + llvm::Twine(d) +
                    " runs its 1F1B list above 1F1B's peak");
      within.split[*largest] = false;
      over = true;
    }
    if (!over)
      return lists;
  }
}

llvm::Expected<Schedule>
ftpipe::schedule::generate(const StageGraph &graph,
                           const ScheduleConfig &config,
                           const StageMemory *memory) {
  if (llvm::Error error = checkConfig(graph, config))
    return std::move(error);
  if (config.kind == Kind::ZeroBubbleAuto)
    return fail("zb-auto is built from stage costs and memory budgets "
                "(schedule::generateZeroBubbleAuto), not from the stage "
                "graph alone");
  if (config.kind == Kind::ZeroBubbleH1)
    return memory ? zeroBubbleH1WithinOneFOneB(graph, config, *memory)
                  : zeroBubbleH1(graph, config);
  return interleave(graph, config);
}

/// Checks that the lists hold every action of the run exactly once, on its
/// stage's device, each W after its I and before its step's update.
static llvm::Error checkLists(const StageGraph &graph,
                              const ScheduleConfig &config,
                              const Schedule &schedule) {
  int64_t total = config.microBatches * config.steps;
  for (auto [d, actions] : llvm::enumerate(schedule.devices)) {
    std::map<std::tuple<int, int64_t, int64_t>, int> seen;
    auto listed = [&](const Action &action) {
      return seen.count(
          {static_cast<int>(action.kind), action.stage, action.index});
    };
    for (const Action &action : actions) {
      auto misplaced = [&](const llvm::Twine &why) {
        return fail("device " + llvm::Twine(d) + " lists " + action.str() +
                    ", but " + why);
      };
      if (action.kind != ActionKind::Update &&
          (action.stage >= graph.stages() ||
           graph.device[action.stage] != static_cast<int64_t>(d)))
        return misplaced("stage " + llvm::Twine(action.stage) +
                         " is not on it");
      int64_t limit = action.kind == ActionKind::Update ? config.steps : total;
      if (action.index >= limit)
        return fail("device " + llvm::Twine(d) + " lists " + action.str() +
                    ", beyond the run's " + llvm::Twine(limit));
      bool split =
          action.kind != ActionKind::Update && config.splits(action.stage);
      if (action.kind == ActionKind::Backward && split)
        return misplaced("stage " + llvm::Twine(action.stage) +
                         " splits its backward into I and W");
      if ((action.kind == ActionKind::InputBackward ||
           action.kind == ActionKind::WeightBackward) &&
          !split)
        return misplaced("stage " + llvm::Twine(action.stage) +
                         " does not split its backward (under " +
                         nameOf(config.kind) + ")");
      if (action.kind == ActionKind::WeightBackward &&
          !listed(Action::input(action.stage, action.index)))
        return misplaced("not after " +
                         Action::input(action.stage, action.index).str());
      if (action.kind == ActionKind::Update)
        for (int64_t s = 0; s < graph.stages(); ++s)
          if (graph.device[s] == static_cast<int64_t>(d) && config.splits(s))
            for (int64_t m = action.index * config.microBatches;
                 m < (action.index + 1) * config.microBatches; ++m)
              if (!listed(Action::weight(s, m)))
                return misplaced("not after " + Action::weight(s, m).str());
      if (++seen[{static_cast<int>(action.kind), action.stage, action.index}] >
          1)
        return fail("device " + llvm::Twine(d) + " lists " + action.str() +
                    " twice");
    }
    int64_t expected = actionsOn(graph, config, d);
    if (static_cast<int64_t>(actions.size()) != expected)
      return fail("device " + llvm::Twine(d) + " lists " +
                  llvm::Twine(actions.size()) + " actions, the run has " +
                  llvm::Twine(expected) + " for it");
  }
  return llvm::Error::success();
}

/// `config` with the stages that split but that the lists run whole (B, no
/// I or W: zb-h1 within 1F1B's memory) marked as not splitting. A stage that
/// runs both B and I is refused.
static llvm::Expected<ScheduleConfig> asListed(const StageGraph &graph,
                                               const ScheduleConfig &config,
                                               const Schedule &schedule) {
  if (!isZeroBubble(config.kind))
    return config;
  std::vector<bool> whole(graph.stages(), false), split(graph.stages(), false);
  for (const std::vector<Action> &actions : schedule.devices)
    for (const Action &action : actions) {
      if (action.stage < 0 || action.stage >= graph.stages())
        continue; // checkLists names it
      if (action.kind == ActionKind::Backward)
        whole[action.stage] = true;
      else if (action.kind == ActionKind::InputBackward ||
               action.kind == ActionKind::WeightBackward)
        split[action.stage] = true;
    }
  ScheduleConfig listed = config;
  listed.split.resize(graph.stages());
  for (int64_t s = 0; s < graph.stages(); ++s) {
    if (config.splits(s) && whole[s] && split[s])
      return fail("the lists run stage " + llvm::Twine(s) +
                  "'s backward both whole (B) and split (I and W)");
    listed.split[s] = config.splits(s) && !whole[s];
  }
  return listed;
}

llvm::Expected<DryRunResult>
ftpipe::schedule::dryRun(const StageGraph &graph, const ScheduleConfig &config,
                         const Schedule &schedule, const StageMemory *memory) {
  if (llvm::Error error = checkConfig(graph, config))
    return std::move(error);
  if (static_cast<int64_t>(schedule.devices.size()) != graph.devices)
    return fail("the schedule has lists for " +
                llvm::Twine(schedule.devices.size()) +
                " devices, the stage "
                "graph has " +
                llvm::Twine(graph.devices));
  auto sized = [&](const std::vector<uint64_t> &bytes, bool optional) {
    return (optional && bytes.empty()) ||
           static_cast<int64_t>(bytes.size()) == graph.stages();
  };
  if (memory && (!sized(memory->activationBytes, false) ||
                 !sized(memory->weightBufferBytes, false) ||
                 !sized(memory->workingBytes, true) ||
                 !sized(memory->weightWorkingBytes, true)))
    return fail("the stage memory does not give bytes for each of the " +
                llvm::Twine(graph.stages()) + " stages");
  llvm::Expected<ScheduleConfig> listed = asListed(graph, config, schedule);
  if (!listed)
    return listed.takeError();
  if (llvm::Error error = checkLists(graph, *listed, schedule))
    return std::move(error);

  ExecutionState state(graph, *listed, memory);
  std::vector<size_t> next(graph.devices, 0);
  size_t remaining = 0;
  for (const auto &actions : schedule.devices)
    remaining += actions.size();
  int64_t rounds = 0;
  for (int64_t round = 0; remaining; ++round) {
    auto head = [&](int64_t d) -> const Action * {
      return next[d] < schedule.devices[d].size()
                 ? &schedule.devices[d][next[d]]
                 : nullptr;
    };
    // A tied update runs when every device of its component is at it.
    std::map<int64_t, std::optional<int64_t>> componentUpdate =
        readyUpdates(state, graph.devices, head, round);
    std::vector<int64_t> runnable;
    for (int64_t d = 0; d < graph.devices; ++d) {
      const Action *action = head(d);
      if (!action)
        continue;
      if (action->kind == ActionKind::Update
              ? componentUpdate[state.componentOf(d)] == action->index
              : !state.waitsFor(*action, d, round))
        runnable.push_back(d);
    }
    if (runnable.empty()) {
      std::string message =
          "the schedule deadlocks after " + std::to_string(round) + " rounds:";
      for (int64_t d = 0; d < graph.devices; ++d) {
        const Action *action = head(d);
        if (!action)
          continue;
        std::optional<std::string> what = state.waitsFor(*action, d, round);
        message += " device " + std::to_string(d) + " at " + action->str() +
                   " waits for " +
                   (what ? *what : std::string("its tied devices' update")) +
                   ";";
      }
      message.pop_back();
      return fail(message);
    }
    for (int64_t d : runnable) {
      state.run(*head(d), d, round);
      ++next[d];
      --remaining;
    }
    rounds = round + 1;
  }
  return state.result(rounds);
}
