/*===-- FTPipe-c/FTPipe.h - C API of FTPipe -----------------------*- C -*-===*\
|*                                                                            *|
|* FTPipe's C API, in the style of MLIR's (mlir-c/): register the ftpipe      *|
|* dialect, the passes and the named pipelines, run the partitioning          *|
|* pipeline on an MlirModule, and read the plan it wrote. Meant for bindings  *|
|* in other languages and for hosts written in C.                             *|
|*                                                                            *|
|* Link FTPipe::CAPI (libFTPipe-C.so). Debian's libMLIR.so has no MLIR C API  *|
|* in it, so libFTPipe-C.so also exports the upstream core C API (mlir-c/     *|
|* IR.h, Pass.h, Support.h, BuiltinAttributes.h, BuiltinTypes.h,              *|
|* Diagnostics.h, ...) built from LLVM's own MLIRCAPIIR objects on top of     *|
|* libMLIR.so; docs/Integrating.md explains why.                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FTPIPE_C_FTPIPE_H
#define FTPIPE_C_FTPIPE_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The ftpipe dialect: mlirGetDialectHandle__ftpipe__().
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FTPipe, ftpipe);

/// Adds the upstream dialects FTPipe's input IR uses (func, tosa, linalg,
/// tensor, arith, math) to `registry`, with FTPipe's reverse-mode rules for
/// their ops (the stage-program pipeline needs them).
MLIR_CAPI_EXPORTED void
mlirFTPipeRegisterInputDialects(MlirDialectRegistry registry);

/// Registers every FTPipe pass (`ftpipe-*`) with the global pass registry.
MLIR_CAPI_EXPORTED void mlirFTPipeRegisterPasses(void);

/// Registers the named pipelines `ftpipe-partition-pipeline` and
/// `ftpipe-mixed-pipe-pipeline`, so mlirParsePassPipeline can name them.
MLIR_CAPI_EXPORTED void mlirFTPipeRegisterPipelines(void);

//===----------------------------------------------------------------------===//
// The partitioning pipeline
//===----------------------------------------------------------------------===//

/// Which partitioner ends the pipeline (values are stable).
typedef enum MlirFTPipePartitionMethod {
  /// Every partitioner; the fastest feasible plan.
  MlirFTPipePartitionMethodAuto = 0,
  /// Mixed-Pipe, best L in {P, 2P, 3P, 4P}.
  MlirFTPipePartitionMethodMixedPipe = 1,
  /// Contiguous stages, exact dynamic programming.
  MlirFTPipePartitionMethodSeqDP = 2,
  /// Contiguous stages, greedy cuts.
  MlirFTPipePartitionMethodSeqGreedy = 3,
} MlirFTPipePartitionMethod;

/// Pipeline schedule the plan is scored for (values are stable).
typedef enum MlirFTPipeSchedule {
  /// PipeDream-style asynchronous 1F1B (FTPipe's default).
  MlirFTPipeScheduleAsync = 0,
  /// GPipe: fill, drain, flush.
  MlirFTPipeScheduleGPipe = 1,
  /// 1F1B with a flush per mini-batch.
  MlirFTPipeScheduleOneFOneB = 2,
} MlirFTPipeSchedule;

/// Optimizer whose state is kept per parameter (values are stable).
typedef enum MlirFTPipeOptimizer {
  MlirFTPipeOptimizerSGD = 0,
  MlirFTPipeOptimizerMomentum = 1,
  MlirFTPipeOptimizerAdam = 2,
  MlirFTPipeOptimizerAdafactor = 3,
  MlirFTPipeOptimizerAdamW = 4,
} MlirFTPipeOptimizer;

/// Weight versions the async schedule keeps (values are stable).
typedef enum MlirFTPipeWeightVersioning {
  /// A single version.
  MlirFTPipeWeightVersioningNone = 0,
  /// One per micro-batch in flight (PipeDream).
  MlirFTPipeWeightVersioningStash = 1,
  /// Two versions (PipeDream-2BW).
  MlirFTPipeWeightVersioningDoubleBuffered = 2,
} MlirFTPipeWeightVersioning;

/// Options of the partitioning pipeline, typed. Start from
/// mlirFTPipePartitionOptionsGetDefault(); the strings are borrowed for the
/// duration of the call that takes the struct.
typedef struct MlirFTPipePartitionOptions {
  /// Hardware preset name or cluster JSON file (default
  /// "rtx2080ti-pcie-x8").
  MlirStringRef hardware;
  /// Measured profile (JSON); empty for none.
  MlirStringRef profile;
  /// Plan for the first `devices` devices of the hardware (0: all).
  unsigned devices;
  /// Model function; empty: the only function with a body.
  MlirStringRef function;
  MlirFTPipePartitionMethod method;
  /// Print nothing on stderr besides diagnostics.
  bool quiet;
  /// The fine-tuning setup plans are scored for (docs/FineTuningSetup.md).
  MlirFTPipeSchedule schedule;
  MlirFTPipeOptimizer optimizer;
  MlirFTPipeWeightVersioning stashing;
  /// Keep only stage inputs and recompute the forward before the backward.
  bool recompute;
  /// Micro-batches per mini-batch (GPipe and 1F1B).
  unsigned microbatches;
} MlirFTPipePartitionOptions;

/// The defaults: the passes' defaults, quiet.
MLIR_CAPI_EXPORTED MlirFTPipePartitionOptions
mlirFTPipePartitionOptionsGetDefault(void);

/// Appends the partitioning pipeline (cost annotation, then the partitioner)
/// to `passManager`, which must be nested on builtin.module. Lets a host put
/// its own passes before and after.
MLIR_CAPI_EXPORTED void
mlirFTPipeBuildPartitionPipeline(MlirOpPassManager passManager,
                                 const MlirFTPipePartitionOptions *options);

/// Runs the partitioning pipeline on `module` with a pass manager of its own.
/// Failures are reported as diagnostics through the module's context. On
/// success every op of the model function has `ftpipe.stage` and the module
/// has `ftpipe.plan`.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirFTPipeRunPartitionPipeline(
    MlirModule module, const MlirFTPipePartitionOptions *options);

/// As mlirFTPipeRunPartitionPipeline, with the options in the textual form of
/// `ftpipe-partition-pipeline` (e.g. "devices=4 method=mixed-pipe
/// schedule=gpipe microbatches=16"); an unknown option is a diagnostic.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirFTPipeRunPartitionPipelineWithText(
    MlirModule module, MlirStringRef options);

/// Appends the stage-program pipeline (partitioning, then outlining,
/// differentiation and the split per device; docs/StagePrograms.md) to
/// `passManager`, nested on builtin.module.
MLIR_CAPI_EXPORTED void
mlirFTPipeBuildStageProgramsPipeline(MlirOpPassManager passManager,
                                     const MlirFTPipePartitionOptions *options);

/// Runs the stage-program pipeline on `module`: on success the module holds
/// the per-device forward and backward entry points of every stage.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirFTPipeRunStageProgramsPipeline(
    MlirModule module, const MlirFTPipePartitionOptions *options);

//===----------------------------------------------------------------------===//
// Reading the result
//===----------------------------------------------------------------------===//

/// Whether `attr` is a `#ftpipe.plan`.
MLIR_CAPI_EXPORTED bool mlirAttributeIsAFTPipePlan(MlirAttribute attr);

/// The module's `ftpipe.plan`, or a null attribute when it has none.
MLIR_CAPI_EXPORTED MlirAttribute mlirFTPipeModuleGetPlan(MlirModule module);

/// The method that produced the plan (e.g. "mixed-pipe", "seq-dp").
MLIR_CAPI_EXPORTED MlirStringRef mlirFTPipePlanGetMethod(MlirAttribute plan);

/// Number of stages of the plan.
MLIR_CAPI_EXPORTED intptr_t mlirFTPipePlanGetNumStages(MlirAttribute plan);

/// Device of stage `stage` (0 <= stage < mlirFTPipePlanGetNumStages).
MLIR_CAPI_EXPORTED int64_t mlirFTPipePlanGetStageDevice(MlirAttribute plan,
                                                        intptr_t stage);

/// Async steady-state time per micro-batch, in ms.
MLIR_CAPI_EXPORTED double mlirFTPipePlanGetObjectiveMs(MlirAttribute plan);

/// Number of devices the plan accounts memory for.
MLIR_CAPI_EXPORTED intptr_t mlirFTPipePlanGetNumDevices(MlirAttribute plan);

/// Bytes needed on device `device` (0 <= device < NumDevices).
MLIR_CAPI_EXPORTED int64_t mlirFTPipePlanGetMemoryBytes(MlirAttribute plan,
                                                        intptr_t device);

/// The `ftpipe.stage` of `op`, or -1 when it has none.
MLIR_CAPI_EXPORTED int64_t mlirFTPipeOperationGetStage(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif // FTPIPE_C_FTPIPE_H
