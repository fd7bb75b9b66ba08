//===- StageProgram.cpp - Anchors of the model interfaces -----------------===//

#include "FTPipe/Runtime/StageProgram.h"
#include "FTPipe/Runtime/PipelineModel.h"

using namespace ftpipe::runtime;

StageProgram::~StageProgram() = default;
PipelineModel::~PipelineModel() = default;
