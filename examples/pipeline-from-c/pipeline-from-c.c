/*===- pipeline-from-c.c - FTPipe from C through its C API --------*- C -*-===*\
|*                                                                            *|
|* Everything through C: MLIR's C API for the context, the parser and the     *|
|* pass manager, FTPipe's (FTPipe-c/FTPipe.h) for the dialect, the pipeline   *|
|* and the plan. Partitions the model three ways (the one-call runner with    *|
|* typed options, a textual pipeline in the host's own pass manager, and the  *|
|* textual options form), checks the plan and every op's stage, and checks   *|
|* that bad options fail cleanly. Exits non-zero on the first problem.        *|
|*                                                                            *|
|*   pipeline-from-c MODEL.mlir                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FTPipe-c/FTPipe.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToStderr(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stderr);
}

/* Collects diagnostic text into a fixed buffer. */
typedef struct {
  char text[1024];
  size_t length;
} Captured;

static void appendText(MlirStringRef text, void *userData) {
  Captured *captured = (Captured *)userData;
  size_t room = sizeof(captured->text) - 1 - captured->length;
  size_t n = text.length < room ? text.length : room;
  memcpy(captured->text + captured->length, text.data, n);
  captured->length += n;
  captured->text[captured->length] = '\0';
}

static MlirLogicalResult captureDiagnostic(MlirDiagnostic diagnostic,
                                           void *userData) {
  mlirDiagnosticPrint(diagnostic, appendText, userData);
  return mlirLogicalResultSuccess();
}

static char *readFile(const char *path, size_t *length) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *buffer = malloc((size_t)size + 1);
  if (buffer && fread(buffer, 1, (size_t)size, file) != (size_t)size) {
    free(buffer);
    buffer = NULL;
  }
  fclose(file);
  if (buffer) {
    buffer[size] = '\0';
    *length = (size_t)size;
  }
  return buffer;
}

/* The plan has `devices` devices and, if `method` is not empty, that method;
 * every op of the model function (the module's first op) but the terminator
 * has a stage of the plan, and every stage holds an op. */
static int checkPartitioned(MlirModule module, intptr_t devices,
                            const char *method, const char *what) {
  MlirAttribute plan = mlirFTPipeModuleGetPlan(module);
  if (mlirAttributeIsNull(plan) || !mlirAttributeIsAFTPipePlan(plan)) {
    fprintf(stderr, "pipeline-from-c: %s: no ftpipe.plan\n", what);
    return 0;
  }
  MlirStringRef planMethod = mlirFTPipePlanGetMethod(plan);
  if (method[0] && (planMethod.length != strlen(method) ||
                    strncmp(planMethod.data, method, planMethod.length))) {
    fprintf(stderr, "pipeline-from-c: %s: method '%.*s', expected '%s'\n",
            what, (int)planMethod.length, planMethod.data, method);
    return 0;
  }
  if (mlirFTPipePlanGetNumDevices(plan) != devices) {
    fprintf(stderr, "pipeline-from-c: %s: %ld devices, expected %ld\n", what,
            (long)mlirFTPipePlanGetNumDevices(plan), (long)devices);
    return 0;
  }
  intptr_t numStages = mlirFTPipePlanGetNumStages(plan);
  if (numStages <= 0 || numStages > 64) {
    fprintf(stderr, "pipeline-from-c: %s: %ld stages\n", what,
            (long)numStages);
    return 0;
  }
  for (intptr_t s = 0; s < numStages; ++s) {
    int64_t device = mlirFTPipePlanGetStageDevice(plan, s);
    if (device < 0 || device >= devices) {
      fprintf(stderr, "pipeline-from-c: %s: stage %ld on device %ld\n", what,
              (long)s, (long)device);
      return 0;
    }
  }

  int used[64] = {0};
  long numOps = 0;
  MlirBlock body = mlirModuleGetBody(module);
  MlirOperation func = mlirBlockGetFirstOperation(body);
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  MlirOperation terminator = mlirBlockGetTerminator(entry);
  for (MlirOperation op = mlirBlockGetFirstOperation(entry);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    if (mlirOperationEqual(op, terminator))
      continue;
    int64_t stage = mlirFTPipeOperationGetStage(op);
    if (stage < 0 || stage >= numStages) {
      MlirIdentifier name = mlirOperationGetName(op);
      MlirStringRef nameRef = mlirIdentifierStr(name);
      fprintf(stderr, "pipeline-from-c: %s: op '%.*s' has stage %ld\n", what,
              (int)nameRef.length, nameRef.data, (long)stage);
      return 0;
    }
    used[stage] = 1;
    ++numOps;
  }
  for (intptr_t s = 0; s < numStages; ++s) {
    if (!used[s]) {
      fprintf(stderr, "pipeline-from-c: %s: stage %ld holds no op\n", what,
              (long)s);
      return 0;
    }
  }
  printf("%s: %.*s, %ld ops in %ld stages on %ld devices, %g ms per "
         "micro-batch\n",
         what, (int)planMethod.length, planMethod.data, numOps,
         (long)numStages, (long)devices, mlirFTPipePlanGetObjectiveMs(plan));
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pipeline-from-c MODEL.mlir\n");
    return 2;
  }
  size_t length = 0;
  char *text = readFile(argv[1], &length);
  if (!text) {
    fprintf(stderr, "pipeline-from-c: cannot read %s\n", argv[1]);
    return 1;
  }
  MlirStringRef source = mlirStringRefCreate(text, length);

  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__ftpipe__(), registry);
  mlirFTPipeRegisterInputDialects(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);

  int ok = 1;

  /* 1. The one-call runner with typed options. */
  MlirModule first = mlirModuleCreateParse(context, source);
  if (mlirModuleIsNull(first)) {
    fprintf(stderr, "pipeline-from-c: cannot parse %s\n", argv[1]);
    return 1;
  }
  MlirFTPipePartitionOptions options = mlirFTPipePartitionOptionsGetDefault();
  options.devices = 4;
  options.method = MlirFTPipePartitionMethodMixedPipe;
  ok = ok &&
       mlirLogicalResultIsSuccess(mlirFTPipeRunPartitionPipeline(first,
                                                                 &options)) &&
       checkPartitioned(first, 4, "mixed-pipe", "typed options");
  mlirModuleDestroy(first);

  /* 2. The host's own pass manager: canonicalization would go around it;
   * here the pipeline is added by name after registering it. */
  mlirFTPipeRegisterPasses();
  mlirFTPipeRegisterPipelines();
  MlirModule second = mlirModuleCreateParse(context, source);
  MlirPassManager pm = mlirPassManagerCreateOnOperation(
      context, mlirStringRefCreateFromCString("builtin.module"));
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  ok = ok &&
       mlirLogicalResultIsSuccess(mlirOpPassManagerAddPipeline(
           opm,
           mlirStringRefCreateFromCString(
               "ftpipe-partition-pipeline{devices=2 method=seq-greedy}"),
           printToStderr, NULL)) &&
       mlirLogicalResultIsSuccess(
           mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(second))) &&
       checkPartitioned(second, 2, "seq-greedy", "pass manager");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(second);

  /* 3. The builder into a pass manager of the host's, then the textual
   * options form of the runner. */
  MlirModule third = mlirModuleCreateParse(context, source);
  pm = mlirPassManagerCreateOnOperation(
      context, mlirStringRefCreateFromCString("builtin.module"));
  options = mlirFTPipePartitionOptionsGetDefault();
  options.devices = 3;
  options.method = MlirFTPipePartitionMethodSeqDP;
  options.schedule = MlirFTPipeScheduleGPipe;
  options.microbatches = 4;
  options.optimizer = MlirFTPipeOptimizerMomentum;
  mlirFTPipeBuildPartitionPipeline(mlirPassManagerGetAsOpPassManager(pm),
                                   &options);
  ok = ok &&
       mlirLogicalResultIsSuccess(
           mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(third))) &&
       checkPartitioned(third, 3, "seq-dp", "built into a pass manager");
  mlirPassManagerDestroy(pm);

  /* The typed fine-tuning setup reaches the passes: the same plan with Adam
   * (two state buffers per weight) needs more memory than with momentum
   * (one). */
  MlirModule withAdam = mlirModuleCreateParse(context, source);
  options.optimizer = MlirFTPipeOptimizerAdam;
  ok = ok && mlirLogicalResultIsSuccess(
                 mlirFTPipeRunPartitionPipeline(withAdam, &options));
  if (ok) {
    MlirAttribute momentumPlan = mlirFTPipeModuleGetPlan(third);
    MlirAttribute adamPlan = mlirFTPipeModuleGetPlan(withAdam);
    int64_t momentumBytes = 0, adamBytes = 0;
    for (intptr_t d = 0; d < mlirFTPipePlanGetNumDevices(momentumPlan); ++d)
      momentumBytes += mlirFTPipePlanGetMemoryBytes(momentumPlan, d);
    for (intptr_t d = 0; d < mlirFTPipePlanGetNumDevices(adamPlan); ++d)
      adamBytes += mlirFTPipePlanGetMemoryBytes(adamPlan, d);
    if (momentumBytes >= adamBytes) {
      fprintf(stderr,
              "pipeline-from-c: momentum needs %ld bytes, Adam %ld: the "
              "optimizer option did not reach the passes\n",
              (long)momentumBytes, (long)adamBytes);
      ok = 0;
    }
  }
  mlirModuleDestroy(withAdam);
  mlirModuleDestroy(third);

  MlirModule fourth = mlirModuleCreateParse(context, source);
  ok = ok &&
       mlirLogicalResultIsSuccess(mlirFTPipeRunPartitionPipelineWithText(
           fourth, mlirStringRefCreateFromCString(
                       "devices=2 method=auto optimizer=sgd"))) &&
       checkPartitioned(fourth, 2, "", "textual options");
  mlirModuleDestroy(fourth);

  /* The stage-program pipeline: from the model to per-device forward and
   * backward entry points (the model must return its loss). */
  MlirModule programs = mlirModuleCreateParse(context, source);
  options = mlirFTPipePartitionOptionsGetDefault();
  options.devices = 2;
  options.method = MlirFTPipePartitionMethodSeqDP;
  if (ok && mlirLogicalResultIsSuccess(
                mlirFTPipeRunStageProgramsPipeline(programs, &options))) {
    MlirSymbolTable symbols =
        mlirSymbolTableCreate(mlirModuleGetOperation(programs));
    const char *entries[] = {"stage0_forward", "stage0_backward",
                             "stage1_forward", "stage1_backward"};
    for (int i = 0; i < 4; ++i)
      if (mlirOperationIsNull(mlirSymbolTableLookup(
              symbols, mlirStringRefCreateFromCString(entries[i])))) {
        fprintf(stderr, "pipeline-from-c: no %s after the stage programs\n",
                entries[i]);
        ok = 0;
      }
    mlirSymbolTableDestroy(symbols);
  } else if (ok) {
    fprintf(stderr, "pipeline-from-c: the stage-program pipeline failed\n");
    ok = 0;
  }
  mlirModuleDestroy(programs);

  /* Bad options are a diagnostic and a failure, not a crash. */
  MlirModule fifth = mlirModuleCreateParse(context, source);
  Captured captured = {{0}, 0};
  MlirDiagnosticHandlerID handler = mlirContextAttachDiagnosticHandler(
      context, captureDiagnostic, &captured, NULL);
  if (ok && mlirLogicalResultIsSuccess(mlirFTPipeRunPartitionPipelineWithText(
                fifth, mlirStringRefCreateFromCString("method=bogus")))) {
    fprintf(stderr, "pipeline-from-c: method=bogus was accepted\n");
    ok = 0;
  } else if (ok && !strstr(captured.text, "bogus")) {
    fprintf(stderr, "pipeline-from-c: unexpected diagnostic '%s'\n",
            captured.text);
    ok = 0;
  }
  mlirContextDetachDiagnosticHandler(context, handler);
  mlirModuleDestroy(fifth);

  mlirContextDestroy(context);
  free(text);
  if (ok)
    printf("pipeline-from-c: all checks passed\n");
  return ok ? 0 : 1;
}
