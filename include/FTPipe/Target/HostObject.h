//===- HostObject.h - LLVM dialect to objects and shared libraries -*- C++ -*-===//
//
// The last steps of the host code of every target: translate a module in the
// LLVM dialect to LLVM IR, optimise it for the host CPU (LLVM's default
// pipeline without loop unrolling, which took most of the compile time for no
// measurable speed), emit a position-independent object in-process (LLVM
// 19's TargetMachine), and link objects into a shared library with the
// runtime libraries that generated code calls.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_TARGET_HOSTOBJECT_H
#define FTPIPE_TARGET_HOSTOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace mlir {
namespace ftpipe {

/// Writes `module` (LLVM dialect only) as an object file for the host CPU
/// (PIC), optimised at `optLevel` (0-3, loops not unrolled). On failure,
/// returns failure and sets `error`.
LogicalResult emitHostObject(ModuleOp module, llvm::StringRef objectPath,
                             unsigned optLevel, std::string &error);

/// What a device's shared library links with.
struct HostLinkOptions {
  /// Directory of FTPipe's runtime libraries (FTPipeStageABI,
  /// FTPipeCPUKernels); it also becomes the library's run path.
  std::string runtimeDir;
  /// Directory of MLIR's C runner utilities (memrefCopy).
  std::string mlirLibDir;
  /// The system compiler driver used as the linker ("cc" on PATH by default).
  std::string linker = "cc";
  /// FTPipe's libraries that the artifact needs, linked even when no symbol
  /// of theirs is used (drivers reach the runtime through the artifact):
  /// the CPU target's by default, FTPipeCUDARuntime instead of
  /// FTPipeCPUKernels for the CUDA target.
  std::vector<std::string> runtimeLibraries = {"FTPipeCPUKernels",
                                               "FTPipeStageABI"};
};

/// Links `objects` into the shared library `output` with the runtime
/// libraries of `options`, MLIR's C runner utilities and libm.
LogicalResult linkHostSharedLibrary(const std::vector<std::string> &objects,
                                    llvm::StringRef output,
                                    const HostLinkOptions &options,
                                    std::string &error);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_TARGET_HOSTOBJECT_H
