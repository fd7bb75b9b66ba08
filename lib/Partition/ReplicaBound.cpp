//===- ReplicaBound.cpp - How fast any replicated chain could be ----------===//
//
// The layouts are enumerated as partitions of the processes (the uncapped
// bound does not depend on the devices' order): 231 for 16 processes; under
// a cap as compositions (ordered): 32768 for 16.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaBound.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <cmath>
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

std::vector<double> ftpipe::partition::chainSharesMs(
    double computeMs, llvm::ArrayRef<int64_t> replicas, uint32_t microBatches) {
  double bound = chainBoundMs(computeMs, replicas, microBatches), before = 0.0;
  std::vector<double> shares;
  for (int64_t r : replicas) {
    int64_t m = std::max<int64_t>((int64_t(microBatches) + r - 1) / r, 1);
    shares.push_back((bound - before) / double(m));
    before += shares.back();
  }
  return shares;
}

static int64_t perReplica(uint32_t microBatches, int64_t r) {
  return std::max<int64_t>((int64_t(microBatches) + r - 1) / r, 1);
}

double ftpipe::partition::cappedChainBoundMs(double computeMs, double capMs,
                                             llvm::ArrayRef<int64_t> replicas,
                                             uint32_t microBatches) {
  if (double(replicas.size()) * capMs < computeMs * (1 - 1e-12))
    return std::numeric_limits<double>::infinity();
  // The compute the devices can take within T.
  auto reach = [&](double t) {
    double before = 0.0;
    for (int64_t r : replicas)
      before += std::clamp((t - before) / double(perReplica(microBatches, r)),
                           0.0, capMs);
    return before;
  };
  // Below the uncapped bound nothing reaches C; at `high` every device takes
  // its cap (m_k cap + k cap <= high), which holds C.
  double low = chainBoundMs(computeMs, replicas, microBatches), high = low;
  for (auto [k, r] : llvm::enumerate(replicas))
    high = std::max(high,
                    double(perReplica(microBatches, r) + int64_t(k)) * capMs);
  if (reach(low) >= computeMs * (1 - 1e-12))
    return low;
  for (int i = 0; i < 100 && high - low > 1e-12 * high; ++i) {
    double mid = (low + high) / 2;
    (reach(mid) >= computeMs ? high : low) = mid;
  }
  return high;
}

namespace {
/// Enumerates the layouts of a number of processes and keeps the lowest
/// bound of those with at least minDepth devices and a replica.
struct Enumeration {
  double computeMs, capMs;
  uint32_t minDepth, microBatches;
  bool ordered;
  std::vector<int64_t> parts;
  ChainBound best;

  void score() {
    if (parts.size() < minDepth ||
        llvm::none_of(parts, [](int64_t r) { return r >= 2; }))
      return;
    double ms = ordered
                    ? cappedChainBoundMs(computeMs, capMs, parts, microBatches)
                    : chainBoundMs(computeMs, parts, microBatches);
    if (ms < best.ms) {
      best.ms = ms;
      best.layout.replicas = parts;
    }
  }

  /// Every partition (ordered: composition) of `left` processes, appended
  /// to `parts`; a partition's parts are at most `largest`, largest first.
  void run(int64_t left, int64_t largest) {
    if (left == 0)
      return score();
    for (int64_t r = std::min(left, largest); r >= 1; --r) {
      parts.push_back(r);
      run(left - r, ordered ? left - r : r);
      parts.pop_back();
    }
  }
};
} // namespace

ChainBound ftpipe::partition::lowestChainBound(double computeMs,
                                               uint32_t minDepth,
                                               uint32_t processes,
                                               uint32_t microBatches,
                                               double capMs) {
  assert(minDepth >= 1 && minDepth < processes && "no layout to bound");
  bool ordered = std::isfinite(capMs) && processes <= kMaxCappedProcesses;
  Enumeration all{computeMs, capMs, minDepth, microBatches, ordered, {}, {}};
  all.best.ms = std::numeric_limits<double>::infinity();
  all.run(processes, processes);
  return all.best;
}
