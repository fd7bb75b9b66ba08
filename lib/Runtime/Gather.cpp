//===- Gather.cpp - The end of a run: everything to device 0 --------------===//
//
// Point-to-point sends to device 0 in a fixed order: parameters in name
// order (the micro-batch field numbers them), timelines and CPUs by device.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Gather.h"

using namespace ftpipe::runtime;

TensorMap ftpipe::runtime::gatherWeights(
    Communicator &communicator, const std::vector<ParameterInfo> &parameters,
    const ParameterPlacement &placement, const TensorMap &owned) {
  std::map<std::string, const ParameterInfo *> byName;
  for (const ParameterInfo &param : parameters)
    byName[param.name] = &param;
  int64_t self = communicator.device(), tag = tagOf(RuntimeTag::GatherWeight);
  int64_t index = 0;
  TensorMap all;
  for (const auto &[name, holders] : placement) {
    int64_t owner = holders.front();
    const ParameterInfo &param = *byName.at(name);
    Tensor value(param.type, param.shape);
    if (self == owner)
      value = owned.at(name);
    if (owner != 0 && self == owner)
      communicator.send(0, tag, index, value.bytes.data(), value.bytes.size());
    if (owner != 0 && self == 0)
      communicator.recv(owner, tag, index, value.bytes.data(),
                        value.bytes.size());
    all[name] = std::move(value);
    ++index;
  }
  return all;
}

// The events travel as their bytes.
static_assert(std::is_trivially_copyable_v<TraceEvent>);

std::vector<std::vector<TraceEvent>>
ftpipe::runtime::gatherTraces(Communicator &communicator,
                              std::vector<TraceEvent> mine) {
  int64_t lengthTag = tagOf(RuntimeTag::GatherTraceLength),
          eventsTag = tagOf(RuntimeTag::GatherTrace);
  std::vector<std::vector<TraceEvent>> traces;
  if (communicator.device() != 0) {
    int64_t count = mine.size();
    communicator.send(0, lengthTag, 0, &count, sizeof(count));
    communicator.send(0, eventsTag, 0, mine.data(), count * sizeof(TraceEvent));
    traces.push_back(std::move(mine));
    return traces;
  }
  traces.resize(communicator.devices());
  traces[0] = std::move(mine);
  for (int64_t d = 1; d < communicator.devices(); ++d) {
    int64_t count = 0;
    communicator.recv(d, lengthTag, 0, &count, sizeof(count));
    traces[d].resize(count);
    communicator.recv(d, eventsTag, 0, traces[d].data(),
                      count * sizeof(TraceEvent));
  }
  return traces;
}

static_assert(std::is_trivially_copyable_v<ProcessCpus>);

std::vector<ProcessCpus>
ftpipe::runtime::gatherCpus(Communicator &communicator) {
  int64_t tag = tagOf(RuntimeTag::GatherCpus);
  std::vector<ProcessCpus> all(1, ProcessCpus::current());
  if (communicator.device() != 0) {
    communicator.send(0, tag, 0, all.data(), sizeof(ProcessCpus));
    return all;
  }
  all.resize(communicator.devices());
  for (int64_t d = 1; d < communicator.devices(); ++d)
    communicator.recv(d, tag, 0, &all[d], sizeof(ProcessCpus));
  return all;
}
