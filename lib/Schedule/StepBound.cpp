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

StepLowerBound ftpipe::schedule::stepLowerBound(const TimedStageGraph &sg,
                                                const std::vector<bool> &split,
                                                uint32_t microBatches) {
  size_t S = sg.numStages();
  bool parts = sg.inputMs.size() == S && sg.weightMs.size() == S;
  std::vector<double> f(S), b(S), w(S, 0.0);
  std::vector<bool> splits(S);
  for (size_t s = 0; s < S; ++s) {
    splits[s] = parts && (split.empty() || split[s]);
    f[s] = sg.fwdMs[s];
    b[s] = (splits[s] ? sg.inputMs[s] : sg.bwdMs[s]) + sg.recomputeMs[s];
    w[s] = splits[s] ? sg.weightMs[s] : 0.0;
  }
  // As the simulator runs them: a consumer's forward waits for its
  // producer's to end, or only to start when the edge carries nothing but
  // values the producer passes on; a producer's backward waits for its
  // consumer's when a gradient of a value the producer made comes back.
  auto forwardLag = [&](const StageEdge &e) {
    return e.passTensors < e.fwdTensors ? f[e.src] : 0.0;
  };
  auto holdsUp = [](const StageEdge &e) {
    return e.bwdTensors > e.passGradTensors + e.firstHopGradTensors ||
           e.firstHopGradTensors > 0;
  };
  std::vector<double> headF(S, 0.0), headB(S, 0.0), tailF(S, 0.0),
      tailB(S, 0.0);
  for (uint32_t s : sg.topoOrder)
    for (const StageEdge &e : sg.edges)
      if (e.dst == s)
        headF[s] = std::max(headF[s], headF[e.src] + forwardLag(e));
  for (uint32_t s : llvm::reverse(sg.topoOrder)) {
    headB[s] = headF[s] + f[s];
    for (const StageEdge &e : sg.outEdges(s))
      if (holdsUp(e))
        headB[s] = std::max(headB[s], headB[e.dst] + b[e.dst]);
  }
  for (uint32_t s : sg.topoOrder) {
    tailB[s] = w[s];
    for (const StageEdge &e : sg.edges)
      if (e.dst == s && holdsUp(e))
        tailB[s] = std::max(tailB[s], b[e.src] + tailB[e.src]);
  }
  for (uint32_t s : llvm::reverse(sg.topoOrder)) {
    tailF[s] = b[s] + tailB[s];
    for (const StageEdge &e : sg.outEdges(s))
      tailF[s] =
          std::max(tailF[s], forwardLag(e) - f[s] + f[e.dst] + tailF[e.dst]);
  }

  std::vector<std::vector<Job>> jobs;
  std::vector<double> busy;
  for (size_t s = 0; s < S; ++s) {
    uint32_t d = sg.device[s];
    if (d >= jobs.size()) {
      jobs.resize(d + 1);
      busy.resize(d + 1, 0.0);
    }
    for (uint32_t m = 0; m < microBatches; ++m) {
      jobs[d].push_back({headF[s], f[s], tailF[s]});
      jobs[d].push_back({headB[s], b[s], tailB[s]});
      if (splits[s])
        jobs[d].push_back({headB[s] + b[s], w[s], 0.0});
    }
    busy[d] += microBatches * (f[s] + b[s] + w[s]);
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
