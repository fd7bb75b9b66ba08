//===- Report.cpp - Score the plan and print the report ---------*- C++ -*-===//
//
// Evaluates the plan in the IR with lib/Partition's objective and simulator
// and presents it: a table on stdout, and on request JSON, a Chrome trace of
// the simulated timeline and a Graphviz stage graph.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/PlanIO.h"
#include "FTPipe/Partition/Recomputation.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/ZeroBubbleLists.h"
#include "FTPipe/Schedule/StepBound.h"
#include "FTPipe/Schedule/ZeroBubble.h"
#include "FTPipe/Transforms/Passes.h"

#include "PassUtils.h"
#include "ReplicaPlanning.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <optional>

#define DEBUG_TYPE "ftpipe-report"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_REPORTPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;
using partition::DeviceMetrics;
using partition::PlanMetrics;
using partition::StageMetrics;

namespace {
struct ReportPass : public mlir::ftpipe::impl::ReportPassBase<ReportPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// One schedule of the side-by-side comparison: the plan simulated under it
/// and each device's memory by the plan's formula for it.
struct ScheduleFigures {
  ::ftpipe::schedule::Kind kind = ::ftpipe::schedule::Kind::Async;
  /// Simulated time of a mini-batch of M micro-batches (async: the
  /// steady-state period times M) and the idle share of the devices.
  double msPerMiniBatch = 0.0, idleFraction = 0.0;
  /// Per device, schedule::deviceMemory's total under this schedule.
  std::vector<uint64_t> memoryBytes;
  bool fits = true;
};

/// Everything the report shows, computed once.
struct ReportData {
  std::string method;
  std::string function;
  double partitionSeconds = 0.0;
  size_t numNodes = 0;
  partition::ObjectiveConfig config;
  PlanMetrics metrics;
  partition::SimResult gpipe, oneFOneB;
  /// GPipe, 1F1B, ZB-H1, zb-auto and async side by side.
  std::vector<ScheduleFigures> schedules;
  /// The ZB paper's ZB-H1 step from the busiest device's F, B and W.
  ::ftpipe::schedule::ZeroBubbleH1Bound zeroBubbleBound;
  /// No synchronous step of the plan's costs is shorter.
  ::ftpipe::schedule::StepLowerBound stepBound;
  /// With replicas=auto: the depth x replicas options every partitioner
  /// planned, and the one chosen.
  std::optional<partition::ReplicaChoice> replicaChoice;
  /// The simulated async time per micro-batch (the objective's schedule in
  /// the simulator, which also sees stages waiting on one another).
  double asyncSimMs = 0.0;
  partition::StageGraph stages;
  /// The lower bound that accounts for memory (memoryLowerBoundMs).
  double memoryBoundMs = 0.0;
  /// Ops computed in every stage that reads them (`ftpipe.replicate`).
  size_t replicatedOps = 0;
  /// Ops whose results pass from reader to reader (`ftpipe.forward`).
  size_t forwardedOps = 0;
  /// Weights' transposes the cost model counts as free (folded into their
  /// matmuls) in another stage than a reader: code generation copies them
  /// there, which the figures leave out.
  size_t apartTransposes = 0;
  uint64_t apartTransposeBytes = 0;
};
} // namespace

static double toMiB(uint64_t bytes) { return double(bytes) / (1 << 20); }
static double toGiB(uint64_t bytes) { return double(bytes) / (1 << 30); }

/// Per device, the most bytes of activations, W buffers and a running
/// task's working set the lists of `kind` for one step hold at once
/// (schedule::dryRun with each stage's bytes from `inputs`), the lists being
/// `given` when there are some; none under async (a stream, not one step)
/// or when the lists cannot be built (a device without a stage).
static std::optional<std::vector<uint64_t>>
listPeakBytes(const partition::StageGraph &stages,
              const partition::Hardware &hw,
              ArrayRef<::ftpipe::schedule::DeviceMemoryInputs> inputs,
              ::ftpipe::schedule::Kind kind, uint32_t microBatches,
              const ::ftpipe::schedule::Schedule *given) {
  namespace sc = ::ftpipe::schedule;
  if (kind == sc::Kind::Async)
    return std::nullopt;
  sc::StageGraph topology = stages.topology(int64_t(hw.numDevices()));
  sc::ScheduleConfig config{kind, microBatches, 1,
                            sc::isZeroBubble(kind) ? stages.splitStages()
                                                   : std::vector<bool>()};
  llvm::Expected<sc::Schedule> lists =
      given ? llvm::Expected<sc::Schedule>(*given)
      : kind == sc::Kind::ZeroBubbleAuto
          ? sc::generateZeroBubbleAuto(topology, stages, partition::linksOf(hw),
                                       config)
          : sc::generate(topology, config);
  if (!lists) {
    llvm::consumeError(lists.takeError());
    return std::nullopt;
  }
  llvm::Expected<sc::ZeroBubbleLimits> limits =
      sc::zeroBubbleLimits(topology, inputs, sc::TrainingSetup());
  if (!limits) {
    llvm::consumeError(limits.takeError());
    return std::nullopt;
  }
  llvm::Expected<sc::DryRunResult> dry =
      sc::dryRun(topology, config, *lists, &limits->memory);
  if (!dry) {
    llvm::consumeError(dry.takeError());
    return std::nullopt;
  }
  return dry->peakBytes;
}

/// The schedules side by side: simulated mini-batch time, idle share and
/// each device's memory under each.
static void printSchedules(raw_ostream &os, const ReportData &data) {
  os << llvm::formatv("\n{0,-8} {1,16} {2,7} {3,14}  {4}\n", "schedule",
                      "ms_per_minibatch", "idle_%", "max_memory_GiB",
                      "memory_GiB per device");
  for (const ScheduleFigures &row : data.schedules) {
    std::string perDevice;
    uint64_t most = 0;
    for (uint64_t bytes : row.memoryBytes) {
      perDevice += llvm::formatv("{0}{1:f2}", perDevice.empty() ? "" : " ",
                                 toGiB(bytes));
      most = std::max(most, bytes);
    }
    os << llvm::formatv("{0,-8} {1,16:f3} {2,7:f1} {3,14:f2}  {4}{5}\n",
                        ::ftpipe::schedule::nameOf(row.kind),
                        row.msPerMiniBatch, 100.0 * row.idleFraction,
                        toGiB(most), perDevice,
                        row.fits ? "" : "  OVER BUDGET");
  }
}

/// The planning table of replicas=auto: every partitioner's depths and
/// layouts tried.
static void printReplicas(raw_ostream &os,
                          const partition::ReplicaChoice &choice,
                          uint32_t microBatches) {
  os << llvm::formatv("\nreplicas (each partitioner's plan on depth devices, "
                      "each run on its replicas: one number for all, or one "
                      "per device; M = {0} micro-batches split among them; "
                      "replicas chosen where they take at least {1:P0} less "
                      "than every pure pipeline)\n",
                      microBatches, partition::kReplicaMinGain);
  os << llvm::formatv("{0,-10} {1,5} {2,-40} {3,12} {4,12} {5,16} {6,7}  {7}\n",
                      "method", "depth", "replicas", "objective_ms",
                      "allreduce_ms", "ms_per_minibatch", "idle_%", "");
  for (auto [m, method] : llvm::enumerate(choice.searches)) {
    if (!method.search) {
      os << llvm::formatv("{0,-10} no option: {1}\n", method.method,
                          method.failure);
      continue;
    }
    for (auto [o, option] : llvm::enumerate(method.search->options)) {
      std::string layout = partition::describeOption(option);
      if (!option.feasible) {
        os << llvm::formatv("{0,-10} {1,5} {2,-40}  infeasible: {3}\n",
                            method.method, option.depth(), layout,
                            option.failure);
        continue;
      }
      bool chosen = choice.chosen.method == m && choice.chosen.option == o;
      os << llvm::formatv("{0,-10} {1,5} {2,-40} {3,12:f3} {4,12:f3} {5,16:f3} "
                          "{6,7:f1}  {7}\n",
                          method.method, option.depth(), layout,
                          option.objectiveMs, option.allReduceMs,
                          option.simulatedMsPerMiniBatch,
                          100.0 * option.idleFraction, chosen ? "chosen" : "");
    }
  }
}

static void printTable(raw_ostream &os, const ReportData &data,
                       const partition::Hardware &hw) {
  const PlanMetrics &m = data.metrics;
  os << llvm::formatv("FTPipe partition report: '{0}' plan of @{1} on {2} "
                      "({3} devices)\n",
                      data.method, data.function, hw.name(), hw.numDevices());
  size_t recomputing = llvm::count_if(
      m.stages, [](const partition::StageMetrics &s) { return s.recompute; });
  std::string recomputation =
      recomputing == m.stages.size() ? "recomputation"
      : recomputing == 0             ? "no recomputation"
                         : llvm::formatv("recomputation on {0} of {1} stages",
                                         recomputing, m.stages.size())
                               .str();
  os << llvm::formatv("setup: {0} schedule, {1}, {2}, {3}, M = {4} "
                      "micro-batches per mini-batch\n",
                      ::ftpipe::schedule::descriptionOf(data.config.schedule),
                      ::ftpipe::schedule::nameOf(data.config.optimizer),
                      ::ftpipe::schedule::descriptionOf(data.config.versioning),
                      recomputation, data.config.microBatches);
  os << llvm::formatv("{0} ops, {1} stages, total compute {2:f2} ms per "
                      "micro-batch\n",
                      data.numNodes, m.stages.size(), m.totalComputeMs);
  if (data.replicatedOps > 0)
    os << llvm::formatv("{0} ops replicated: made in every stage that reads "
                        "them, not sent\n",
                        data.replicatedOps);
  if (data.forwardedOps > 0) {
    uint64_t passed = 0;
    for (const partition::StageEdge &edge : data.stages.edges)
      if (data.stages.device[edge.src] != data.stages.device[edge.dst])
        passed += edge.passBytes + edge.passGradBytes;
    os << llvm::formatv("{0} ops forwarded: their results pass from each "
                        "stage that reads them to the next ({1:f2} MiB passed "
                        "on between devices per micro-batch)\n",
                        data.forwardedOps, toMiB(passed));
  }
  if (data.apartTransposes > 0)
    os << llvm::formatv("warning: {0} weights' transposes ({1:f2} MiB) sit in "
                        "another stage than a matmul that reads them; the "
                        "cost model counts them as folded into that matmul, "
                        "but code generation copies them, which the times "
                        "below leave out\n",
                        data.apartTransposes, toMiB(data.apartTransposeBytes));
  os << "\n";

  os << llvm::formatv("{0,5} {1,6} {2,11} {3,11} {4,11} {5,10} {6,10} {7,6} "
                      "{8,10} {9,9}\n",
                      "stage", "device", "compute_ms", "comm_fwd_ms",
                      "comm_bwd_ms", "exposed_ms", "load_ms", "depth",
                      "act_MiB", "recompute");
  for (auto [id, stage] : llvm::enumerate(m.stages))
    os << llvm::formatv("{0,5} {1,6} {2,11:f3} {3,11:f3} {4,11:f3} {5,10:f3} "
                        "{6,10:f3} {7,6} {8,10:f1} {9,9}\n",
                        id, stage.device, stage.computeMs, stage.commFwdMs,
                        stage.commBwdMs, stage.exposedCommMs, stage.loadMs,
                        stage.inFlight, toMiB(stage.activationBytes),
                        stage.recompute ? "yes" : "no");
  os << "\n";
  os << llvm::formatv("{0,6} {1,6} {2,11} {3,10} {4,10} {5,10} {6,10} {7,10} "
                      "{8,9} {9,9}\n",
                      "device", "stages", "compute_ms", "exposed_ms", "load_ms",
                      "params_GiB", "memory_GiB", "budget_GiB", "sent_MiB",
                      "recv_MiB");
  for (auto [id, device] : llvm::enumerate(m.devices))
    os << llvm::formatv(
        "{0,6} {1,6} {2,11:f3} {3,10:f3} {4,10:f3} {5,10:f2} "
        "{6,10:f2} {7,10:f2} {8,9:f1} {9,9:f1}{10}\n",
        id, device.numStages, device.computeMs, device.exposedCommMs,
        device.loadMs, toGiB(device.paramBytes), toGiB(device.memoryBytes),
        toGiB(device.budgetBytes), toMiB(device.sentBytes),
        toMiB(device.receivedBytes),
        device.memoryBytes > device.budgetBytes ? "  OVER BUDGET" : "");
  os << "\n";
  os << llvm::formatv("async time per micro-batch : {0:f3} ms (bottleneck: "
                      "device {1})\n",
                      m.asyncMsPerMicroBatch, m.bottleneckDevice);
  os << llvm::formatv("simulated async time       : {0:f3} ms per micro-batch "
                      "(objective / simulated = {1:f3})\n",
                      data.asyncSimMs,
                      m.asyncMsPerMicroBatch / data.asyncSimMs);
  os << llvm::formatv(
      "lower bound                : {0:f3} ms (async / "
      "bound = {1:f3})\n",
      m.lowerBoundMs,
      m.lowerBoundMs > 0 ? m.asyncMsPerMicroBatch / m.lowerBoundMs : 1.0);
  if (std::isfinite(data.memoryBoundMs))
    os << llvm::formatv("lower bound with memory    : {0:f3} ms (async / "
                        "bound = {1:f3}; fractional assignment under the "
                        "memory budget)\n",
                        data.memoryBoundMs,
                        data.memoryBoundMs > 0
                            ? m.asyncMsPerMicroBatch / data.memoryBoundMs
                            : 1.0);
  else
    os << "lower bound with memory    : none (no plan fits, even split "
          "fractionally)\n";
  os << llvm::formatv("imbalance (busiest / mean) : {0:f3}\n", m.imbalance);
  os << llvm::formatv("GPipe per mini-batch       : {0:f3} ms (M = {1}, idle "
                      "{2:f1}%)\n",
                      data.gpipe.msPerMiniBatch, data.config.microBatches,
                      100.0 * data.gpipe.idleFraction);
  os << llvm::formatv("1F1B per mini-batch        : {0:f3} ms (M = {1}, idle "
                      "{2:f1}%)\n",
                      data.oneFOneB.msPerMiniBatch, data.config.microBatches,
                      100.0 * data.oneFOneB.idleFraction);
  const ::ftpipe::schedule::ZeroBubbleH1Bound &zb = data.zeroBubbleBound;
  os << llvm::formatv("ZB-H1 bound per mini-batch : {0:f3} ms (idle {1:f1}%: "
                      "(p-1)(F+B-W) with device {2}'s F {3:f3} B {4:f3} W "
                      "{5:f3} ms)\n",
                      zb.msPerMiniBatch, 100.0 * zb.idleFraction, zb.device,
                      zb.forwardMs, zb.inputMs, zb.weightMs);
  const ::ftpipe::schedule::StepLowerBound &step = data.stepBound;
  os << llvm::formatv("sync step lower bound      : {0:f3} ms (device {1}: "
                      "{2:f3} ms of work, {3:f3} ms of fill and drain; any "
                      "schedule, memory unbounded)\n",
                      step.msPerMiniBatch, step.device, step.busyMs,
                      step.msPerMiniBatch - step.busyMs);
  os << llvm::formatv("memory                     : {0}\n",
                      m.memoryFits ? "fits on every device"
                                   : "DOES NOT FIT (see OVER BUDGET above)");
  printSchedules(os, data);
  if (data.replicaChoice)
    printReplicas(os, *data.replicaChoice, data.config.microBatches);
  if (data.partitionSeconds > 0)
    os << llvm::formatv("partitioning took          : {0:f3} s\n",
                        data.partitionSeconds);
}

static llvm::json::Array schedulesToJSON(const ReportData &data) {
  llvm::json::Array rows;
  for (const ScheduleFigures &row : data.schedules) {
    llvm::json::Array memory;
    for (uint64_t bytes : row.memoryBytes)
      memory.push_back(int64_t(bytes));
    rows.push_back(
        llvm::json::Object{{"schedule", ::ftpipe::schedule::nameOf(row.kind)},
                           {"ms_per_minibatch", row.msPerMiniBatch},
                           {"idle_fraction", row.idleFraction},
                           {"memory_bytes", std::move(memory)},
                           {"memory_fits", row.fits}});
  }
  return rows;
}

static llvm::json::Value replicasToJSON(const ReportData &data) {
  if (!data.replicaChoice)
    return nullptr;
  const partition::ReplicaChoice &choice = *data.replicaChoice;
  llvm::json::Array rows;
  for (auto [m, method] : llvm::enumerate(choice.searches)) {
    if (!method.search)
      continue;
    for (auto [o, option] : llvm::enumerate(method.search->options)) {
      llvm::json::Object row{
          {"method", method.method},
          {"depth", int64_t(option.depth())},
          {"replicas", llvm::json::Array(option.layout.replicas)},
          {"feasible", option.feasible},
          {"chosen", choice.chosen.method == m && choice.chosen.option == o}};
      if (option.cutParts)
        row["cut_parts"] = int64_t(option.cutParts);
      if (option.feasible) {
        row["objective_ms_per_microbatch"] = option.objectiveMs;
        row["allreduce_ms"] = option.allReduceMs;
        row["ms_per_minibatch"] = option.simulatedMsPerMiniBatch;
        row["idle_fraction"] = option.idleFraction;
      } else {
        row["failure"] = option.failure;
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

static llvm::json::Value toJSON(const ReportData &data,
                                const partition::Hardware &hw) {
  const PlanMetrics &m = data.metrics;
  llvm::json::Array stageDevice, perDevice, perStage;
  for (const StageMetrics &stage : m.stages) {
    stageDevice.push_back(stage.device);
    perStage.push_back(
        llvm::json::Object{{"device", stage.device},
                           {"compute_ms", stage.computeMs},
                           {"comm_fwd_ms", stage.commFwdMs},
                           {"comm_bwd_ms", stage.commBwdMs},
                           {"exposed_comm_ms", stage.exposedCommMs},
                           {"load_ms", stage.loadMs},
                           {"in_flight", stage.inFlight},
                           {"activation_bytes", int64_t(stage.activationBytes)},
                           {"recompute", stage.recompute},
                           {"sent_bytes", int64_t(stage.sentBytes)},
                           {"received_bytes", int64_t(stage.receivedBytes)}});
  }
  for (auto [id, device] : llvm::enumerate(m.devices))
    perDevice.push_back(llvm::json::Object{
        {"device", int64_t(id)},
        {"stages", device.numStages},
        {"compute_ms", device.computeMs},
        {"exposed_comm_ms", device.exposedCommMs},
        {"load_ms", device.loadMs},
        {"memory_bytes", int64_t(device.memoryBytes)},
        {"memory_budget_bytes", int64_t(device.budgetBytes)},
        {"param_bytes", int64_t(device.paramBytes)},
        {"grad_bytes", int64_t(device.gradBytes)},
        {"optimizer_bytes", int64_t(device.optimizerBytes)},
        {"stash_bytes", int64_t(device.stashBytes)},
        {"activation_bytes", int64_t(device.activationBytes)},
        {"sent_bytes", int64_t(device.sentBytes)},
        {"received_bytes", int64_t(device.receivedBytes)}});
  return llvm::json::Object{
      {"method", data.method},
      {"function", data.function},
      {"hardware", hw.name()},
      {"devices", int64_t(hw.numDevices())},
      {"nodes", int64_t(data.numNodes)},
      {"stages", int64_t(m.stages.size())},
      {"stage_device", std::move(stageDevice)},
      {"per_stage", std::move(perStage)},
      {"per_device", std::move(perDevice)},
      {"schedule", ::ftpipe::schedule::descriptionOf(data.config.schedule)},
      {"optimizer", ::ftpipe::schedule::nameOf(data.config.optimizer)},
      {"weight_versions",
       ::ftpipe::schedule::descriptionOf(data.config.versioning)},
      {"recompute", data.config.recompute},
      {"recompute_stages",
       int64_t(llvm::count_if(
           m.stages,
           [](const partition::StageMetrics &s) { return s.recompute; }))},
      {"total_compute_ms", m.totalComputeMs},
      {"async_ms_per_microbatch", m.asyncMsPerMicroBatch},
      {"lower_bound_ms", m.lowerBoundMs},
      {"memory_lower_bound_ms", std::isfinite(data.memoryBoundMs)
                                    ? llvm::json::Value(data.memoryBoundMs)
                                    : llvm::json::Value(nullptr)},
      {"replicated_ops", int64_t(data.replicatedOps)},
      {"forwarded_ops", int64_t(data.forwardedOps)},
      {"weight_transposes_apart", int64_t(data.apartTransposes)},
      {"imbalance", m.imbalance},
      {"memory_fits", m.memoryFits},
      {"microbatches", data.config.microBatches},
      {"async_sim_ms_per_microbatch", data.asyncSimMs},
      {"gpipe_ms_per_minibatch", data.gpipe.msPerMiniBatch},
      {"onef1b_ms_per_minibatch", data.oneFOneB.msPerMiniBatch},
      {"schedules", schedulesToJSON(data)},
      {"zb_h1_bound",
       llvm::json::Object{
           {"ms_per_minibatch", data.zeroBubbleBound.msPerMiniBatch},
           {"idle_fraction", data.zeroBubbleBound.idleFraction},
           {"device", int64_t(data.zeroBubbleBound.device)},
           {"forward_ms", data.zeroBubbleBound.forwardMs},
           {"input_ms", data.zeroBubbleBound.inputMs},
           {"weight_ms", data.zeroBubbleBound.weightMs}}},
      {"step_lower_bound",
       llvm::json::Object{{"ms_per_minibatch", data.stepBound.msPerMiniBatch},
                          {"device", int64_t(data.stepBound.device)},
                          {"busy_ms", data.stepBound.busyMs}}},
      {"replica_options", replicasToJSON(data)},
      {"partition_seconds", data.partitionSeconds}};
}

static void printDot(raw_ostream &os, const ReportData &data) {
  // A qualitative palette (ColorBrewer Set3), one colour per device.
  static const char *kColors[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                  "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                                  "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  os << "digraph stages {\n  rankdir=LR;\n  node [shape=box, style=filled];\n";
  for (auto [id, stage] : llvm::enumerate(data.metrics.stages))
    os << llvm::formatv("  s{0} [label=\"stage {0}\\ndevice {1}\\n{2:f2} ms\", "
                        "fillcolor=\"{3}\"];\n",
                        id, stage.device, stage.loadMs,
                        kColors[stage.device % std::size(kColors)]);
  for (const partition::StageEdge &edge : data.stages.edges)
    os << llvm::formatv(
        "  s{0} -> s{1} [label=\"{2:f2} MiB{3}\"];\n", edge.src, edge.dst,
        toMiB(edge.fwdBytes),
        edge.passBytes
            ? llvm::formatv(" ({0:f2} passed on)", toMiB(edge.passBytes)).str()
            : std::string());
  os << "}\n";
}

/// Writes `write`'s output to `path`, reporting failures at `loc`.
static LogicalResult writeFile(StringRef path, Location loc,
                               function_ref<void(raw_ostream &)> write) {
  std::unique_ptr<llvm::ToolOutputFile> output = openOutput(path, loc);
  if (!output)
    return failure();
  write(output->os());
  output->keep();
  return success();
}

void ReportPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<::ftpipe::schedule::TrainingSetup> setup = resolveTrainingSetup(
      module, getArgument(),
      {schedule, microbatches, optimizer, stashing, recompute});
  if (failed(setup))
    return signalPassFailure();
  auto fail = [&](llvm::Error error) {
    emitError(module.getLoc()) << llvm::toString(std::move(error));
    signalPassFailure();
  };
  FailureOr<func::FuncOp> func = getModelFunction(module, function);
  if (failed(func))
    return signalPassFailure();
  FailureOr<OpGraph> opGraph = buildOpGraph(*func);
  if (failed(opGraph))
    return signalPassFailure();
  FailureOr<partition::Hardware> hw = readHardware(module);
  if (failed(hw))
    return signalPassFailure();
  FailureOr<partition::Plan> plan = readPlan(module, *opGraph);
  if (failed(plan))
    return signalPassFailure();

  ReportData data;
  data.function = func->getSymName().str();
  data.numNodes = opGraph->graph.numNodes();
  data.config = partition::objectiveConfigOf(*setup);
  if (auto planAttr =
          module->getAttrOfType<PlanAttr>(FTPipeDialect::kPlanAttrName)) {
    data.method = planAttr.getMethod().str();
    data.partitionSeconds = planAttr.getSeconds();
  } else {
    data.method = "single-stage";
  }
  if (llvm::Error error = data.config.validate())
    return fail(std::move(error));

  llvm::Expected<PlanMetrics> metrics =
      partition::evaluatePlan(opGraph->graph, *hw, *plan, data.config);
  if (!metrics)
    return fail(metrics.takeError());
  data.metrics = std::move(*metrics);
  // A plan with a per-stage list chose where to recompute.
  partition::RecomputeMode mode =
      !plan->stageRecompute.empty() ? partition::RecomputeMode::Auto
      : data.config.recompute       ? partition::RecomputeMode::Always
                                    : partition::RecomputeMode::Never;
  data.memoryBoundMs =
      partition::memoryLowerBoundMs(opGraph->graph, *hw, data.config, mode);
  data.replicatedOps = llvm::count(plan->nodeReplicated, true);
  data.forwardedOps = llvm::count(plan->nodeForwarded, true);
  ApartTransposes apart = findApartTransposes(*opGraph, *plan);
  data.apartTransposes = apart.count;
  data.apartTransposeBytes = apart.bytes;
  llvm::Expected<partition::StageGraph> stages =
      partition::buildStageGraph(opGraph->graph, *hw, *plan, data.config);
  if (!stages)
    return fail(stages.takeError());
  data.stages = std::move(*stages);

  // The mini-batch times of both synchronous schedules, and the timeline of
  // the chosen one for the trace.
  auto simulateWith = [&](::ftpipe::schedule::Kind schedule, bool events,
                          const ::ftpipe::schedule::Schedule *lists =
                              nullptr) -> llvm::Expected<partition::SimResult> {
    partition::SimulatorConfig sim;
    sim.kind = schedule;
    sim.microBatches = data.config.microBatches;
    sim.recordEvents = events;
    if (::ftpipe::schedule::isZeroBubble(schedule))
      sim.split = data.stages.splitStages();
    if (lists)
      sim.orders = *lists;
    return partition::simulate(data.stages, *hw, sim);
  };
  // GPipe and 1F1B as ftpipe-run runs them: the lists schedule::generate
  // builds (runtime::runSchedule's), not the simulator's own per-stage
  // orders; the simulator's when there are no lists (a device without a
  // stage).
  auto runtimeLists = [&](::ftpipe::schedule::Kind kind)
      -> std::optional<::ftpipe::schedule::Schedule> {
    // Too many micro-batches: the simulator's own refusal says so.
    if (llvm::Error tooMany = ::ftpipe::schedule::checkTaskCount(
            data.stages.numStages(), data.config.microBatches)) {
      llvm::consumeError(std::move(tooMany));
      return std::nullopt;
    }
    llvm::Expected<::ftpipe::schedule::Schedule> lists =
        ::ftpipe::schedule::generate(
            data.stages.topology(int64_t(hw->numDevices())),
            {kind, int64_t(data.config.microBatches), 1});
    if (!lists) {
      llvm::consumeError(lists.takeError());
      return std::nullopt;
    }
    return std::move(*lists);
  };
  std::optional<::ftpipe::schedule::Schedule> gpipeLists =
      runtimeLists(::ftpipe::schedule::Kind::GPipe);
  std::optional<::ftpipe::schedule::Schedule> oneFOneBLists =
      runtimeLists(::ftpipe::schedule::Kind::OneFOneB);
  llvm::Expected<partition::SimResult> gpipe =
      simulateWith(::ftpipe::schedule::Kind::GPipe, false,
                   gpipeLists ? &*gpipeLists : nullptr);
  if (!gpipe)
    return fail(gpipe.takeError());
  data.gpipe = std::move(*gpipe);
  llvm::Expected<partition::SimResult> oneFOneB =
      simulateWith(::ftpipe::schedule::Kind::OneFOneB, false,
                   oneFOneBLists ? &*oneFOneBLists : nullptr);
  if (!oneFOneB)
    return fail(oneFOneB.takeError());
  data.oneFOneB = std::move(*oneFOneB);
  partition::ObjectiveConfig async = data.config;
  async.schedule = ::ftpipe::schedule::Kind::Async;
  llvm::Expected<partition::SimResult> asyncSim = partition::simulatePlan(
      opGraph->graph, *hw, *plan, async, /*recordEvents=*/false);
  if (!asyncSim)
    return fail(asyncSim.takeError());
  data.asyncSimMs = asyncSim->msPerMicroBatch;

  // zb-auto within each device's memory when some list fits (else its row
  // shows by how much its unbounded lists overflow).
  std::optional<::ftpipe::schedule::Schedule> boundedZeroBubble;
  {
    llvm::Expected<::ftpipe::schedule::Schedule> lists =
        partition::zeroBubbleAutoLists(data.stages, *hw,
                                       data.metrics.memoryInputs, *setup,
                                       data.config.microBatches);
    if (lists)
      boundedZeroBubble = std::move(*lists);
    else
      llvm::consumeError(lists.takeError());
  }
  // zb-h1 within 1F1B's memory (as ftpipe-run and the planner run it).
  std::optional<::ftpipe::schedule::Schedule> boundedH1;
  {
    llvm::Expected<::ftpipe::schedule::Schedule> lists =
        partition::zeroBubbleH1Lists(data.stages, int64_t(hw->numDevices()),
                                     data.config.microBatches,
                                     data.stages.splitStages());
    if (lists)
      boundedH1 = std::move(*lists);
    else
      llvm::consumeError(lists.takeError());
  }
  // Every schedule side by side: simulated, and each device's memory by the
  // plan's formula for it.
  using ::ftpipe::schedule::Kind;
  for (Kind kind : {Kind::GPipe, Kind::OneFOneB, Kind::ZeroBubbleH1,
                    Kind::ZeroBubbleAuto, Kind::Async}) {
    ScheduleFigures row;
    row.kind = kind;
    const partition::SimResult *sim = kind == Kind::GPipe      ? &data.gpipe
                                      : kind == Kind::OneFOneB ? &data.oneFOneB
                                      : kind == Kind::Async    ? &*asyncSim
                                                               : nullptr;
    const ::ftpipe::schedule::Schedule *lists =
        kind == Kind::ZeroBubbleAuto && boundedZeroBubble ? &*boundedZeroBubble
        : kind == Kind::ZeroBubbleH1 && boundedH1         ? &*boundedH1
                                                          : nullptr;
    llvm::Expected<partition::SimResult> zeroBubble =
        sim ? partition::SimResult() : simulateWith(kind, false, lists);
    if (!zeroBubble)
      return fail(zeroBubble.takeError());
    if (!sim)
      sim = &*zeroBubble;
    row.msPerMiniBatch = sim->msPerMiniBatch;
    row.idleFraction = sim->idleFraction;
    ::ftpipe::schedule::TrainingSetup under = *setup;
    under.schedule = kind;
    std::optional<std::vector<uint64_t>> peaks =
        listPeakBytes(data.stages, *hw, data.metrics.memoryInputs, kind,
                      data.config.microBatches, lists);
    for (auto [d, inputs] : llvm::enumerate(data.metrics.memoryInputs)) {
      ::ftpipe::schedule::DeviceMemory memory =
          ::ftpipe::schedule::deviceMemory(inputs, under);
      // The lists' own peak where the dry run gives one (the formula bounds
      // every list of the kind).
      if (peaks)
        memory.activationBytes = (*peaks)[d];
      row.memoryBytes.push_back(memory.totalBytes());
      row.fits = row.fits && memory.fits();
    }
    data.schedules.push_back(std::move(row));
  }
  data.zeroBubbleBound = ::ftpipe::schedule::zeroBubbleH1Bound(
      data.stages, data.stages.splitStages(), data.config.microBatches);
  ::ftpipe::schedule::Links links = partition::linksOf(*hw);
  data.stepBound = ::ftpipe::schedule::stepLowerBound(
      data.stages, data.stages.splitStages(), data.config.microBatches, &links);

  if (!replicas.isNone()) {
    // The partitioners ftpipe-auto-partition replicas=auto runs, with its
    // defaults, on the module's devices.
    PartitionerSetup partitionerSetup;
    partitionerSetup.recompute = setup->recompute;
    partitionerSetup.objective = data.config;
    partitionerSetup.multithreaded = getContext().isMultithreadingEnabled();
    Partitioners partitioners(opGraph->graph, partitionerSetup);
    llvm::Expected<partition::ReplicaChoice> choice =
        partition::searchReplicasOver(
            opGraph->graph, *hw, data.config,
            partitioners.all(AutoPartitionPassOptions().dpMaxOps),
            replicas.requested());
    if (!choice)
      return fail(choice.takeError());
    data.replicaChoice = std::move(*choice);
  }

  // Inputs are range-checked, so these are finite; if one is not, say so
  // rather than print a table and JSON (which has no inf or nan) of it.
  for (double ms : {data.metrics.asyncMsPerMicroBatch,
                    data.metrics.totalComputeMs, data.gpipe.msPerMiniBatch,
                    data.oneFOneB.msPerMiniBatch, data.asyncSimMs})
    if (!std::isfinite(ms))
      return fail(llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "the plan's simulated time is not finite: check the hardware "
          "and the op costs"));
  printTable(llvm::outs(), data, *hw);
  llvm::outs().flush();

  Location loc = module.getLoc();
  if (!json.empty() && failed(writeFile(json, loc, [&](raw_ostream &os) {
        os << llvm::formatv("{0:2}\n", toJSON(data, *hw));
      })))
    return signalPassFailure();
  if (!trace.empty()) {
    llvm::Expected<partition::SimResult> timeline = simulateWith(
        data.config.schedule, true,
        data.config.schedule == ::ftpipe::schedule::Kind::ZeroBubbleAuto &&
                boundedZeroBubble
            ? &*boundedZeroBubble
        : data.config.schedule == ::ftpipe::schedule::Kind::ZeroBubbleH1 &&
                boundedH1
            ? &*boundedH1
        : data.config.schedule == ::ftpipe::schedule::Kind::GPipe && gpipeLists
            ? &*gpipeLists
        : data.config.schedule == ::ftpipe::schedule::Kind::OneFOneB &&
                oneFOneBLists
            ? &*oneFOneBLists
            : nullptr);
    if (!timeline)
      return fail(timeline.takeError());
    if (failed(writeFile(trace, loc, [&](raw_ostream &os) {
          os << llvm::formatv("{0}\n",
                              ::ftpipe::schedule::simulationToChromeTrace(
                                  *timeline, partition::deviceNames(*hw)));
        })))
      return signalPassFailure();
  }
  if (!dot.empty() &&
      failed(writeFile(dot, loc, [&](raw_ostream &os) { printDot(os, data); })))
    return signalPassFailure();
  markAllAnalysesPreserved();
}
