//===- FTPipe.cpp - C API of FTPipe -----------------------------*- C++ -*-===//
//
// Implements FTPipe-c/FTPipe.h over the C++ API, with MLIR's own wrap/unwrap
// helpers (mlir/CAPI/), so an MlirModule or MlirOpPassManager from any user
// of MLIR's C API is the same object the C++ passes see.
//
//===----------------------------------------------------------------------===//

#include "FTPipe-c/FTPipe.h"

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/InitAllFTPipe.h"
#include "FTPipe/Transforms/Pipelines.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ftpipe;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FTPipe, ftpipe, FTPipeDialect)

void mlirFTPipeRegisterInputDialects(MlirDialectRegistry registry) {
  registerFTPipeInputDialects(*unwrap(registry));
}

void mlirFTPipeRegisterPasses(void) { registerFTPipePasses(); }

void mlirFTPipeRegisterPipelines(void) { registerFTPipePipelines(); }

namespace partition = ::ftpipe::partition;

static MlirFTPipeSchedule wrapSchedule(::ftpipe::schedule::Kind schedule) {
  switch (schedule) {
  case ::ftpipe::schedule::Kind::GPipe:
    return MlirFTPipeScheduleGPipe;
  case ::ftpipe::schedule::Kind::OneFOneB:
    return MlirFTPipeScheduleOneFOneB;
  case ::ftpipe::schedule::Kind::Async:
  // The C API's options cannot name the zero-bubble kinds (nor can the
  // passes' options that fill the defaults read here).
  case ::ftpipe::schedule::Kind::ZeroBubbleH1:
  case ::ftpipe::schedule::Kind::ZeroBubbleAuto:
    break;
  }
  return MlirFTPipeScheduleAsync;
}

static ::ftpipe::schedule::Kind unwrapSchedule(MlirFTPipeSchedule schedule) {
  switch (schedule) {
  case MlirFTPipeScheduleGPipe:
    return ::ftpipe::schedule::Kind::GPipe;
  case MlirFTPipeScheduleOneFOneB:
    return ::ftpipe::schedule::Kind::OneFOneB;
  default:
    return ::ftpipe::schedule::Kind::Async;
  }
}

static MlirFTPipeOptimizer
wrapOptimizer(::ftpipe::schedule::Optimizer optimizer) {
  switch (optimizer) {
  case ::ftpipe::schedule::Optimizer::SGD:
    return MlirFTPipeOptimizerSGD;
  case ::ftpipe::schedule::Optimizer::Momentum:
    return MlirFTPipeOptimizerMomentum;
  case ::ftpipe::schedule::Optimizer::Adafactor:
    return MlirFTPipeOptimizerAdafactor;
  case ::ftpipe::schedule::Optimizer::AdamW:
    return MlirFTPipeOptimizerAdamW;
  case ::ftpipe::schedule::Optimizer::Adam:
    break;
  }
  return MlirFTPipeOptimizerAdam;
}

static ::ftpipe::schedule::Optimizer
unwrapOptimizer(MlirFTPipeOptimizer optimizer) {
  switch (optimizer) {
  case MlirFTPipeOptimizerSGD:
    return ::ftpipe::schedule::Optimizer::SGD;
  case MlirFTPipeOptimizerMomentum:
    return ::ftpipe::schedule::Optimizer::Momentum;
  case MlirFTPipeOptimizerAdafactor:
    return ::ftpipe::schedule::Optimizer::Adafactor;
  case MlirFTPipeOptimizerAdamW:
    return ::ftpipe::schedule::Optimizer::AdamW;
  default:
    return ::ftpipe::schedule::Optimizer::Adam;
  }
}

static MlirFTPipeWeightVersioning
wrapVersioning(::ftpipe::schedule::WeightVersions versioning) {
  switch (versioning) {
  case ::ftpipe::schedule::WeightVersions::Stash:
    return MlirFTPipeWeightVersioningStash;
  case ::ftpipe::schedule::WeightVersions::DoubleBuffered:
    return MlirFTPipeWeightVersioningDoubleBuffered;
  case ::ftpipe::schedule::WeightVersions::None:
    break;
  }
  return MlirFTPipeWeightVersioningNone;
}

static ::ftpipe::schedule::WeightVersions
unwrapVersioning(MlirFTPipeWeightVersioning versioning) {
  switch (versioning) {
  case MlirFTPipeWeightVersioningStash:
    return ::ftpipe::schedule::WeightVersions::Stash;
  case MlirFTPipeWeightVersioningDoubleBuffered:
    return ::ftpipe::schedule::WeightVersions::DoubleBuffered;
  default:
    return ::ftpipe::schedule::WeightVersions::None;
  }
}

MlirFTPipePartitionOptions mlirFTPipePartitionOptionsGetDefault(void) {
  // The C++ defaults are the single source of truth; only the hardware
  // string needs storage that outlives this call.
  static const PartitionPipelineOptions defaults;
  MlirFTPipePartitionOptions options;
  options.hardware = wrap(llvm::StringRef(defaults.hardware));
  options.profile = wrap(llvm::StringRef());
  options.devices = defaults.devices;
  options.function = wrap(llvm::StringRef());
  options.method = MlirFTPipePartitionMethodAuto;
  options.quiet = defaults.quiet;
  options.schedule = wrapSchedule(defaults.setup.schedule);
  options.optimizer = wrapOptimizer(defaults.setup.optimizer);
  options.stashing = wrapVersioning(defaults.setup.weightVersions);
  options.recompute =
      defaults.setup.recompute != ::ftpipe::partition::RecomputeMode::Never;
  options.microbatches = defaults.setup.microBatches;
  return options;
}

/// The C++ options the C struct spells (null: the defaults).
static PartitionPipelineOptions
toPipelineOptions(const MlirFTPipePartitionOptions *options) {
  PartitionPipelineOptions result;
  if (!options)
    return result;
  if (options->hardware.length != 0)
    result.hardware = unwrap(options->hardware).str();
  result.profile = unwrap(options->profile).str();
  result.devices = options->devices;
  result.function = unwrap(options->function).str();
  switch (options->method) {
  case MlirFTPipePartitionMethodMixedPipe:
    result.method = PartitionMethod::MixedPipe;
    break;
  case MlirFTPipePartitionMethodSeqDP:
    result.method = PartitionMethod::SeqDP;
    break;
  case MlirFTPipePartitionMethodSeqGreedy:
    result.method = PartitionMethod::SeqGreedy;
    break;
  case MlirFTPipePartitionMethodAuto:
  default:
    result.method = PartitionMethod::Auto;
    break;
  }
  result.quiet = options->quiet;
  result.setup.schedule = unwrapSchedule(options->schedule);
  result.setup.optimizer = unwrapOptimizer(options->optimizer);
  result.setup.weightVersions = unwrapVersioning(options->stashing);
  result.setup.recompute = options->recompute
                               ? ::ftpipe::partition::RecomputeMode::Always
                               : ::ftpipe::partition::RecomputeMode::Never;
  result.setup.microBatches = options->microbatches;
  return result;
}

void mlirFTPipeBuildPartitionPipeline(
    MlirOpPassManager passManager, const MlirFTPipePartitionOptions *options) {
  buildPartitionPipeline(*unwrap(passManager), toPipelineOptions(options));
}

/// Runs `pm` on the module; the pass manager reports failures as diagnostics.
static MlirLogicalResult runOnModule(PassManager &pm, ModuleOp module) {
  return wrap(pm.run(module));
}

MlirLogicalResult
mlirFTPipeRunPartitionPipeline(MlirModule module,
                               const MlirFTPipePartitionOptions *options) {
  ModuleOp moduleOp = unwrap(module);
  PassManager pm(moduleOp->getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm, toPipelineOptions(options));
  return runOnModule(pm, moduleOp);
}

MlirLogicalResult
mlirFTPipeRunPartitionPipelineWithText(MlirModule module,
                                       MlirStringRef options) {
  ModuleOp moduleOp = unwrap(module);
  PartitionPipelineTextOptions text;
  std::string message;
  llvm::raw_string_ostream errors(message);
  if (failed(text.parseFromString(unwrap(options), errors))) {
    errors.flush();
    emitError(moduleOp.getLoc())
        << "invalid options for ftpipe-partition-pipeline '" << unwrap(options)
        << "': " << message;
    return wrap(failure());
  }
  PassManager pm(moduleOp->getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm, text.toOptions());
  return runOnModule(pm, moduleOp);
}

void mlirFTPipeBuildStageProgramsPipeline(
    MlirOpPassManager passManager, const MlirFTPipePartitionOptions *options) {
  buildStageProgramsPipeline(*unwrap(passManager), toPipelineOptions(options));
}

MlirLogicalResult
mlirFTPipeRunStageProgramsPipeline(MlirModule module,
                                   const MlirFTPipePartitionOptions *options) {
  ModuleOp moduleOp = unwrap(module);
  PassManager pm(moduleOp->getContext(), ModuleOp::getOperationName());
  buildStageProgramsPipeline(pm, toPipelineOptions(options));
  return runOnModule(pm, moduleOp);
}

bool mlirAttributeIsAFTPipePlan(MlirAttribute attr) {
  return llvm::isa<PlanAttr>(unwrap(attr));
}

MlirAttribute mlirFTPipeModuleGetPlan(MlirModule module) {
  ModuleOp moduleOp = unwrap(module);
  return wrap(Attribute(llvm::dyn_cast_or_null<PlanAttr>(
      moduleOp->getAttr(FTPipeDialect::kPlanAttrName))));
}

MlirStringRef mlirFTPipePlanGetMethod(MlirAttribute plan) {
  return wrap(llvm::cast<PlanAttr>(unwrap(plan)).getMethod());
}

intptr_t mlirFTPipePlanGetNumStages(MlirAttribute plan) {
  return llvm::cast<PlanAttr>(unwrap(plan)).getStageDevice().size();
}

int64_t mlirFTPipePlanGetStageDevice(MlirAttribute plan, intptr_t stage) {
  return llvm::cast<PlanAttr>(unwrap(plan)).getStageDevice()[stage];
}

double mlirFTPipePlanGetObjectiveMs(MlirAttribute plan) {
  return llvm::cast<PlanAttr>(unwrap(plan)).getObjectiveMs();
}

intptr_t mlirFTPipePlanGetNumDevices(MlirAttribute plan) {
  return llvm::cast<PlanAttr>(unwrap(plan)).getMemoryBytes().size();
}

int64_t mlirFTPipePlanGetMemoryBytes(MlirAttribute plan, intptr_t device) {
  return llvm::cast<PlanAttr>(unwrap(plan)).getMemoryBytes()[device];
}

int64_t mlirFTPipeOperationGetStage(MlirOperation op) {
  auto stage = llvm::dyn_cast_or_null<IntegerAttr>(
      unwrap(op)->getAttr(FTPipeDialect::kStageAttrName));
  return stage ? stage.getInt() : -1;
}
