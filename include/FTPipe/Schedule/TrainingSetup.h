//===- TrainingSetup.h - The training setup's enums, named once -*- C++ -*-===//
//
// The choices a fine-tuning run is planned for and run with: the pipeline
// schedule, micro-batches per step, the optimizer (for its per-parameter
// state), the weight versions kept under the asynchronous schedule and
// recomputation. One TrainingSetup is recorded in the IR
// (`#ftpipe.training`) and in the manifest. Each enum is named here once, in
// one table (SetupEnum<Enum>): the spelling every option, report and
// manifest uses and a line for a person, which nameOf, descriptionOf and
// parseName read; the planner (lib/Partition, the passes' options) and the
// runtime use these enums. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_TRAININGSETUP_H
#define FTPIPE_SCHEDULE_TRAININGSETUP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <iterator>
#include <string>

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

/// Weight versions kept under the async schedule.
enum class WeightVersions : uint8_t {
  /// A single version (weight prediction, or staleness accepted).
  None,
  /// PipeDream weight stashing: one version per micro-batch in flight.
  Stash,
  /// PipeDream-2BW: at most two versions.
  DoubleBuffered,
};

/// Where stages recompute their forward before their backward.
enum class RecomputeMode : uint8_t {
  /// No stage recomputes (every activation kept).
  Never,
  /// Every stage recomputes (FTPipe's setup).
  Always,
  /// The partitioner chooses per stage (partition::chooseRecomputation).
  Auto,
};

/// One value of a setup enum: its spelling and a line for a person.
template <typename Enum> struct Spelling {
  Enum value;
  llvm::StringRef name;
  llvm::StringRef description;
};

/// Each setup enum's table (`values`, every value once) and what its values
/// are (`what`, for messages).
template <typename Enum> struct SetupEnum;

template <> struct SetupEnum<Kind> {
  static constexpr llvm::StringLiteral what = "schedule";
  static constexpr Spelling<Kind> values[] = {
      {Kind::GPipe, "gpipe", "GPipe"},
      {Kind::OneFOneB, "1f1b", "1F1B with flush"},
      {Kind::Async, "async", "async (PipeDream 1F1B)"},
      {Kind::ZeroBubbleH1, "zb-h1", "zero-bubble ZB-H1 (split backward)"},
      {Kind::ZeroBubbleAuto, "zb-auto",
       "zero-bubble list schedule from stage costs (split backward)"},
  };
};

template <> struct SetupEnum<Optimizer> {
  static constexpr llvm::StringLiteral what = "optimizer";
  static constexpr Spelling<Optimizer> values[] = {
      {Optimizer::SGD, "sgd", "plain SGD: no state"},
      {Optimizer::Momentum, "momentum", "SGD with momentum: one buffer"},
      {Optimizer::Adam, "adam", "Adam: two buffers"},
      {Optimizer::AdamW, "adamw", "AdamW: two buffers"},
      {Optimizer::Adafactor, "adafactor",
       "Adafactor without momentum: factored, about no state"},
  };
};

template <> struct SetupEnum<WeightVersions> {
  static constexpr llvm::StringLiteral what = "weight versions";
  static constexpr Spelling<WeightVersions> values[] = {
      {WeightVersions::None, "none", "one weight version"},
      {WeightVersions::Stash, "stash", "weight stashing"},
      {WeightVersions::DoubleBuffered, "2bw", "2 weight versions (2BW)"},
  };
};

template <> struct SetupEnum<RecomputeMode> {
  static constexpr llvm::StringLiteral what = "recomputation";
  static constexpr Spelling<RecomputeMode> values[] = {
      {RecomputeMode::Always, "true", "every stage (FTPipe's setup)"},
      {RecomputeMode::Never, "false", "no stage: every activation is kept"},
      {RecomputeMode::Auto, "auto",
       "the partitioner chooses per stage under the memory budget"},
  };
};

/// The table entry of `value`.
template <typename Enum> const Spelling<Enum> &spellingOf(Enum value) {
  for (const Spelling<Enum> &entry : SetupEnum<Enum>::values)
    if (entry.value == value)
      return entry;
  llvm_unreachable("a setup enum value without a spelling");
}

/// The spelling of `value` ("1f1b", "adamw", "2bw", "true").
template <typename Enum> llvm::StringRef nameOf(Enum value) {
  return spellingOf(value).name;
}

/// A line for a person ("1F1B with flush", "AdamW: two buffers").
template <typename Enum> llvm::StringRef descriptionOf(Enum value) {
  return spellingOf(value).description;
}

/// The value spelled `text`, or an error listing the spellings
/// ("unknown schedule 'zb' (gpipe, 1f1b, async, zb-h1 or zb-auto)").
template <typename Enum> llvm::Expected<Enum> parseName(llvm::StringRef text) {
  const auto &values = SetupEnum<Enum>::values;
  constexpr size_t n = std::size(SetupEnum<Enum>::values);
  std::string known;
  for (size_t i = 0; i < n; ++i) {
    if (values[i].name == text)
      return values[i].value;
    known += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + values[i].name.str();
  }
  return llvm::createStringError("unknown " + SetupEnum<Enum>::what + " '" +
                                 text + "' (" + known + ")");
}

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
