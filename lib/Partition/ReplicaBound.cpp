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
  llvm::function_ref<double(llvm::ArrayRef<int64_t>)> bound;
  uint32_t minDepth;
  bool ordered;
  std::vector<int64_t> parts;
  ChainBound best;

  void score() {
    if (parts.size() < minDepth ||
        llvm::none_of(parts, [](int64_t r) { return r >= 2; }))
      return;
    double ms = bound(parts);
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

/// The lowest `bound` over the layouts of `processes` processes on at least
/// `minDepth` devices with a replica (ordered: every order of the devices).
ChainBound lowestOver(llvm::function_ref<double(llvm::ArrayRef<int64_t>)> bound,
                      uint32_t minDepth, uint32_t processes, bool ordered) {
  assert(minDepth >= 1 && minDepth < processes && "no layout to bound");
  Enumeration all{bound, minDepth, ordered, {}, {}};
  all.best.ms = std::numeric_limits<double>::infinity();
  all.run(processes, processes);
  return all.best;
}
} // namespace

ChainBound ftpipe::partition::lowestChainBound(double computeMs,
                                               uint32_t minDepth,
                                               uint32_t processes,
                                               uint32_t microBatches,
                                               double capMs) {
  bool ordered = std::isfinite(capMs) && processes <= kMaxCappedProcesses;
  return lowestOver(
      [&](llvm::ArrayRef<int64_t> parts) {
        return ordered
                   ? cappedChainBoundMs(computeMs, capMs, parts, microBatches)
                   : chainBoundMs(computeMs, parts, microBatches);
      },
      minDepth, processes, ordered);
}

StepBoundFigures
ftpipe::partition::stepBoundFigures(const Graph &graph, const Hardware &hw,
                                    const ObjectiveConfig &config,
                                    bool recomputes) {
  // Node costs are device 0's; the objective divides them by each device's
  // tflops over device 0's, so the fastest device runs them in `scale`.
  double scale = 1.0;
  if (config.scaleComputeByDevice && hw.numDevices() > 0 &&
      hw.device(0).tflops > 0.0)
    for (const Device &device : hw.devices())
      scale = std::min(scale, hw.device(0).tflops / device.tflops);
  uint32_t n = graph.numNodes(), m = std::max<uint32_t>(config.microBatches, 1);
  StepBoundFigures figures;
  figures.pathMs.assign(m, 0.0);
  // Async's mini-batch is the simulator's estimate of a period from a few
  // steps' completions, which no work or path bounds.
  if (config.schedule == Kind::Async)
    return figures;
  std::vector<double> f(n), b(n);
  for (NodeId v = 0; v < n; ++v) {
    const NodeCost &c = graph.cost(v);
    double again = recomputes ? c.fwdMs : 0.0;
    figures.computeMs += (c.fwdMs + c.bwdMs + again) * scale;
    f[v] = c.fwdMs * scale;
    // A split backward's weight part hangs off the path; a recomputing
    // stage's backward task runs the forward first.
    b[v] = (again + (schedule::isZeroBubble(config.schedule)
                         ? c.bwdMs - c.bwdWeightMs
                         : c.bwdMs)) *
           scale;
  }
  // B_u waits for B_v where u makes a value with a gradient that v reads.
  auto gradientEdge = [&](NodeId u, NodeId v) {
    return llvm::any_of(graph.outputs(u), [&](ValueId value) {
      return graph.valueNeedsGrad(value) &&
             llvm::is_contained(graph.consumers(value), v);
    });
  };
  // Longest paths before each task starts (fs, bs) and after it ends (fe,
  // be) in the DAG F_u -> F_v (u before v), F_v -> B_v, B_v -> B_u
  // (gradient edges); ids are a topological order.
  std::vector<double> fs(n, 0.0), bs(n, 0.0), fe(n, 0.0), be(n, 0.0);
  for (NodeId v = 0; v < n; ++v)
    for (NodeId u : graph.preds(v))
      fs[v] = std::max(fs[v], fs[u] + f[u]);
  for (NodeId v = n; v-- > 0;) {
    bs[v] = fs[v] + f[v];
    for (NodeId w : graph.succs(v))
      if (gradientEdge(v, w))
        bs[v] = std::max(bs[v], bs[w] + b[w]);
  }
  for (NodeId v = 0; v < n; ++v)
    for (NodeId u : graph.preds(v))
      if (gradientEdge(u, v))
        be[v] = std::max(be[v], b[u] + be[u]);
  for (NodeId v = n; v-- > 0;) {
    fe[v] = b[v] + be[v];
    for (NodeId w : graph.succs(v))
      fe[v] = std::max(fe[v], f[w] + fe[w]);
  }
  for (uint32_t k = 0; k < m; ++k)
    for (NodeId v = 0; v < n; ++v)
      figures.pathMs[k] =
          std::max({figures.pathMs[k], fs[v] + (k + 1) * f[v] + fe[v],
                    bs[v] + (k + 1) * b[v] + be[v]});
  return figures;
}

double ftpipe::partition::stepBoundMs(const StepBoundFigures &figures,
                                      llvm::ArrayRef<int64_t> replicas,
                                      uint32_t microBatches) {
  double share = 0.0;
  int64_t widest = 1;
  for (int64_t r : replicas) {
    share += 1.0 / double(perReplica(microBatches, r));
    widest = std::max(widest, r);
  }
  double path =
      figures.pathMs.empty()
          ? 0.0
          : figures
                .pathMs[std::min<size_t>(perReplica(microBatches, widest) - 1,
                                         figures.pathMs.size() - 1)];
  return std::max(path, share > 0.0 ? figures.computeMs / share : 0.0);
}

ChainBound ftpipe::partition::lowestStepBound(const StepBoundFigures &figures,
                                              uint32_t minDepth,
                                              uint32_t processes,
                                              uint32_t microBatches) {
  return lowestOver(
      [&](llvm::ArrayRef<int64_t> parts) {
        return stepBoundMs(figures, parts, microBatches);
      },
      minDepth, processes, /*ordered=*/false);
}
