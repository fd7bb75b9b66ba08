//===- StepBound.cpp - A lower bound on a synchronous step ----------------===//
//
// Every task (stage, micro-batch, part) gets a head, the earliest time the
// stage DAG lets it start, and a tail, the least time the step still needs
// once it ends, both along the dependencies the simulator enforces (the
// same for every micro-batch). A device's tasks then form a one-machine
// problem with release times and tails; its preemptive relaxation, solved
// exactly by Jackson's rule (run the released task with the longest tail),
// bounds every non-preemptive order of them.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/StepBound.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>

using namespace ftpipe::schedule;

namespace {
/// A task of the one-device problem.
struct Job {
  double release = 0.0, length = 0.0, tail = 0.0;
};
} // namespace

/// The least max(end + tail) of the jobs on one device when a job may be
/// interrupted (Jackson's preemptive schedule, optimal for that problem).
static double preemptiveBound(std::vector<Job> jobs) {
  llvm::sort(jobs,
             [](const Job &a, const Job &b) { return a.release < b.release; });
  auto shorterTail = [](const Job &a, const Job &b) { return a.tail < b.tail; };
  std::priority_queue<Job, std::vector<Job>, decltype(shorterTail)> released(
      shorterTail);
  double t = 0.0, bound = 0.0;
  size_t next = 0;
  while (next < jobs.size() || !released.empty()) {
    if (released.empty())
      t = std::max(t, jobs[next].release);
    while (next < jobs.size() && jobs[next].release <= t)
      released.push(jobs[next++]);
    Job job = released.top();
    released.pop();
    double until = next < jobs.size() ? jobs[next].release
                                      : std::numeric_limits<double>::infinity();
    double run = std::min(job.length, until - t);
    t += run;
    job.length -= run;
    if (job.length > 0.0)
      released.push(job);
    else
      bound = std::max(bound, t + job.tail);
  }
  return bound;
}

namespace {
/// Per stage, its tasks' lengths and whether it splits.
struct StageTasks {
  std::vector<double> f, b, w;
  std::vector<bool> splits;
};
} // namespace

static StageTasks stageTasks(const TimedStageGraph &sg,
                             const std::vector<bool> &split) {
  size_t S = sg.numStages();
  bool parts = sg.inputMs.size() == S && sg.weightMs.size() == S;
  StageTasks t;
  for (size_t s = 0; s < S; ++s) {
    bool splits = parts && (split.empty() || split[s]);
    t.splits.push_back(splits);
    t.f.push_back(sg.fwdMs[s]);
    t.b.push_back((splits ? sg.inputMs[s] : sg.bwdMs[s]) + sg.recomputeMs[s]);
    t.w.push_back(splits ? sg.weightMs[s] : 0.0);
  }
  return t;
}

// As the simulator runs them: a consumer's forward waits for the values
// its producer made (sent when the producer's forward ends) and those it
// passes on (sent when it starts); a producer's backward waits for the
// gradients of values it made (sent when the consumer's backward ends), not
// for those of values it passes on. Each message takes at least its link
// time (none without `links`).
namespace {
struct Lags {
  const TimedStageGraph &sg;
  const StageTasks &t;
  const Links *links;

  double transfer(uint64_t bytes, uint32_t tensors, uint32_t from,
                  uint32_t to) const {
    return links ? links->transferMs(bytes, tensors, sg.device[from],
                                     sg.device[to])
                 : 0.0;
  }
  /// From the start of e.src's forward to the earliest start of e.dst's.
  double forward(const StageEdge &e) const {
    double lag = 0.0;
    if (e.passTensors < e.fwdTensors)
      lag = t.f[e.src] + transfer(e.fwdBytes - e.passBytes,
                                  e.fwdTensors - e.passTensors, e.src, e.dst);
    if (e.passTensors > 0)
      lag = std::max(lag, transfer(e.passBytes, e.passTensors, e.src, e.dst));
    return lag;
  }
  /// From the start of e.dst's backward (input part) to the earliest start
  /// of e.src's; nullopt when e.src's does not wait for it.
  std::optional<double> backward(const StageEdge &e) const {
    uint32_t forwarded = e.passGradTensors + e.firstHopGradTensors;
    std::optional<double> lag;
    if (e.bwdTensors > forwarded)
      lag = t.b[e.dst] +
            transfer(e.bwdBytes - e.passGradBytes - e.firstHopGradBytes,
                     e.bwdTensors - forwarded, e.dst, e.src);
    if (e.firstHopGradTensors > 0)
      lag =
          std::max(lag.value_or(0.0),
                   t.b[e.dst] + transfer(e.firstHopGradBytes,
                                         e.firstHopGradTensors, e.dst, e.src));
    return lag;
  }
};
} // namespace

static StagePaths pathsOf(const TimedStageGraph &sg, const StageTasks &t,
                          const Links *links) {
  Lags lags{sg, t, links};
  size_t S = sg.numStages();
  StagePaths paths;
  std::vector<double> &headF = paths.forwardHeadMs,
                      &headB = paths.backwardHeadMs,
                      &tailF = paths.forwardTailMs,
                      &tailB = paths.backwardTailMs;
  headF.assign(S, 0.0);
  headB.assign(S, 0.0);
  tailF.assign(S, 0.0);
  tailB.assign(S, 0.0);
  for (uint32_t s : sg.topoOrder) {
    tailB[s] = t.w[s];
    for (const StageEdge &e : sg.edges)
      if (e.dst == s) {
        headF[s] = std::max(headF[s], headF[e.src] + lags.forward(e));
        if (std::optional<double> lag = lags.backward(e))
          tailB[s] =
              std::max(tailB[s], *lag - t.b[s] + t.b[e.src] + tailB[e.src]);
      }
  }
  for (uint32_t s : llvm::reverse(sg.topoOrder)) {
    headB[s] = headF[s] + t.f[s];
    tailF[s] = t.b[s] + tailB[s];
    for (const StageEdge &e : sg.outEdges(s)) {
      if (std::optional<double> lag = lags.backward(e))
        headB[s] = std::max(headB[s], headB[e.dst] + *lag);
      tailF[s] = std::max(tailF[s],
                          lags.forward(e) - t.f[s] + t.f[e.dst] + tailF[e.dst]);
    }
  }
  return paths;
}

EdgeLags ftpipe::schedule::edgeLags(const TimedStageGraph &sg,
                                    const std::vector<bool> &split,
                                    const Links *links) {
  StageTasks t = stageTasks(sg, split);
  Lags lags{sg, t, links};
  EdgeLags result;
  for (const StageEdge &e : sg.edges) {
    result.forwardMs.push_back(lags.forward(e));
    result.backwardMs.push_back(lags.backward(e));
  }
  return result;
}

StagePaths ftpipe::schedule::stagePaths(const TimedStageGraph &sg,
                                        const std::vector<bool> &split,
                                        const Links *links) {
  return pathsOf(sg, stageTasks(sg, split), links);
}

StepLowerBound
ftpipe::schedule::stepLowerBound(const TimedStageGraph &sg,
                                 const std::vector<bool> &split,
                                 uint32_t microBatches, const Links *links,
                                 llvm::ArrayRef<int64_t> replicas) {
  size_t S = sg.numStages();
  StageTasks t = stageTasks(sg, split);
  StagePaths paths = pathsOf(sg, t, links);
  std::vector<std::vector<Job>> jobs;
  std::vector<double> busy;
  for (size_t s = 0; s < S; ++s) {
    uint32_t d = sg.device[s];
    if (d >= jobs.size()) {
      jobs.resize(d + 1);
      busy.resize(d + 1, 0.0);
    }
    // Replica 0 of a device on r processes runs micro-batches 0, r, 2r, ...
    int64_t r = d < replicas.size() ? std::max<int64_t>(replicas[d], 1) : 1;
    uint32_t own = uint32_t((int64_t(microBatches) + r - 1) / r);
    for (uint32_t m = 0; m < own; ++m) {
      jobs[d].push_back(
          {paths.forwardHeadMs[s], t.f[s], paths.forwardTailMs[s]});
      jobs[d].push_back(
          {paths.backwardHeadMs[s], t.b[s], paths.backwardTailMs[s]});
      if (t.splits[s])
        jobs[d].push_back({paths.backwardHeadMs[s] + t.b[s], t.w[s], 0.0});
    }
    busy[d] += own * (t.f[s] + t.b[s] + t.w[s]);
  }
  StepLowerBound bound;
  for (auto [d, onDevice] : llvm::enumerate(jobs)) {
    double ms = preemptiveBound(onDevice);
    if (ms > bound.msPerMiniBatch) {
      bound.device = uint32_t(d);
      bound.msPerMiniBatch = ms;
      bound.busyMs = busy[d];
    }
  }
  return bound;
}
