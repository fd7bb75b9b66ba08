//===- IndexRanges.cpp - Ascending indices as JSON ranges -----------------===//

#include "FTPipe/Support/IndexRanges.h"

#include "llvm/ADT/STLExtras.h"

namespace json = llvm::json;

json::Value
ftpipe::support::indexRangesToJSON(const std::vector<int64_t> &indices) {
  json::Array ranges;
  for (size_t i = 0; i < indices.size();) {
    size_t end = i + 1;
    while (end < indices.size() && indices[end] == indices[end - 1] + 1)
      ++end;
    ranges.push_back(json::Array{indices[i], indices[end - 1] + 1});
    i = end;
  }
  return ranges;
}

bool ftpipe::support::indexRangesFromJSON(const json::Value &value,
                                          std::vector<int64_t> &indices,
                                          json::Path path) {
  std::vector<std::vector<int64_t>> ranges;
  if (!fromJSON(value, ranges, path))
    return false;
  indices.clear();
  for (auto [i, range] : llvm::enumerate(ranges)) {
    if (range.size() != 2 || range[0] < 0 || range[1] <= range[0] ||
        (!indices.empty() && range[0] <= indices.back())) {
      path.index(i).report("expected [begin, end) with begin < end, after "
                           "the range before");
      return false;
    }
    if (range[1] - range[0] > kMaxRangeIndices - int64_t(indices.size())) {
      path.index(i).report("more than 2^22 indices in all");
      return false;
    }
    for (int64_t index = range[0]; index < range[1]; ++index)
      indices.push_back(index);
  }
  return true;
}
