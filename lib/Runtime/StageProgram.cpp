//===- StageProgram.cpp - The stage program interface's anchor ------------===//

#include "FTPipe/Runtime/StageProgram.h"

using namespace ftpipe::runtime;

StageProgram::~StageProgram() = default;
