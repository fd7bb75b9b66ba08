//===- ftpipe-run.cpp - Fine-tune a pipeline: the launcher ----------------===//
//
// Runs training steps of a pipeline model with a schedule, an optimizer and
// a communicator: one device per MPI process when started by mpirun (or
// with --np P, which starts mpirun itself), or all devices as threads of
// this process (--devices P, the in-process communicator). The model is a
// directory of `ftpipe-compile` artifacts (lib/Runtime/CompiledModel.cpp)
// or the hand-written tiny MLP (--model tiny-mlp, lib/Runtime/TinyMlp.cpp).
// The run itself is lib/Runtime's (Run.h); the flags are RunFlags.cpp's.
// This tool calls the one with the other and prints what it reports.
// Checkpoints, resume and failure detection: docs/FailuresAndRecovery.md.
//
//===----------------------------------------------------------------------===//

#include "RunFlags.h"

#include "FTPipe/Runtime/MemoryStats.h"
#include "FTPipe/Runtime/Run.h"
#include "FTPipe/Schedule/TorchCsv.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace ftpipe;
using namespace ftpipe::runtime;

[[noreturn]] static void die(const llvm::Twine &message) {
  // In one write: every process of an MPI run may refuse the same input at
  // once, and mpirun interleaves their output at the writes' granularity.
  llvm::errs() << ("ftpipe-run: " + message + "\n").str();
  std::exit(1);
}

template <typename T> static T orDie(llvm::Expected<T> value) {
  if (!value)
    die(llvm::toString(value.takeError()));
  return std::move(*value);
}

int main(int argc, char **argv) {
  RunFlags flags = orDie(parseRunFlags(argc, argv));
  if (flags.np > 0)
    return orDie(relaunchUnderMpirun(argc, argv, flags.np));
  // One BLAS thread per device unless told otherwise: the devices of a run
  // share the machine's cores (set before any artifact loads OpenBLAS).
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  returnLargeBlocksToSystem();

  const RunOptions &options = flags.run;
  TrainingRun run = orDie(planTraining(flags.model, options));
  if (flags.printSchedule) {
    llvm::outs() << (flags.csvSchedule
                         ? orDie(schedule::toTorchCsv(run.schedule))
                         : run.schedule.str());
    return 0;
  }
  if (llvm::Error error = loadTraining(run, flags.model, options))
    die(llvm::toString(std::move(error)));
  RunHooks hooks;
  hooks.onStep = [&](int64_t device, const StepReport &report) {
    if (report.loss)
      (llvm::outs() << formatStep(run, device, report)).flush();
  };
  hooks.onEvaluation = [](int64_t, const EvaluationReport &report) {
    (llvm::outs() << formatEvaluation(report)).flush();
  };
  hooks.onDeviceDone = [](const DeviceSummary &device) {
    llvm::errs() << formatDeviceSummary(device);
  };
  // One write per line: under mpirun, a progress line on stdout could
  // otherwise land between a note and its newline in a merged log.
  hooks.onNote = [](const std::string &line) { llvm::errs() << line + "\n"; };
  hooks.fatal = [](const std::string &message) { die(message); };
  TrainingResult result = orDie(runTraining(run, options, hooks, &argc, &argv));
  if (result.timing)
    llvm::outs() << formatRunTiming(*result.timing);
  return 0;
}
