//===- Replicas.cpp - Replica layouts and their per-process lists ---------===//

#include "FTPipe/Schedule/Replicas.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

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
    if (replicas[d] < 1)
      return fail("device " + llvm::Twine(d) + " has " +
                  llvm::Twine(replicas[d]) +
                  " replicas: every device needs at least one");
  if (this->processes() != processes)
    return fail("the replicas (" + str() + ") add up to " +
                llvm::Twine(this->processes()) + " processes, the run has " +
                llvm::Twine(processes));
  return llvm::Error::success();
}

llvm::Expected<ReplicaLayout>
ftpipe::schedule::parseReplicas(llvm::StringRef text, int64_t devices) {
  // A bound that keeps the process count far from overflowing.
  constexpr int64_t kMaxReplicas = 1 << 16;
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

llvm::json::Value ftpipe::schedule::toJSON(const ReplicaLayout &layout) {
  return llvm::json::Array(layout.replicas);
}

bool ftpipe::schedule::fromJSON(const llvm::json::Value &value,
                                ReplicaLayout &layout, llvm::json::Path path) {
  return llvm::json::fromJSON(value, layout.replicas, path);
}
