//===- IndexRanges.h - Ascending indices as JSON ranges ---------*- C++ -*-===//
//
// A set of ascending indices (a stage's op positions in the model function)
// written as [begin, end) ranges, [[0, 3], [7, 9]], and read back: the form
// manifest.json's and measured profiles' `ops` share.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SUPPORT_INDEXRANGES_H
#define FTPIPE_SUPPORT_INDEXRANGES_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <vector>

namespace ftpipe {
namespace support {

/// The most indices a value may hold (far more than any model's ops).
inline constexpr int64_t kMaxRangeIndices = int64_t(1) << 22;

/// `indices` (ascending, distinct) as [begin, end) ranges.
llvm::json::Value indexRangesToJSON(const std::vector<int64_t> &indices);
/// Reads ranges into `indices`; refuses (reporting at `path`) a range that is
/// not [begin, end) with 0 <= begin < end, one that does not start after the
/// one before, and more than kMaxRangeIndices indices in all.
bool indexRangesFromJSON(const llvm::json::Value &value,
                         std::vector<int64_t> &indices, llvm::json::Path path);

} // namespace support
} // namespace ftpipe

#endif // FTPIPE_SUPPORT_INDEXRANGES_H
