//===- Simulator.cpp - A plan through the pipeline simulator --------------===//
//
// Builds the simulator's inputs from a plan and the hardware, and the
// figures of a plan that passes judge their changes by.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Simulator.h"

#include "FTPipe/Partition/ZeroBubbleLists.h"

#include <algorithm>
#include <limits>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

ftpipe::schedule::Links ftpipe::partition::linksOf(const Hardware &hw) {
  schedule::Links links;
  size_t p = hw.numDevices();
  links.devices = p;
  links.GBps.assign(p * p, 0.0);
  links.latencyUs.assign(p * p, 0.0);
  for (size_t a = 0; a < p; ++a)
    for (size_t b = 0; b < p; ++b)
      if (a != b) {
        const LinkParams &l = hw.link(DeviceId(a), DeviceId(b));
        links.GBps[a * p + b] = l.GBps;
        links.latencyUs[a * p + b] = l.latencyUs;
      }
  return links;
}

std::vector<std::string> ftpipe::partition::deviceNames(const Hardware &hw) {
  std::vector<std::string> names;
  for (const Device &device : hw.devices())
    names.push_back(device.name);
  return names;
}

/// Whether every device of `hw` holds a stage (runtime lists need one).
static bool usesEveryDevice(const StageGraph &stages, const Hardware &hw) {
  std::vector<bool> used(hw.numDevices(), false);
  for (uint32_t d : stages.device)
    if (d < used.size())
      used[d] = true;
  return llvm::all_of(used, [](bool u) { return u; });
}

ftpipe::schedule::SharedCores
ftpipe::partition::sharedCoresOf(const Hardware &hw) {
  schedule::SharedCores shared;
  if (llvm::all_of(hw.spec().nodeCores, [](uint32_t c) { return c == 0; }))
    return shared;
  for (const Device &device : hw.devices()) {
    shared.node.push_back(device.node);
    if (device.node >= shared.cores.size())
      shared.cores.resize(device.node + 1, 0);
    ++shared.cores[device.node];
  }
  // A node without node_cores computes every device at once.
  for (auto [node, cores] : llvm::enumerate(shared.cores))
    if (uint32_t given = hw.nodeCores(uint32_t(node)))
      cores = given;
    else
      cores = std::max(1u, cores);
  return shared;
}

Expected<SimResult> ftpipe::partition::simulate(const StageGraph &stages,
                                                const Hardware &hw,
                                                const SimulatorConfig &given) {
  SimulatorConfig config = given;
  if (config.sharedCores.empty() && config.replicas.replicas.empty())
    config.sharedCores = sharedCoresOf(hw);
  // zb-h1 runs the lists that keep each device within its 1F1B peak, as
  // ftpipe-run's do (on a plan that uses every device).
  if (config.kind == schedule::Kind::ZeroBubbleH1 &&
      config.orders.devices.empty() && config.replicas.replicas.empty() &&
      usesEveryDevice(stages, hw)) {
    Expected<schedule::Schedule> lists = zeroBubbleH1Lists(
        stages, int64_t(hw.numDevices()), config.microBatches, config.split);
    if (!lists)
      return lists.takeError();
    SimulatorConfig withLists = config;
    withLists.orders = std::move(*lists);
    return schedule::simulate(stages, linksOf(hw), withLists);
  }
  return schedule::simulate(stages, linksOf(hw), config);
}

Expected<SimResult> ftpipe::partition::simulatePlan(
    const Graph &graph, const Hardware &hw, const Plan &plan,
    const ObjectiveConfig &objective, bool recordEvents) {
  Expected<StageGraph> sg = buildStageGraph(graph, hw, plan, objective);
  if (!sg)
    return sg.takeError();
  SimulatorConfig config;
  config.kind = objective.schedule;
  config.microBatches = objective.microBatches;
  config.recordEvents = recordEvents;
  if (schedule::isZeroBubble(config.kind))
    config.split = sg->splitStages();
  return simulate(*sg, hw, config);
}

Expected<SimResult> ftpipe::partition::simulateSynchronousStep(
    const Graph &graph, const Hardware &hw, const Plan &plan,
    const ObjectiveConfig &objective, schedule::Kind kind,
    const schedule::ZeroBubbleSearch &search) {
  if (kind == schedule::Kind::Async)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the async schedule has no step");
  Expected<PlanMetrics> metrics = evaluatePlan(graph, hw, plan, objective);
  if (!metrics)
    return metrics.takeError();
  Expected<StageGraph> sg = buildStageGraph(graph, hw, plan, objective);
  if (!sg)
    return sg.takeError();
  SimulatorConfig config;
  config.kind = kind;
  config.microBatches = objective.microBatches;
  config.recordEvents = false;
  if (schedule::isZeroBubble(kind))
    config.split = sg->splitStages();
  // zb-h1's lists are simulate's own; the others' as ftpipe-run builds them.
  if (kind != schedule::Kind::ZeroBubbleH1 && usesEveryDevice(*sg, hw)) {
    if (Error tooMany =
            schedule::checkTaskCount(sg->numStages(), objective.microBatches))
      return std::move(tooMany);
    Expected<schedule::Schedule> lists =
        kind == schedule::Kind::ZeroBubbleAuto
            ? zeroBubbleAutoLists(*sg, hw, metrics->memoryInputs,
                                  trainingSetupOf(objective),
                                  objective.microBatches, search)
            : schedule::generate(sg->topology(int64_t(hw.numDevices())),
                                 {kind, int64_t(objective.microBatches), 1});
    if (!lists)
      return lists.takeError();
    config.orders = std::move(*lists);
  }
  return simulate(*sg, hw, config);
}

double ftpipe::partition::synchronousStepMs(
    const Graph &graph, const Hardware &hw, const Plan &plan,
    const ObjectiveConfig &objective, schedule::Kind kind,
    const schedule::ZeroBubbleSearch &search) {
  Expected<SimResult> step =
      simulateSynchronousStep(graph, hw, plan, objective, kind, search);
  if (!step) {
    llvm::consumeError(step.takeError());
    return std::numeric_limits<double>::infinity();
  }
  return step->msPerMiniBatch;
}

/// The figures of `plan`, whose metrics are `m`, simulated.
static Expected<PlanFigures>
withSimulation(const Graph &graph, const Hardware &hw, const Plan &plan,
               const ObjectiveConfig &objective, const PlanMetrics &m) {
  Expected<SimResult> sim =
      simulatePlan(graph, hw, plan, objective, /*recordEvents=*/false);
  if (!sim)
    return sim.takeError();
  PlanFigures f;
  f.objectiveMs = m.asyncMsPerMicroBatch;
  f.simulatedMs = sim->msPerMicroBatch;
  f.busiestSentBytes = m.busiestSentBytes();
  f.memoryFits = m.memoryFits;
  return f;
}

Expected<PlanFigures>
ftpipe::partition::measurePlan(const Graph &graph, const Hardware &hw,
                               const Plan &plan,
                               const ObjectiveConfig &objective) {
  Expected<PlanMetrics> m = evaluatePlan(graph, hw, plan, objective);
  if (!m)
    return m.takeError();
  return withSimulation(graph, hw, plan, objective, *m);
}

Expected<std::optional<PlanFigures>>
ftpipe::partition::measurePlanIfObjectiveHolds(const Graph &graph,
                                               const Hardware &hw,
                                               const Plan &plan,
                                               const ObjectiveConfig &objective,
                                               const PlanFigures &base) {
  Expected<PlanMetrics> m = evaluatePlan(graph, hw, plan, objective);
  if (!m)
    return m.takeError();
  PlanFigures unsimulated = base;
  unsimulated.objectiveMs = m->asyncMsPerMicroBatch;
  unsimulated.memoryFits = m->memoryFits;
  if (!unsimulated.noSlowerThan(base))
    return std::nullopt;
  Expected<PlanFigures> f = withSimulation(graph, hw, plan, objective, *m);
  if (!f)
    return f.takeError();
  return std::optional<PlanFigures>(*f);
}

/// Rounding allowed when comparing figures with `base`'s.
static double roundingMs(const PlanFigures &base) {
  return 1e-9 * std::max({1.0, base.objectiveMs, base.simulatedMs});
}

bool PlanFigures::noSlowerThan(const PlanFigures &base) const {
  double eps = roundingMs(base);
  return objectiveMs <= base.objectiveMs + eps &&
         simulatedMs <= base.simulatedMs + eps &&
         (memoryFits || !base.memoryFits);
}

bool PlanFigures::fasterThan(const PlanFigures &base) const {
  double eps = roundingMs(base);
  return objectiveMs < base.objectiveMs - eps ||
         simulatedMs < base.simulatedMs - eps;
}
