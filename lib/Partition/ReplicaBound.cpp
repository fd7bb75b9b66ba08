//===- ReplicaBound.cpp - How fast any replicated chain could be ----------===//
//
// The layouts are enumerated as partitions of the processes (the bound does
// not depend on the devices' order): 231 for 16 processes.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaBound.h"

#include <cassert>
#include <limits>

using namespace ftpipe::partition;

double ftpipe::partition::chainBoundMs(double computeMs,
                                       llvm::ArrayRef<int64_t> replicas,
                                       uint32_t microBatches) {
  double idle = 1.0;
  for (int64_t r : replicas) {
    int64_t m = (int64_t(microBatches) + r - 1) / r;
    idle *= 1.0 - 1.0 / double(std::max<int64_t>(m, 1));
  }
  return computeMs / (1.0 - idle);
}

/// Every partition of `left` processes into parts of at most `largest`,
/// largest part first, appended to `parts`, scored once complete.
static void enumerate(double computeMs, uint32_t minDepth,
                      uint32_t microBatches, int64_t left, int64_t largest,
                      std::vector<int64_t> &parts, ChainBound &best) {
  if (left == 0) {
    if (parts.size() < minDepth || parts.front() < 2)
      return;
    double ms = chainBoundMs(computeMs, parts, microBatches);
    if (ms < best.ms) {
      best.ms = ms;
      best.layout.replicas = parts;
    }
    return;
  }
  for (int64_t r = std::min(left, largest); r >= 1; --r) {
    parts.push_back(r);
    enumerate(computeMs, minDepth, microBatches, left - r, r, parts, best);
    parts.pop_back();
  }
}

ChainBound ftpipe::partition::lowestChainBound(double computeMs,
                                               uint32_t minDepth,
                                               uint32_t processes,
                                               uint32_t microBatches) {
  assert(minDepth >= 1 && minDepth < processes && "no layout to bound");
  ChainBound best;
  best.ms = std::numeric_limits<double>::infinity();
  std::vector<int64_t> parts;
  enumerate(computeMs, minDepth, microBatches, processes, processes, parts,
            best);
  return best;
}
