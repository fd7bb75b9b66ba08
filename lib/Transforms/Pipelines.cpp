//===- Pipelines.cpp - FTPipe's pass pipelines ------------------*- C++ -*-===//
//
// Builds the partitioning pipelines from typed options and registers them by
// name. Each builder only maps its options onto the passes' generated option
// structs and appends the passes, so the pipelines and the passes cannot
// disagree on what an option means.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Transforms/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::ftpipe;

/// Copies the training setup into a pass's generated options struct (every
/// scoring pass has the same five fields).
template <typename PassOptionsT>
static PassOptionsT
withObjective(PassOptionsT passOptions,
              const ::ftpipe::schedule::TrainingSetup &setup) {
  passOptions.schedule = setup.schedule;
  passOptions.optimizer = setup.optimizer;
  passOptions.stashing = setup.weightVersions;
  passOptions.recompute = setup.recompute;
  passOptions.microbatches = setup.microBatches;
  return passOptions;
}

static void addAnnotateCosts(OpPassManager &pm, const std::string &hardware,
                             const std::string &profile) {
  AnnotateCostsPassOptions annotate;
  annotate.hardware = hardware;
  annotate.profile = profile;
  pm.addPass(createAnnotateCostsPass(annotate));
}

void mlir::ftpipe::buildPartitionPipeline(
    OpPassManager &pm, const PartitionPipelineOptions &options) {
  addAnnotateCosts(pm, options.hardware, options.profile);
  switch (options.method) {
  case PartitionMethod::Auto: {
    AutoPartitionPassOptions autoPartition;
    autoPartition.devices = options.devices;
    autoPartition.function = options.function;
    autoPartition.dpMaxOps = options.dpMaxOps;
    autoPartition.quiet = options.quiet;
    autoPartition.syncSchedule = options.syncSchedule;
    autoPartition.replicas = options.replicas;
    pm.addPass(
        createAutoPartitionPass(withObjective(autoPartition, options.setup)));
    return;
  }
  case PartitionMethod::MixedPipe: {
    MixedPipePassOptions mixedPipe;
    mixedPipe.devices = options.devices;
    mixedPipe.function = options.function;
    mixedPipe.verbose = !options.quiet;
    mixedPipe.replicas = options.replicas;
    mixedPipe.syncSchedule = options.syncSchedule;
    pm.addPass(createMixedPipePass(withObjective(mixedPipe, options.setup)));
    return;
  }
  case PartitionMethod::SeqDP:
  case PartitionMethod::SeqGreedy: {
    SeqPipePassOptions seqPipe;
    seqPipe.devices = options.devices;
    seqPipe.function = options.function;
    seqPipe.method = options.method == PartitionMethod::SeqDP
                         ? SeqPipeMethod::DP
                         : SeqPipeMethod::Greedy;
    seqPipe.replicas = options.replicas;
    seqPipe.verbose = !options.quiet;
    pm.addPass(createSeqPipePass(withObjective(seqPipe, options.setup)));
    return;
  }
  }
  llvm_unreachable("unknown partition method");
}

void mlir::ftpipe::buildMixedPipePipeline(OpPassManager &pm,
                                          const MixedPipeOptions &options) {
  addAnnotateCosts(pm, options.hardware, options.profile);
  if (options.stages == 0) {
    MixedPipePassOptions mixedPipe;
    mixedPipe.devices = options.devices;
    mixedPipe.function = options.function;
    mixedPipe.verbose = options.verbose;
    pm.addPass(createMixedPipePass(withObjective(mixedPipe, options.setup)));
    return;
  }

  // A fixed L: the three phases of Mixed-Pipe, each its own pass.
  CoarsenPassOptions coarsen;
  coarsen.devices = options.devices;
  coarsen.function = options.function;
  coarsen.stages = options.stages;
  coarsen.blockTypes = options.blockTypes;
  pm.addPass(createCoarsenPass(coarsen));

  AssignDevicesPassOptions assign;
  assign.devices = options.devices;
  assign.function = options.function;
  pm.addPass(createAssignDevicesPass(withObjective(assign, options.setup)));

  if (!options.refine)
    return;
  RefinePassOptions refine;
  refine.function = options.function;
  pm.addPass(createRefinePass(withObjective(refine, options.setup)));
}

void mlir::ftpipe::buildStageProgramPasses(
    OpPassManager &pm, ::ftpipe::partition::RecomputeMode recompute,
    StringRef function, bool indexGuards) {
  if (indexGuards)
    pm.addNestedPass<func::FuncOp>(createClampGatherIndicesPass());
  OutlineStagesPassOptions outline;
  outline.function = function.str();
  pm.addPass(createOutlineStagesPass(outline));
  DifferentiatePassOptions differentiate;
  switch (recompute) {
  case ::ftpipe::partition::RecomputeMode::Always:
    differentiate.recompute = "true";
    break;
  case ::ftpipe::partition::RecomputeMode::Never:
    differentiate.recompute = "false";
    break;
  case ::ftpipe::partition::RecomputeMode::Auto:
    differentiate.recompute = "plan";
    break;
  }
  pm.addPass(createDifferentiatePass(differentiate));
  pm.addPass(createSplitDevicesPass());
}

void mlir::ftpipe::buildStageProgramsPipeline(
    OpPassManager &pm, const PartitionPipelineOptions &options) {
  buildPartitionPipeline(pm, options);
  buildStageProgramPasses(pm, options.setup.recompute, options.function);
}

/// The training setup of either textual options struct.
template <typename TextOptionsT>
static ::ftpipe::schedule::TrainingSetup setupOf(const TextOptionsT &text) {
  return {text.schedule, text.microbatches, text.optimizer, text.stashing,
          text.recompute};
}

PartitionPipelineOptions PartitionPipelineTextOptions::toOptions() const {
  PartitionPipelineOptions options;
  options.hardware = hardware;
  options.profile = profile;
  options.devices = devices;
  options.function = function;
  options.method = method;
  options.replicas = replicas;
  options.dpMaxOps = dpMaxOps;
  options.quiet = quiet;
  options.syncSchedule = syncSchedule;
  options.setup = setupOf(*this);
  return options;
}

MixedPipeOptions MixedPipeTextOptions::toOptions() const {
  MixedPipeOptions options;
  options.hardware = hardware;
  options.profile = profile;
  options.devices = devices;
  options.function = function;
  options.stages = stages;
  options.blockTypes.assign(blockTypes.begin(), blockTypes.end());
  options.refine = refine;
  options.verbose = verbose;
  options.setup = setupOf(*this);
  return options;
}

/// Registers both named pipelines with the global registry.
static void registerPipelines() {
  PassPipelineRegistration<PartitionPipelineTextOptions>(
      "ftpipe-partition-pipeline",
      "Annotates costs, then partitions with the chosen method "
      "(default: every partitioner, the best plan)",
      [](OpPassManager &pm, const PartitionPipelineTextOptions &text) {
        buildPartitionPipeline(pm, text.toOptions());
      });
  PassPipelineRegistration<MixedPipeTextOptions>(
      "ftpipe-mixed-pipe-pipeline",
      "Annotates costs, then runs Mixed-Pipe: the search over L, or "
      "coarsen, assign and refine for a fixed L",
      [](OpPassManager &pm, const MixedPipeTextOptions &text) {
        buildMixedPipePipeline(pm, text.toOptions());
      });
  PassPipelineRegistration<PartitionPipelineTextOptions>(
      "ftpipe-stage-programs-pipeline",
      "From model IR to per-device IR: partitions (as "
      "ftpipe-partition-pipeline), outlines the stages, differentiates them "
      "and splits them per device (docs/StagePrograms.md)",
      [](OpPassManager &pm, const PartitionPipelineTextOptions &text) {
        buildStageProgramsPipeline(pm, text.toOptions());
      });
}

void mlir::ftpipe::registerFTPipePipelines() {
  // Once per process: a host may call every register function more than once
  // (and debug builds of MLIR reject registering a name twice).
  static const bool registered = [] {
    registerPipelines();
    return true;
  }();
  (void)registered;
}
