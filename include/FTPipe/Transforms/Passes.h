//===- Passes.h - FTPipe passes ---------------------------------*- C++ -*-===//
//
// Declares every FTPipe pass (generated from Passes.td) and the entry point
// that registers them all with MLIR's pass registry.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TRANSFORMS_PASSES_H
#define FTPIPE_TRANSFORMS_PASSES_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Recomputation.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace ftpipe {

/// How ftpipe-seq-pipe cuts.
enum class SeqPipeMethod {
  /// Exact dynamic programming.
  DP,
  /// Greedy cuts under a binary-searched stage time.
  Greedy,
};

/// The partitioning passes' `replicas`: whether they also choose the
/// pipeline's depth and data-parallel replicas of its devices
/// (docs/Replicas.md).
enum class ReplicasMode {
  /// One pipeline over every device.
  None,
  /// The depth x replicas search (lib/Partition/ReplicaSearch.h).
  Auto,
};

/// The values of the training setup's options (Passes.td), spelled and
/// described by FTPipe/Schedule/TrainingSetup.h.
llvm::cl::ValuesClass scheduleOptionValues();
llvm::cl::ValuesClass optimizerOptionValues();
llvm::cl::ValuesClass weightVersionsOptionValues();
llvm::cl::ValuesClass recomputeModeOptionValues();
/// The synchronous kinds, and `none` (Kind::Async): no synchronous step.
llvm::cl::ValuesClass syncScheduleOptionValues();
/// The values of the partitioning passes' `replicas`.
llvm::cl::ValuesClass replicasOptionValues();

#define GEN_PASS_DECL
#include "FTPipe/Transforms/Passes.h.inc"

/// Generated: `registerFTPipePasses()` registers every FTPipe pass with the
/// global pass registry, so that `--ftpipe-*` flags and textual pipelines can
/// name them; `registerXPass()` registers one.
#define GEN_PASS_REGISTRATION
#include "FTPipe/Transforms/Passes.h.inc"

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_TRANSFORMS_PASSES_H
