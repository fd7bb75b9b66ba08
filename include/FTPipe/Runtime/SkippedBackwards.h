//===- SkippedBackwards.h - Backwards a frozen prefix does not need -*- C++
//-*-===//
//
// When a run freezes a prefix (ftpipe-run --freeze, docs/Freezing.md), a
// stage whose parameters are all frozen and whose producers are all such
// stages (a frozen-only upstream closure, never the loss stage) needs no
// backward, even in code compiled with those parameters trained: its
// backward computes only gradients the runtime drops and input gradients
// only such stages receive. The executor skips its backward actions (B, and
// a split backward's I and W) and drops the sends of the input gradients
// other stages' backwards address to it (they still compute them). The
// weights are those of the run without the skip, bit for bit. A plan
// compiled with the prefix frozen has such stages too (their backward does
// nothing). The activation cache (ActivationCache.h) caches exactly these
// stages. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_SKIPPEDBACKWARDS_H
#define FTPIPE_RUNTIME_SKIPPEDBACKWARDS_H

#include "FTPipe/Runtime/ArtifactManifest.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace ftpipe {
namespace runtime {

/// A send as the stage code makes it: (peer device, tag).
using SendKey = std::pair<int64_t, int64_t>;

/// The backwards a run skips from micro-batch `from` on.
struct SkippedBackwards {
  /// The stages whose backward is skipped (the frozen-only closure).
  std::set<int64_t> stages;
  /// Per stage not skipped, the sends of its backward (or of its input
  /// part) that a skipped stage would receive: dropped.
  std::map<int64_t, std::set<SendKey>> droppedSends;
  /// The first micro-batch they apply to (every device decides by the
  /// micro-batch, so a producer and its consumer always agree).
  int64_t from = 0;
  bool skips(int64_t stage, int64_t mb) const {
    return mb >= from && stages.count(stage) != 0;
  }
  /// The sends to drop in `stage`'s backward of micro-batch `mb` (null:
  /// none).
  const std::set<SendKey> *dropped(int64_t stage, int64_t mb) const {
    if (mb < from)
      return nullptr;
    auto it = droppedSends.find(stage);
    return it == droppedSends.end() ? nullptr : &it->second;
  }
  /// One line for a person, from step `step`: the stages and the sends.
  std::string describe(int64_t step) const;
};

/// The frozen-only closure of `manifest`'s plan with `frozen` frozen: in
/// the order the stages run, a stage that does not compute the loss, whose
/// forward reads only parameters in `frozen` and whose producers are all in
/// the closure. Empty when nothing is frozen.
std::set<int64_t> frozenClosure(const ArtifactManifest &manifest,
                                const std::set<std::string> &frozen);

/// The skipped backwards of `manifest`'s plan with `frozen` frozen, from
/// micro-batch `from` on.
SkippedBackwards planSkippedBackwards(const ArtifactManifest &manifest,
                                      const std::set<std::string> &frozen,
                                      int64_t from);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_SKIPPEDBACKWARDS_H
