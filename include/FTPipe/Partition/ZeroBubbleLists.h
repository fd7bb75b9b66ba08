//===- ZeroBubbleLists.h - A plan's zb-h1 within 1F1B's memory -*- C++ -*-===//
//
// The planner's zb-h1: the lists schedule::generate builds for one step of a
// plan's stages when it knows their bytes (each device within its peak under
// 1F1B with flush), with the bytes of the cost model, as ftpipe-run builds
// its lists from the compiled stages' bytes. The planner's simulation of
// zb-h1 and ftpipe-report's figures run these lists.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_ZEROBUBBLELISTS_H
#define FTPIPE_PARTITION_ZEROBUBBLELISTS_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Schedule/Schedule.h"

namespace ftpipe {
namespace partition {

/// Per stage, the bytes the lists' dry run counts, from the cost model's:
/// activations kept per micro-batch in flight, W buffers, the activations a
/// forward, B or I rebuilds under recomputation (W rebuilds none).
schedule::StageMemory stageMemory(const StageGraph &stages);

/// zb-h1's lists for one step of M micro-batches of `stages` on `devices`
/// devices (those of `split` splitting; empty: all), each device within its
/// 1F1B peak. Fails as schedule::generate does (a device without a stage).
llvm::Expected<schedule::Schedule>
zeroBubbleH1Lists(const StageGraph &stages, int64_t devices,
                  uint32_t microBatches, const std::vector<bool> &split);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_ZEROBUBBLELISTS_H
