//===- ZeroBubbleLists.h - A plan's zero-bubble lists in memory -*- C++ -*-===//
//
// The planner's zero-bubble lists, bounded by memory as ftpipe-run bounds
// its own (from the compiled stages' bytes), here with the cost model's
// bytes: zb-h1's, which schedule::generate builds for one step of a plan's
// stages within each device's peak under 1F1B with flush, and zb-auto's,
// within what each device's memory leaves. The planner's simulation of
// zb-h1, its scoring of plans by a synchronous step and ftpipe-report's
// figures run these lists.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_ZEROBUBBLELISTS_H
#define FTPIPE_PARTITION_ZEROBUBBLELISTS_H

#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Schedule/Schedule.h"
#include "FTPipe/Schedule/ZeroBubble.h"

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

/// zb-auto's lists for one step of M micro-batches of `stages` on `hw`'s
/// devices, each device within what its memory leaves under `setup` once
/// its weights, gradients, optimizer state and reserved bytes are counted
/// (`inputs`: evaluatePlan's memoryInputs; schedule::zeroBubbleLimits, as
/// ftpipe-run bounds its own), its shortest lists searched further as
/// `search` says. With `replicas` (ScheduleConfig::replicas: the processes
/// of each device), the lists of the replicated run, as ftpipe-run makes
/// them: each device within the same budget, since each replica keeps a
/// part of its device's list. Fails as schedule::generateZeroBubbleAuto
/// does, e.g. when no list fits.
llvm::Expected<schedule::Schedule>
zeroBubbleAutoLists(const StageGraph &stages, const Hardware &hw,
                    llvm::ArrayRef<schedule::DeviceMemoryInputs> inputs,
                    const schedule::TrainingSetup &setup, uint32_t microBatches,
                    const schedule::ZeroBubbleSearch &search = {},
                    llvm::ArrayRef<int64_t> replicas = {});

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_ZEROBUBBLELISTS_H
