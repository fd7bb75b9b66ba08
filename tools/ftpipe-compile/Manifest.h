//===- Manifest.h - The manifest of compiled device artifacts ---*- C++ -*-===//
//
// Reads the manifest (docs/Compile.md, "manifest.json"; its structs in
// FTPipe/Runtime/ManifestSchema.h) off per-device IR:
// the entry points with the attributes of docs/StagePrograms.md, the
// ftpipe.send / ftpipe.recv ops in them, the parameters with their owners and
// copies, the data inputs and the loss.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TOOLS_FTPIPE_COMPILE_MANIFEST_H
#define FTPIPE_TOOLS_FTPIPE_COMPILE_MANIFEST_H

#include "FTPipe/Runtime/ManifestSchema.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir {
namespace ftpipe {

/// The manifest of `module` (per-device IR) for `target`, with one artifact
/// file name per device (`artifactName(device)`); fails, with an error at the
/// entry point, on a value the runtime has no tensor of. The caller adds what
/// the IR does not hold (memory, training setup, device memory).
FailureOr<::ftpipe::runtime::ManifestFile>
buildManifest(ModuleOp module, llvm::StringRef target, int64_t devices,
              llvm::function_ref<std::string(int64_t)> artifactName);

/// The device of an entry point (`ftpipe.device`, 0 when absent).
int64_t getEntryDevice(func::FuncOp function);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_TOOLS_FTPIPE_COMPILE_MANIFEST_H
