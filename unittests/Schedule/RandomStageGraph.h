//===- RandomStageGraph.h - Random stage DAGs for property tests -*- C++
//-*-===//
//
// The random stage graphs and stage costs the schedule property tests share.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_UNITTESTS_SCHEDULE_RANDOMSTAGEGRAPH_H
#define FTPIPE_UNITTESTS_SCHEDULE_RANDOMSTAGEGRAPH_H

#include "FTPipe/Schedule/Schedule.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <random>
#include <vector>

namespace ftpipe {
namespace schedule {
namespace test {

/// A random stage DAG (stages in topological order, each reading one to
/// three earlier ones) on a random placement, several stages per device,
/// sometimes a tied device group.
inline StageGraph randomGraph(std::mt19937 &rng) {
  int64_t stages = 1 + rng() % 7, devices = 1 + rng() % stages;
  StageGraph graph;
  graph.devices = devices;
  graph.producers.resize(stages);
  for (int64_t s = 0; s < stages; ++s) {
    graph.device.push_back(s < devices ? s : rng() % devices);
    for (int64_t k = 0, n = s ? 1 + rng() % 3 : 0; k < n; ++k) {
      int64_t p = rng() % s;
      if (!llvm::is_contained(graph.producers[s], p))
        graph.producers[s].push_back(p);
    }
  }
  std::shuffle(graph.device.begin(), graph.device.end(), rng);
  if (devices > 1 && rng() % 2)
    graph.tiedDevices = {{0, static_cast<int64_t>(rng() % devices)}};
  return graph;
}

/// Random per-stage forward, input-gradient and weight-gradient costs (ms)
/// drawn from [low, high); with \p zeroWeights, a quarter of the stages have
/// no weight part (a stage without parameters).
struct RandomCosts {
  std::vector<double> forward, input, weight;
};
inline RandomCosts randomCosts(std::mt19937 &rng, int64_t stages, double low,
                               double high, bool zeroWeights) {
  std::uniform_real_distribution<double> cost(low, high);
  RandomCosts costs;
  for (int64_t s = 0; s < stages; ++s) {
    costs.forward.push_back(cost(rng));
    costs.input.push_back(cost(rng));
    costs.weight.push_back(zeroWeights && rng() % 4 == 0 ? 0.0 : cost(rng));
  }
  return costs;
}

} // namespace test
} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_UNITTESTS_SCHEDULE_RANDOMSTAGEGRAPH_H
