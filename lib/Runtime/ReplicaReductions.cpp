//===- ReplicaReductions.cpp - Gradient all-reduces stage by stage --------===//

#include "FTPipe/Runtime/ReplicaReductions.h"

#include <algorithm>

using namespace ftpipe::runtime;
using ftpipe::schedule::ActionKind;

ReplicaReductions::ReplicaReductions(
    ReplicaCommunicator &replicas,
    const std::map<int64_t, std::vector<std::string>> &stageParams,
    std::map<int64_t, TensorMap> &gradients, int64_t microBatches)
    : replicas(replicas), gradients(gradients),
      microBatches(std::max<int64_t>(microBatches, 1)) {
  for (const auto &entry : stageParams)
    order.push_back(entry.first);
  std::reverse(order.begin(), order.end());
  // A device without stages still takes part: one all-reduce of all.
  if (order.empty())
    order.push_back(-1);
  for (size_t position = 0; position < order.size(); ++position)
    for (const std::string &name : stageParams.at(order[position]))
      positionOf[name] = std::max(positionOf[name], position);
}

void ReplicaReductions::plan(llvm::ArrayRef<schedule::Action> actions) {
  ends.clear();
  std::map<std::pair<int64_t, int64_t>, size_t> last;
  for (size_t i = 0; i < actions.size(); ++i) {
    const schedule::Action &action = actions[i];
    if (action.kind == ActionKind::Update && current < 0)
      current = action.index;
    if (action.kind == ActionKind::Backward ||
        action.kind == ActionKind::WeightBackward)
      last[{action.stage, action.index / microBatches}] = i;
  }
  for (const auto &[stageStep, index] : last)
    ends[index].push_back(stageStep);
}

void ReplicaReductions::ran(size_t index) {
  auto found = ends.find(index);
  if (found == ends.end())
    return;
  for (auto [stage, step] : found->second)
    steps[step].ended.insert(stage);
  // A step's all-reduces start after the update before it.
  if (current >= 0 && steps.count(current) && gradients.count(current))
    startReady(current, gradients.at(current), /*all=*/false);
}

std::vector<std::string>
ReplicaReductions::namesAt(size_t position, const TensorMap &sums) const {
  std::vector<std::string> names;
  for (const auto &entry : sums) {
    auto found = positionOf.find(entry.first);
    // A parameter no stage here reads goes with the last stage.
    size_t at = found == positionOf.end() ? order.size() - 1 : found->second;
    if (at == position)
      names.push_back(entry.first);
  }
  return names;
}

void ReplicaReductions::startReady(int64_t step, TensorMap &sums, bool all) {
  Step &state = steps[step];
  while (state.next < order.size() &&
         (all || state.ended.count(order[state.next]))) {
    Started started;
    started.names = namesAt(state.next, sums);
    for (const std::string &name : started.names) {
      llvm::ArrayRef<float> values = sums.at(name).f32Values();
      started.flat.insert(started.flat.end(), values.begin(), values.end());
    }
    started.handle =
        replicas.startReduction(step, started.flat.data(), started.flat.size());
    state.started.push_back(std::move(started));
    ++state.next;
  }
}

void ReplicaReductions::finish(int64_t step, TensorMap &sums) {
  startReady(step, sums, /*all=*/true);
  Step state = std::move(steps[step]);
  steps.erase(step);
  for (Started &started : state.started) {
    replicas.finishReduction(started.handle);
    size_t at = 0;
    for (const std::string &name : started.names)
      for (float &value : sums.at(name).f32Values())
        value = started.flat[at++];
  }
  current = step + 1;
  if (steps.count(current) && gradients.count(current))
    startReady(current, gradients.at(current), /*all=*/false);
}
