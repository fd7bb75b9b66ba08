//===- StageProgram.cpp - Anchors of the model interfaces -----------------===//

#include "FTPipe/Runtime/PipelineModel.h"
#include "FTPipe/Runtime/StageProgram.h"

using namespace ftpipe::runtime;

StageProgram::~StageProgram() = default;
PipelineModel::~PipelineModel() = default;
