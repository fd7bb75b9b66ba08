//===- Forwarding.h - Values passed along the stages that read them -*- C++
//-*-===//
//
// A value read by many stages costs its producer one send per reader: T5's
// encoder position bias (128 MiB per micro-batch) leaves the stage that
// makes it once for every encoder stage. When the readers run one after the
// other anyway (each depends on the one before), the value can instead pass
// from reader to reader (Plan::nodeForwarded): the producer sends it once and
// every reader passes it on, so the bytes spread over the devices, and no
// stage waits longer than it did (the readers already waited on one
// another).
//
// This phase decides, for a plan whose placement is fixed, which nodes'
// results to forward.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_FORWARDING_H
#define FTPIPE_PARTITION_FORWARDING_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace ftpipe {
namespace partition {

/// The nodes of `plan` whose results can be forwarded and are worth it: not
/// replicated, some result read by stages on at least two devices other
/// than the node's, and, for every result, the stages reading it (the
/// node's own excluded) each reachable from the one before in the plan's
/// stage graph. One entry per node. Fails as buildStageGraph does on `plan`
/// without its forwarding.
llvm::Expected<std::vector<bool>>
forwardableNodes(const Graph &graph, const Hardware &hw, const Plan &plan,
                 const ObjectiveConfig &config);

/// `plan` with the results of forwardable nodes forwarded where that lowers
/// the bytes its busiest sender sends per micro-batch and neither the
/// objective nor the simulated time (under config's schedule) gets higher:
/// first all of them together, else one node at a time, largest bytes
/// first, each kept only under those conditions. Any forwarding `plan`
/// already has is decided again. Returns `plan` without forwarding when
/// nothing qualifies. Fails as evaluatePlan does.
llvm::Expected<Plan> forwardSharedValues(const Graph &graph, const Hardware &hw,
                                         Plan plan,
                                         const ObjectiveConfig &config);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_FORWARDING_H
