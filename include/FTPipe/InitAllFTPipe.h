//===- InitAllFTPipe.h - Registers everything of FTPipe ---------*- C++ -*-===//
//
// The one header a host compiler includes to plug FTPipe in, MLIR-style: one
// registration entry point per layer (the dialect into a DialectRegistry, the
// passes and the named pipelines into MLIR's global pass registry), plus the
// upstream dialects that FTPipe's input IR is written in, and the typed
// pipeline builders (Pipelines.h). Implemented in FTPipeTransforms
// (CMake target FTPipe::Passes links everything it needs).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_INITALLFTPIPE_H
#define FTPIPE_INITALLFTPIPE_H

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Transforms/Passes.h"
#include "FTPipe/Transforms/Pipelines.h"

namespace mlir {
class DialectRegistry;

namespace ftpipe {

/// Adds the upstream dialects that FTPipe's input IR uses (func, tosa,
/// linalg, tensor, arith, math), so that a host which does not load them
/// itself can parse models from ftpipe-model-gen, with FTPipe's reverse-mode
/// rules for their ops (ftpipe-differentiate needs them).
void registerFTPipeInputDialects(DialectRegistry &registry);

/// Everything at once: the ftpipe dialect and the input dialects into
/// `registry`, every FTPipe pass (registerFTPipePasses) and the named
/// pipelines (registerFTPipePipelines) into the global pass registry. Safe to
/// call more than once.
void registerAllFTPipe(DialectRegistry &registry);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_INITALLFTPIPE_H
