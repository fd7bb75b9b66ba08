//===- Replicas.cpp - Replica layouts and their per-process lists ---------===//

#include "FTPipe/Schedule/Replicas.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <set>
#include <tuple>

using namespace ftpipe::schedule;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

ReplicaLayout ReplicaLayout::none(int64_t devices) {
  return uniform(devices, 1);
}

ReplicaLayout ReplicaLayout::uniform(int64_t devices, int64_t width) {
  ReplicaLayout layout;
  layout.replicas.assign(devices, width);
  return layout;
}

int64_t ReplicaLayout::processes() const {
  int64_t total = 0;
  for (int64_t r : replicas)
    total += r;
  return total;
}

bool ReplicaLayout::replicated() const {
  return llvm::any_of(replicas, [](int64_t r) { return r > 1; });
}

int64_t ReplicaLayout::process(int64_t device, int64_t replica) const {
  int64_t offset = 0;
  for (int64_t d = 0; d < device; ++d)
    offset += replicas[d];
  return offset + replica;
}

std::pair<int64_t, int64_t> ReplicaLayout::replicaOf(int64_t process) const {
  for (int64_t d = 0; d < devices(); ++d) {
    if (process < replicas[d])
      return {d, process};
    process -= replicas[d];
  }
  return {-1, -1};
}

std::vector<int64_t> ReplicaLayout::group(int64_t device) const {
  std::vector<int64_t> members;
  for (int64_t j = 0; j < replicas[device]; ++j)
    members.push_back(process(device, j));
  return members;
}

std::string ReplicaLayout::str() const {
  return llvm::join(
      llvm::map_range(replicas, [](int64_t r) { return std::to_string(r); }),
      ",");
}

llvm::Error ReplicaLayout::verify(int64_t devices, int64_t processes) const {
  if (this->devices() != devices)
    return fail("the replicas name " + llvm::Twine(this->devices()) +
                " devices (" + str() + "), the plan has " +
                llvm::Twine(devices));
  for (int64_t d = 0; d < devices; ++d)
    if (replicas[d] < 1 || replicas[d] > kMaxReplicas)
      return fail(
          "device " + llvm::Twine(d) + " has " + llvm::Twine(replicas[d]) +
          " replicas: every device needs 1 to " + llvm::Twine(kMaxReplicas));
  if (this->processes() != processes)
    return fail("the replicas (" + str() + ") add up to " +
                llvm::Twine(this->processes()) + " processes, the run has " +
                llvm::Twine(processes));
  return llvm::Error::success();
}

llvm::Expected<ReplicaLayout>
ftpipe::schedule::parseReplicas(llvm::StringRef text, int64_t devices) {
  constexpr int64_t kMaxReplicas = ReplicaLayout::kMaxReplicas;
  text = text.trim();
  if (text == "none")
    return ReplicaLayout::none(devices);
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  ReplicaLayout layout;
  for (llvm::StringRef part : parts) {
    int64_t r = 0;
    if (part.trim().getAsInteger(10, r) || r < 1 || r > kMaxReplicas)
      return fail("replicas: '" + part.trim() +
                  "' is not a replication factor (1 to " +
                  llvm::Twine(kMaxReplicas) + ")");
    layout.replicas.push_back(r);
  }
  if (layout.replicas.size() == 1 && devices != 1)
    return ReplicaLayout::uniform(devices, layout.replicas.front());
  if (layout.devices() != devices)
    return fail("replicas: '" + text + "' gives " +
                llvm::Twine(layout.devices()) + " factors, the plan has " +
                llvm::Twine(devices) +
                " devices (give one per device, or one "
                "for all)");
  return layout;
}

Schedule ftpipe::schedule::replicateSchedule(const Schedule &schedule,
                                             const ReplicaLayout &layout) {
  Schedule replicated;
  for (int64_t d = 0; d < layout.devices(); ++d)
    for (int64_t j = 0; j < layout.replicas[d]; ++j) {
      std::vector<Action> &list = replicated.devices.emplace_back();
      for (const Action &action : schedule.devices[d])
        if (action.kind == ActionKind::Update ||
            layout.replicaFor(d, action.index) == j)
          list.push_back(action);
    }
  return replicated;
}

llvm::Error ftpipe::schedule::dryRunReplicated(const StageGraph &graph,
                                               const ReplicaLayout &layout,
                                               const Schedule &lists) {
  if (int64_t(lists.devices.size()) != layout.processes())
    return fail("replicated dry run: " + llvm::Twine(lists.devices.size()) +
                " lists, the replicas (" + layout.str() + ") make " +
                llvm::Twine(layout.processes()) + " processes");
  // Devices that update together: tied groups, closed transitively.
  std::vector<int64_t> component(graph.devices);
  for (int64_t d = 0; d < graph.devices; ++d)
    component[d] = d;
  for (bool changed = true; changed;) {
    changed = false;
    for (const std::vector<int64_t> &group : graph.tiedDevices)
      for (int64_t d : group)
        for (int64_t e : group)
          if (component[e] < component[d]) {
            component[d] = component[e];
            changed = true;
          }
  }
  std::vector<std::vector<int64_t>> consumers = graph.consumers();
  std::set<std::tuple<ActionKind, int64_t, int64_t>> done;
  auto ran = [&](ActionKind kind, int64_t s, int64_t m) {
    return done.count({kind, s, m}) > 0;
  };
  auto backDone = [&](int64_t s, int64_t m) {
    return ran(ActionKind::Backward, s, m) ||
           ran(ActionKind::InputBackward, s, m);
  };
  int64_t processes = layout.processes();
  std::vector<size_t> next(processes, 0);
  while (true) {
    auto head = [&](int64_t p) -> const Action * {
      return next[p] < lists.devices[p].size() ? &lists.devices[p][next[p]]
                                               : nullptr;
    };
    std::vector<int64_t> runs;
    for (int64_t p = 0; p < processes; ++p) {
      const Action *action = head(p);
      if (!action)
        continue;
      int64_t s = action->stage, m = action->index;
      bool ready = false;
      switch (action->kind) {
      case ActionKind::Forward:
        ready = llvm::all_of(graph.producers[s], [&](int64_t producer) {
          return ran(ActionKind::Forward, producer, m);
        });
        break;
      case ActionKind::Backward:
      case ActionKind::InputBackward:
        ready = ran(ActionKind::Forward, s, m) &&
                llvm::all_of(consumers[s],
                             [&](int64_t c) { return backDone(c, m); });
        break;
      case ActionKind::WeightBackward:
        ready = ran(ActionKind::InputBackward, s, m);
        break;
      case ActionKind::Update: {
        int64_t mine = component[layout.replicaOf(p).first];
        ready = true;
        for (int64_t q = 0; q < processes; ++q) {
          if (component[layout.replicaOf(q).first] != mine)
            continue;
          const Action *other = head(q);
          ready &= other && *other == *action;
        }
        break;
      }
      }
      if (ready)
        runs.push_back(p);
    }
    if (runs.empty())
      break;
    for (int64_t p : runs) {
      const Action &action = *head(p);
      if (action.kind != ActionKind::Update)
        done.insert({action.kind, action.stage, action.index});
      ++next[p];
    }
  }
  std::vector<std::string> stuck;
  for (int64_t p = 0; p < processes; ++p)
    if (next[p] < lists.devices[p].size()) {
      auto [d, j] = layout.replicaOf(p);
      stuck.push_back("process " + std::to_string(p) + " (device " +
                      std::to_string(d) + " replica " + std::to_string(j) +
                      ") waits at " + lists.devices[p][next[p]].str());
    }
  if (stuck.empty())
    return llvm::Error::success();
  return fail("replicated dry run: deadlock: " + llvm::join(stuck, "; "));
}

llvm::json::Value ftpipe::schedule::toJSON(const ReplicaLayout &layout) {
  return llvm::json::Array(layout.replicas);
}

bool ftpipe::schedule::fromJSON(const llvm::json::Value &value,
                                ReplicaLayout &layout, llvm::json::Path path) {
  if (!llvm::json::fromJSON(value, layout.replicas, path))
    return false;
  for (auto [d, r] : llvm::enumerate(layout.replicas))
    if (r < 1 || r > ReplicaLayout::kMaxReplicas) {
      path.index(d).report("expected a replication factor of 1 to 65536");
      return false;
    }
  return true;
}
