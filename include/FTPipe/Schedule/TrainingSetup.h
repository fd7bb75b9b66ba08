//===- TrainingSetup.h - The training setup's enums, named once -*- C++ -*-===//
//
// The choices a fine-tuning run is planned for and run with: the pipeline
// schedule, micro-batches per step, the optimizer (for its per-parameter
// state), the weight versions kept under the asynchronous schedule and
// recomputation. One TrainingSetup is recorded in the IR
// (`#ftpipe.training`) and in the manifest. Named here once, with the
// spelling every option, report and manifest uses (`name`), its parser and a
// line for a person (`describe`); the planner (lib/Partition, the passes'
// options) and the runtime use these enums. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_TRAININGSETUP_H
#define FTPIPE_SCHEDULE_TRAININGSETUP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>

namespace ftpipe {
namespace schedule {

/// How the pipeline is run. Determines the order of each stage's forwards
/// and backwards, micro-batches in flight per stage (activation memory) and
/// weight versions.
enum class Kind : uint8_t {
  /// GPipe: all forwards of a mini-batch, then all backwards, then flush.
  GPipe,
  /// 1F1B with a flush at the end of every mini-batch (PipeDream-Flush).
  OneFOneB,
  /// PipeDream-style asynchronous 1F1B without flushes (FTPipe's default).
  Async,
  /// Zero-bubble ZB-H1 (Qi et al., ICLR 2024): 1F1B with flush whose
  /// backwards are split into an input part (I, on the critical path) and a
  /// weight part (W), each W deferred to its device's first idle slot.
  ZeroBubbleH1,
  /// Zero-bubble list scheduling from per-stage F/I/W costs and per-device
  /// memory budgets (schedule::generateZeroBubbleAuto), synchronous.
  ZeroBubbleAuto,
};

/// Whether `kind` splits backwards into I and W (zb-h1, zb-auto).
inline bool isZeroBubble(Kind kind) {
  return kind == Kind::ZeroBubbleH1 || kind == Kind::ZeroBubbleAuto;
}

/// "gpipe", "1f1b", "async", "zb-h1" or "zb-auto".
llvm::Expected<Kind> parseKind(llvm::StringRef text);
llvm::StringRef kindName(Kind kind);
/// "GPipe", "1F1B with flush", "async (PipeDream 1F1B)", ...
llvm::StringRef describeKind(Kind kind);

/// The optimizer, for its state and (in the runtime) its update.
enum class Optimizer : uint8_t {
  /// SGD: no state for the planner; the runtime's SGD applies its momentum
  /// option (runtime::OptimizerConfig::momentum).
  SGD,
  /// SGD with momentum: one buffer (1x). Planned only.
  Momentum,
  /// Adam: first and second moments (2x). Planned only.
  Adam,
  /// AdamW: first and second moments (2x).
  AdamW,
  /// Adafactor without momentum (T5's recipe, and FTPipe's for T5-3B): its
  /// second moments are factored into a row and a column vector per matrix,
  /// about 0.1% of the weights of a transformer, counted as no state.
  Adafactor,
};

/// "sgd", "momentum", "adam", "adamw" or "adafactor".
llvm::Expected<Optimizer> parseOptimizer(llvm::StringRef text);
llvm::StringRef optimizerName(Optimizer optimizer);
llvm::StringRef describeOptimizer(Optimizer optimizer);

/// Weight versions kept under the async schedule.
enum class WeightVersions : uint8_t {
  /// A single version (weight prediction, or staleness accepted).
  None,
  /// PipeDream weight stashing: one version per micro-batch in flight.
  Stash,
  /// PipeDream-2BW: at most two versions.
  DoubleBuffered,
};

/// "none", "stash" or "2bw".
llvm::Expected<WeightVersions> parseWeightVersions(llvm::StringRef text);
llvm::StringRef weightVersionsName(WeightVersions versions);
/// "one weight version", "weight stashing", "2 weight versions (2BW)".
llvm::StringRef describeWeightVersions(WeightVersions versions);

/// Where stages recompute their forward before their backward.
enum class RecomputeMode : uint8_t {
  /// No stage recomputes (every activation kept).
  Never,
  /// Every stage recomputes (FTPipe's setup).
  Always,
  /// The partitioner chooses per stage (partition::chooseRecomputation).
  Auto,
};

/// "false", "true" or "auto".
llvm::Expected<RecomputeMode> parseRecomputeMode(llvm::StringRef text);
llvm::StringRef recomputeModeName(RecomputeMode mode);
llvm::StringRef describeRecomputeMode(RecomputeMode mode);

/// The training setup a plan is made for and a run uses. The defaults are
/// FTPipe's (docs/FineTuningSetup.md), the partitioning passes' defaults:
/// async 1F1B, 8 micro-batches, Adam, one weight version, recomputation.
struct TrainingSetup {
  Kind schedule = Kind::Async;
  /// Micro-batches per optimizer step (M).
  uint32_t microBatches = 8;
  Optimizer optimizer = Optimizer::Adam;
  WeightVersions weightVersions = WeightVersions::None;
  RecomputeMode recompute = RecomputeMode::Always;

  bool operator==(const TrainingSetup &other) const {
    return schedule == other.schedule && microBatches == other.microBatches &&
           optimizer == other.optimizer &&
           weightVersions == other.weightVersions &&
           recompute == other.recompute;
  }
  bool operator!=(const TrainingSetup &other) const {
    return !(*this == other);
  }
};

/// `{"schedule": "async", "microbatches": 8, "optimizer": "adam",
/// "weight_versions": "none", "recompute": "true"}` (the manifest's
/// `training`), and back; fromJSON names the bad field.
llvm::json::Value toJSON(const TrainingSetup &setup);
bool fromJSON(const llvm::json::Value &value, TrainingSetup &setup,
              llvm::json::Path path);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_TRAININGSETUP_H
