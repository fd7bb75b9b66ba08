//===- ZeroBubbleImprove.cpp - zb-auto: improving lists -------------------===//
//
// Forward-backward justification of zb-auto's lists, the tabu search of
// their device orders, and their repair within each device's memory budget
// (ZeroBubbleImprove.h). The model here is the
// step bound's (StepBound.h: edgeLags), each device serial; the simulator,
// which models the links, has the last word (ZeroBubble.cpp).
//
//===----------------------------------------------------------------------===//

#include "ZeroBubbleImprove.h"

#include "FTPipe/Schedule/StepBound.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>

using namespace ftpipe::schedule;
using namespace ftpipe::schedule::detail;

Justifier::Justifier(const StageGraph &graph, const TimedStageGraph &sg,
                     const Links &links, const ScheduleConfig &config)
    : graph(graph), config(config), M(config.microBatches) {
  int64_t S = graph.stages();
  std::vector<bool> split;
  for (int64_t s = 0; s < S; ++s)
    split.push_back(config.splits(s));
  EdgeLags lags = edgeLags(sg, split, &links);
  size_t n = size_t(S * M * 3);
  length.assign(n, 0.0);
  exists.assign(n, false);
  preds.resize(n);
  succs.resize(n);
  auto edge = [&](int64_t from, int64_t to, double lag) {
    preds[to].push_back({from, lag});
    succs[from].push_back({to, lag});
  };
  for (int64_t s = 0; s < S; ++s) {
    double b =
        (config.splits(s) ? sg.inputMs[s] : sg.bwdMs[s]) + sg.recomputeMs[s];
    for (int64_t m = 0; m < M; ++m) {
      length[id(s, m, kForward)] = sg.fwdMs[s];
      length[id(s, m, kBackward)] = b;
      exists[id(s, m, kForward)] = exists[id(s, m, kBackward)] = true;
      edge(id(s, m, kForward), id(s, m, kBackward), sg.fwdMs[s]);
      if (config.splits(s)) {
        length[id(s, m, kWeight)] = sg.weightMs[s];
        exists[id(s, m, kWeight)] = true;
        edge(id(s, m, kBackward), id(s, m, kWeight), b);
      }
    }
  }
  for (auto [i, e] : llvm::enumerate(sg.edges))
    for (int64_t m = 0; m < M; ++m) {
      edge(id(e.src, m, kForward), id(e.dst, m, kForward), lags.forwardMs[i]);
      if (lags.backwardMs[i])
        edge(id(e.dst, m, kBackward), id(e.src, m, kBackward),
             *lags.backwardMs[i]);
    }
  // The lists' contract (dryRun): a forward after its producers', an I or
  // B after its consumers', also where the simulator does not wait.
  for (int64_t s = 0; s < S; ++s)
    for (int64_t p : graph.producers[s])
      for (int64_t m = 0; m < M; ++m) {
        edge(id(p, m, kForward), id(s, m, kForward), 0.0);
        edge(id(s, m, kBackward), id(p, m, kBackward), 0.0);
      }
}

std::vector<double> Justifier::timesOf(const Schedule &lists) const {
  size_t n = length.size();
  size_t placed = 0, total = 0;
  for (const std::vector<Action> &actions : lists.devices)
    total += actions.size();
  std::vector<double> start(n, 0.0), ready(n, 0.0);
  std::vector<int64_t> waiting(n, 0);
  for (size_t task = 0; task < n; ++task)
    waiting[task] = preds[task].size();
  std::vector<size_t> next(graph.devices, 0);
  std::vector<double> free(graph.devices, 0.0);
  // Run each device's list in order, a task once its predecessors ran.
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t d = 0; d < graph.devices; ++d)
      for (; next[d] < lists.devices[d].size(); ++next[d]) {
        const Action &action = lists.devices[d][next[d]];
        if (action.kind == ActionKind::Update) {
          ++placed;
          continue;
        }
        Part part = action.kind == ActionKind::Forward          ? kForward
                    : action.kind == ActionKind::WeightBackward ? kWeight
                                                                : kBackward;
        int64_t task = id(action.stage, action.index, part);
        if (waiting[task] > 0)
          break;
        start[task] = std::max(ready[task], free[d]);
        free[d] = start[task] + length[task];
        ++placed;
        for (auto [succ, lag] : succs[task]) {
          ready[succ] = std::max(ready[succ], start[task] + lag);
          --waiting[succ];
        }
        progress = true;
      }
  }
  if (placed != total)
    return {};
  return start;
}

std::vector<double> Justifier::place(const std::vector<double> &priority,
                                     bool late, double end,
                                     std::vector<int64_t> *sequence) const {
  size_t n = length.size();
  const auto &before = late ? succs : preds;
  const auto &after = late ? preds : succs;
  std::vector<int64_t> waiting(n, 0);
  std::vector<double> start(n, 0.0);
  if (sequence)
    sequence->assign(n, 0);
  // Per device, the busy intervals placed so far, by start.
  std::vector<std::vector<std::pair<double, double>>> busy(graph.devices);
  using Entry = std::pair<double, int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (size_t task = 0; task < n; ++task) {
    if (!exists[task])
      continue;
    waiting[task] = before[task].size();
    if (waiting[task] == 0)
      ready.push({priority[task], int64_t(task)});
  }
  for (int64_t placed = 0; !ready.empty(); ++placed) {
    int64_t task = ready.top().second;
    ready.pop();
    double len = length[task];
    std::vector<std::pair<double, double>> &intervals = busy[deviceOf(task)];
    double t;
    if (!late) {
      t = 0.0;
      for (auto [pred, lag] : before[task])
        t = std::max(t, start[pred] + lag);
      for (auto [a, b] : intervals) {
        if (b <= t)
          continue;
        if (a >= t + len)
          break;
        t = b;
      }
    } else {
      t = end - len;
      for (auto [succ, lag] : before[task])
        t = std::min(t, start[succ] - lag);
      for (auto [a, b] : llvm::reverse(intervals)) {
        if (a >= t + len)
          continue;
        if (b <= t)
          break;
        t = a - len;
      }
    }
    start[task] = t;
    if (sequence)
      (*sequence)[task] = placed;
    if (len > 0.0)
      intervals.insert(llvm::upper_bound(intervals, std::make_pair(t, t + len)),
                       {t, t + len});
    for (auto [next, lag] : after[task])
      if (--waiting[next] == 0)
        ready.push({priority[next], next});
  }
  return start;
}

std::vector<std::vector<int64_t>>
Justifier::ordersOf(const Schedule &lists) const {
  std::vector<std::vector<int64_t>> orders(graph.devices);
  for (int64_t d = 0; d < graph.devices; ++d)
    for (const Action &action : lists.devices[d]) {
      if (action.kind == ActionKind::Update)
        continue;
      Part part = action.kind == ActionKind::Forward          ? kForward
                  : action.kind == ActionKind::WeightBackward ? kWeight
                                                              : kBackward;
      orders[d].push_back(id(action.stage, action.index, part));
    }
  return orders;
}

double Justifier::run(const std::vector<std::vector<int64_t>> &orders,
                      std::vector<double> &start,
                      std::vector<int64_t> &after) const {
  size_t n = length.size();
  start.assign(n, 0.0);
  after.assign(n, -1);
  std::vector<double> ready(n, 0.0);
  std::vector<int64_t> waiting(n, 0);
  for (size_t task = 0; task < n; ++task)
    waiting[task] = preds[task].size();
  std::vector<size_t> next(graph.devices, 0);
  std::vector<double> free(graph.devices, 0.0);
  std::vector<int64_t> last(graph.devices, -1);
  size_t placed = 0, total = 0;
  for (const std::vector<int64_t> &order : orders)
    total += order.size();
  double end = 0.0;
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t d = 0; d < graph.devices; ++d)
      for (; next[d] < orders[d].size(); ++next[d]) {
        int64_t task = orders[d][next[d]];
        if (waiting[task] > 0)
          break;
        start[task] = std::max(ready[task], free[d]);
        if (last[d] >= 0 && free[d] >= ready[task])
          after[task] = last[d];
        free[d] = start[task] + length[task];
        last[d] = task;
        end = std::max(end, free[d]);
        ++placed;
        for (auto [succ, lag] : succs[task]) {
          ready[succ] = std::max(ready[succ], start[task] + lag);
          --waiting[succ];
        }
        progress = true;
      }
  }
  return placed == total ? end : std::numeric_limits<double>::infinity();
}

Schedule
Justifier::listsOf(const std::vector<std::vector<int64_t>> &orders) const {
  Schedule lists;
  lists.devices.resize(graph.devices);
  for (int64_t d = 0; d < graph.devices; ++d) {
    for (int64_t task : orders[d]) {
      int64_t s = task / 3 / M, m = task / 3 % M;
      Part part = Part(task % 3);
      lists.devices[d].push_back(part == kForward   ? Action::forward(s, m)
                                 : part == kWeight  ? Action::weight(s, m)
                                 : config.splits(s) ? Action::input(s, m)
                                                    : Action::backward(s, m));
    }
    lists.devices[d].push_back(Action::update(0));
  }
  return lists;
}

Schedule Justifier::listsOf(const std::vector<double> &start,
                            const std::vector<int64_t> &sequence) const {
  std::vector<std::vector<std::tuple<double, int64_t, int64_t>>> order(
      graph.devices);
  for (size_t task = 0; task < start.size(); ++task)
    if (exists[task])
      order[deviceOf(task)].push_back(
          {start[task], sequence[task], int64_t(task)});
  std::vector<std::vector<int64_t>> orders(graph.devices);
  for (int64_t d = 0; d < graph.devices; ++d) {
    llvm::sort(order[d]);
    for (auto [at, placed, task] : order[d])
      orders[d].push_back(task);
  }
  return listsOf(orders);
}

std::optional<Schedule> Justifier::improve(const Schedule &lists,
                                           int rounds) const {
  std::vector<double> start = timesOf(lists);
  if (start.empty())
    return std::nullopt;
  double end = endOf(start);
  std::vector<int64_t> sequence, nextSequence;
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> finish(start.size());
    for (size_t task = 0; task < start.size(); ++task)
      finish[task] = -(start[task] + length[task]);
    std::vector<double> late = place(finish, /*late=*/true, end);
    std::vector<double> early = place(late, /*late=*/false, 0.0, &nextSequence);
    double shorter = endOf(early);
    if (shorter >= end - 1e-9)
      break;
    start = std::move(early);
    sequence = std::move(nextSequence);
    end = shorter;
  }
  if (sequence.empty())
    return std::nullopt;
  return listsOf(start, sequence);
}

/// Iterations for which searchOrders forbids undoing a swap.
static constexpr int kTabuTenure = 30;

std::optional<Schedule> Justifier::searchOrders(const Schedule &lists,
                                                int iterations,
                                                int patience) const {
  std::vector<std::vector<int64_t>> orders = ordersOf(lists);
  std::vector<double> start;
  std::vector<int64_t> after;
  double end = run(orders, start, after);
  if (end == std::numeric_limits<double>::infinity())
    return std::nullopt;
  double first = end, bestEnd = end;
  std::vector<std::vector<int64_t>> best;
  std::vector<size_t> position(length.size(), 0);
  // (a, b): b may not go back before a until that iteration.
  std::map<std::pair<int64_t, int64_t>, int> tabu;
  std::vector<double> trialStart;
  std::vector<int64_t> trialAfter;
  int lastBest = 0;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    for (const std::vector<int64_t> &order : orders)
      for (auto [i, task] : llvm::enumerate(order))
        position[task] = i;
    // The longest path, back from the task that ends last: the task before
    // on the device where its end set the start, else a predecessor whose
    // lag did.
    int64_t task = -1;
    for (size_t t = 0; t < length.size(); ++t)
      if (exists[t] &&
          (task < 0 || start[t] + length[t] > start[task] + length[task]))
        task = int64_t(t);
    std::vector<int64_t> path;
    while (task >= 0) {
      path.push_back(task);
      if (after[task] >= 0) {
        task = after[task];
        continue;
      }
      int64_t pred = -1;
      for (auto [p, lag] : preds[task])
        if (start[p] + lag >= start[task] - 1e-9 * (1.0 + start[task])) {
          pred = p;
          break;
        }
      task = pred;
    }
    std::reverse(path.begin(), path.end());
    // Swaps (device, i): order[i] and order[i + 1], at each block's ends.
    std::vector<std::pair<int64_t, size_t>> swaps;
    for (size_t i = 0; i < path.size();) {
      size_t j = i;
      while (j + 1 < path.size() && after[path[j + 1]] == path[j])
        ++j;
      if (j > i) {
        int64_t d = deviceOf(path[i]);
        swaps.push_back({d, position[path[i]]});
        if (j > i + 1)
          swaps.push_back({d, position[path[j]] - 1});
      }
      i = j + 1;
    }
    double chosenEnd = std::numeric_limits<double>::infinity();
    std::optional<std::pair<int64_t, size_t>> chosen;
    for (auto [d, i] : swaps) {
      std::vector<int64_t> &order = orders[d];
      auto it = tabu.find({order[i + 1], order[i]});
      bool forbidden = it != tabu.end() && it->second > iteration;
      std::swap(order[i], order[i + 1]);
      double trial = run(orders, trialStart, trialAfter);
      std::swap(order[i], order[i + 1]);
      if ((forbidden && trial >= bestEnd - 1e-9) || trial >= chosenEnd)
        continue;
      chosen = {d, i};
      chosenEnd = trial;
    }
    if (!chosen)
      break;
    auto [d, i] = *chosen;
    std::vector<int64_t> &order = orders[d];
    tabu[{order[i], order[i + 1]}] = iteration + kTabuTenure;
    std::swap(order[i], order[i + 1]);
    end = run(orders, start, after);
    if (end < bestEnd - 1e-9) {
      bestEnd = end;
      best = orders;
      lastBest = iteration;
    } else if (iteration - lastBest >= patience) {
      break;
    }
  }
  if (best.empty() || bestEnd >= first - 1e-9)
    return std::nullopt;
  return listsOf(best);
}

std::optional<Schedule>
Justifier::withinMemory(Schedule lists, const ZeroBubbleLimits &limits) const {
  if (limits.deviceBudgetBytes.empty())
    return lists;
  for (int64_t d = 0; d < graph.devices; ++d) {
    std::vector<Action> &actions = lists.devices[d];
    int64_t budget = int64_t(limits.deviceBudgetBytes[d]);
    int64_t held = 0;
    std::set<std::pair<int64_t, int64_t>> waiting; // Is whose W is later
    for (size_t i = 0; i < actions.size();) {
      ActionBytes change = actions[i].kind == ActionKind::Update
                               ? ActionBytes()
                               : actionBytes(actions[i], limits.memory);
      if (held + change.peak <= budget) {
        held += change.held;
        if (actions[i].kind == ActionKind::InputBackward)
          waiting.insert({actions[i].stage, actions[i].index});
        if (actions[i].kind == ActionKind::WeightBackward)
          waiting.erase({actions[i].stage, actions[i].index});
        ++i;
        continue;
      }
      // Run a waiting W first: it frees its buffer.
      size_t j = i + 1;
      while (j < actions.size() &&
             !(actions[j].kind == ActionKind::WeightBackward &&
               waiting.count({actions[j].stage, actions[j].index})))
        ++j;
      if (j < actions.size()) {
        Action moved = actions[j];
        actions.erase(actions.begin() + j);
        actions.insert(actions.begin() + i, moved);
        continue;
      }
      if (actions[i].kind != ActionKind::Forward)
        return std::nullopt;
      // Else move the forward after the next action that frees bytes.
      j = i + 1;
      while (j < actions.size() && (actions[j].kind == ActionKind::Forward ||
                                    actions[j].kind == ActionKind::Update))
        ++j;
      if (j == actions.size() || (actions[j].stage == actions[i].stage &&
                                  actions[j].index == actions[i].index))
        return std::nullopt;
      Action moved = actions[i];
      actions.erase(actions.begin() + i);
      actions.insert(actions.begin() + j, moved);
    }
  }
  if (timesOf(lists).empty())
    return std::nullopt;
  return lists;
}
