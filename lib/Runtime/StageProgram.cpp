//===- StageProgram.cpp - Anchors of the model interfaces -----------------===//

#include "FTPipe/Runtime/StageProgram.h"
#include "FTPipe/Runtime/PipelineModel.h"

#include "llvm/Support/ErrorHandling.h"

using namespace ftpipe::runtime;

StageProgram::~StageProgram() = default;
PipelineModel::~PipelineModel() = default;

// The executor asks splitsBackward() first: reaching these is a bug.
std::vector<ftpipe::runtime::Tensor>
StageProgram::backwardInput(int64_t, const std::vector<const Tensor *> &,
                            const std::vector<const Tensor *> &,
                            std::vector<Tensor>) {
  llvm::report_fatal_error("backwardInput on a stage that does not split");
}

void StageProgram::backwardWeight(int64_t, const std::vector<const Tensor *> &,
                                  const std::vector<const Tensor *> &,
                                  std::vector<Tensor>,
                                  const std::vector<Tensor *> &) {
  llvm::report_fatal_error("backwardWeight on a stage that does not split");
}
