//===- ReplicaReductions.h - Gradient all-reduces stage by stage -*- C++
//-*-===//
//
// A replicated device's gradient sum over its replicas, overlapped with the
// backward (docs/Replicas.md, "Overlap with the backward"): a step's
// gradients of a stage's parameters are all-reduced from when the replica's
// last backward of that stage in the step has ended, while the rest of the
// backward runs, and the update waits for them. The replicas must start
// their all-reduces in one order (MPI matches a communicator's collectives
// by order), so the device's stages take a fixed order, the highest stage
// first (downstream stages end their backwards first), each started once
// its own and every earlier one's last backward of the step has ended (or
// at the update), and each parameter goes with the last of its readers in
// that order; a step's start after the update before it. The sums equal
// one all-reduce of everything at the update.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_REPLICAREDUCTIONS_H
#define FTPIPE_RUNTIME_REPLICAREDUCTIONS_H

#include "FTPipe/Runtime/Replicas.h"
#include "FTPipe/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

class ReplicaReductions {
public:
  using TensorMap = std::map<std::string, Tensor>;

  /// `stageParams`: per stage of the device, the parameters it reads;
  /// `gradients`: the executor's gradient sums per step, which a stage's
  /// all-reduce reads from when it starts; `microBatches`: M (micro-batch
  /// m belongs to step m / M).
  ReplicaReductions(
      ReplicaCommunicator &replicas,
      const std::map<int64_t, std::vector<std::string>> &stageParams,
      std::map<int64_t, TensorMap> &gradients, int64_t microBatches);

  /// Before running `actions`: which of them end a stage's backwards of a
  /// step (its last B, or W, of the step's micro-batches).
  void plan(llvm::ArrayRef<schedule::Action> actions);
  /// Action `index` of those planned has run.
  void ran(size_t index);
  /// At update `step`, with the step's gradients `sums`: starts what has
  /// not started, waits for every all-reduce of the step and leaves their
  /// sums over the replicas in `sums`.
  void finish(int64_t step, TensorMap &sums);

private:
  /// One stage's all-reduce of one step.
  struct Started {
    int64_t handle = 0;
    std::vector<std::string> names;
    std::vector<float> flat;
  };
  /// Per step: stages whose last backward ended, the next stage (position
  /// in `order`) to start, and those started.
  struct Step {
    std::set<int64_t> ended;
    size_t next = 0;
    std::vector<Started> started;
  };

  /// Starts step `step`'s stages in order while their backwards have ended
  /// (`all`: every one left) from `sums`.
  void startReady(int64_t step, TensorMap &sums, bool all);
  /// The parameters (of `sums`) that stage position `position` reduces.
  std::vector<std::string> namesAt(size_t position,
                                   const TensorMap &sums) const;

  ReplicaCommunicator &replicas;
  std::map<int64_t, TensorMap> &gradients;
  int64_t microBatches;
  /// The device's stages, highest first; per parameter, the position of
  /// its last reader there.
  std::vector<int64_t> order;
  std::map<std::string, size_t> positionOf;
  /// Per planned action, the (stage, step) whose backwards it ends.
  std::map<size_t, std::vector<std::pair<int64_t, int64_t>>> ends;
  /// The step whose all-reduces may start (the next update's); -1: none
  /// planned yet.
  int64_t current = -1;
  std::map<int64_t, Step> steps;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_REPLICAREDUCTIONS_H
