//===- Freezing.h - When to freeze which prefix of a model ------*- C++ -*-===//
//
// Freeze policies during a run (docs/Freezing.md), as PipeTransformer (ICML
// 2021) has them, deciding a frozen prefix depth (how many of the model's
// layers, in its order, are frozen) at step boundaries:
//  - alpha: a fraction alpha of the layers still active freezes each epoch,
//    so floor(L (1 - (1 - alpha)^T)) are frozen after T epochs;
//  - gradient norm: per layer the norm of its gradient accumulated between
//    evaluations; a layer settles when that changes by less than a threshold
//    (relative) from one evaluation to the next, and the prefix grows over
//    the settled layers;
//  - a schedule file: `STEP DEPTH` lines, the depth from that step on.
// Every policy only ever freezes a prefix and never thaws: the depth is
// monotone. And the layers as the runtime knows them: parameter names
// grouped by transformer block, the embeddings with the first. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_FREEZING_H
#define FTPIPE_SCHEDULE_FREEZING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ftpipe {
namespace schedule {

/// PipeTransformer's schedule: layers frozen after `epochs` epochs of
/// freezing a fraction `alpha` (in [0, 1]) of the active ones each epoch,
/// floor(layers (1 - (1 - alpha)^epochs)), at most `layers`.
uint32_t alphaFrozenDepth(uint32_t layers, double alpha, uint32_t epochs);

/// A schedule file's points: from step `first` on, `second` layers frozen.
struct FreezeSchedule {
  std::vector<std::pair<int64_t, uint32_t>> points;
  /// The depth at `step` (0 before the first point).
  uint32_t depthAt(int64_t step) const;
};

/// Reads `STEP DEPTH` lines (blank lines and `#` comments skipped): steps
/// strictly increasing, depths non-decreasing and at most `layers`. Errors
/// name the line.
llvm::Expected<FreezeSchedule> parseFreezeSchedule(llvm::StringRef text,
                                                   uint32_t layers);

/// The gradient-norm rule: evaluate() takes, per layer, the norm of its
/// gradient accumulated since the previous evaluation; a layer has settled
/// when that norm changed by less than `threshold` relative to the previous
/// evaluation's. The depth grows over the longest prefix of settled (or
/// already frozen) layers, by at most `maxStep` layers per evaluation, and
/// never past `maxDepth`.
class GradientNormRule {
public:
  GradientNormRule(uint32_t layers, double threshold, uint32_t maxDepth,
                   uint32_t maxStep = 1);
  /// One evaluation; returns the new depth. `norms` has one entry per layer.
  uint32_t evaluate(llvm::ArrayRef<double> norms);
  uint32_t depth() const { return frozen; }
  /// The norms of the last evaluation (empty before the first).
  llvm::ArrayRef<double> lastNorms() const { return previous; }
  /// Continues a rule that had evaluated to `depth` with `norms` last (a
  /// resumed run); refuses norms of another layer count or a depth above
  /// the rule's bound.
  llvm::Error restore(std::vector<double> norms, uint32_t depth);

private:
  uint32_t layers, maxDepth, maxStep;
  double threshold;
  std::vector<double> previous;
  uint32_t frozen = 0;
};

/// `ftpipe-run --freeze`: `alpha=X`, `gradient-norm[,threshold=X][,every=N]`
/// or `schedule=FILE`.
struct FreezePolicy {
  enum class Kind { Alpha, GradientNorm, Schedule };
  Kind kind = Kind::Alpha;
  double alpha = 0;
  /// Gradient norm: relative change below which a layer has settled, and
  /// the steps between evaluations.
  double threshold = 0.05;
  int64_t every = 1;
  /// Schedule: the file (read by the caller, parseFreezeSchedule).
  std::string file;
};
llvm::Expected<FreezePolicy> parseFreezePolicy(llvm::StringRef spec);

/// The model's layers in its order, as groups of parameter names: one group
/// per transformer block (a `.layer.N.`, `.layers.N.`, `.h.N.` or
/// `.block.N.` in the name), block N in group N; the parameters before the
/// blocks whose name mentions an embedding join group 0. Other parameters
/// (heads, final norms) are in no group: they are never frozen. Fails for
/// names with blocks in several stacks (an encoder and a decoder), whose
/// order names alone do not tell.
llvm::Expected<std::vector<std::vector<std::string>>>
groupLayers(llvm::ArrayRef<std::string> names);

/// The names of the first `depth` groups.
std::set<std::string>
frozenNames(const std::vector<std::vector<std::string>> &layers,
            uint32_t depth);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_FREEZING_H
