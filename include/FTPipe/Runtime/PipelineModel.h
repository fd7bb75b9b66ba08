//===- PipelineModel.h - A model as the launcher runs it --------*- C++ -*-===//
//
// What `ftpipe-run` needs of a model, whatever made it: the stage graph and
// placement (for the schedule), which devices read each parameter (for the
// tied-gradient exchange), every parameter and data input (to check weights
// and data sets before training), the micro-batch size, a seeded random
// initialisation, and one device's stage programs. Two implementations: the
// compiled artifacts of `ftpipe-compile` (CompiledModel.h) and the
// hand-written tiny MLP (TinyMlp.h).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_PIPELINEMODEL_H
#define FTPIPE_RUNTIME_PIPELINEMODEL_H

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/RunSchedule.h"

#include <memory>

namespace ftpipe {
namespace runtime {

class PipelineModel {
public:
  virtual ~PipelineModel();
  virtual const schedule::StageGraph &stageGraph() const = 0;
  virtual const ParameterPlacement &placement() const = 0;
  /// Every parameter of the model, each once.
  virtual const std::vector<ParameterInfo> &parameters() const = 0;
  /// Every data input of the model, each once.
  virtual const std::vector<DataInputInfo> &dataInputs() const = 0;
  /// Samples per micro-batch.
  virtual int64_t microBatchSize() const = 0;
  /// Seeded initial weights of every parameter.
  virtual TensorMap randomWeights(uint64_t seed) const = 0;
  /// Whether this runtime can run the stage programs (a model compiled for
  /// another target can still be planned and its schedule printed).
  virtual llvm::Error checkRunnable() const { return llvm::Error::success(); }
  /// The stage programs of `device`, ready to run on the calling process.
  virtual llvm::Expected<std::vector<std::unique_ptr<StageProgram>>>
  loadStages(int64_t device) = 0;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_PIPELINEMODEL_H
