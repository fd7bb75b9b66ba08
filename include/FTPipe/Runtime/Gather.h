//===- Gather.h - The end of a run: everything to device 0 ------*- C++ -*-===//
//
// After the last step each device holds the parameters it owns and its
// timeline; device 0 writes the weights file and the trace, so every device
// calls these at the same point and device 0 receives what the others send
// (tags RuntimeTag::GatherWeight, GatherTraceLength, GatherTrace,
// GatherCpus).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_GATHER_H
#define FTPIPE_RUNTIME_GATHER_H

#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/RunTiming.h"

#include <vector>

namespace ftpipe {
namespace runtime {

/// Every parameter's value from its owner (placement's first holder), on
/// device 0; `owned` holds this device's. Other devices return what they
/// own and placeholders of the right shape for the rest.
TensorMap gatherWeights(Communicator &communicator,
                        const std::vector<ParameterInfo> &parameters,
                        const ParameterPlacement &placement,
                        const TensorMap &owned);

/// Every device's timeline, on device 0 (index = device); other devices
/// send theirs and return it alone.
std::vector<std::vector<TraceEvent>> gatherTraces(Communicator &communicator,
                                                  std::vector<TraceEvent> mine);

/// Every process's host and CPUs (ProcessCpus::current()), on device 0
/// (index = process); other processes send theirs and return it alone.
std::vector<ProcessCpus> gatherCpus(Communicator &communicator);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_GATHER_H
