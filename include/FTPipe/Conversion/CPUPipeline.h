//===- CPUPipeline.h - Tensor IR to the LLVM dialect on the CPU -*- C++ -*-===//
//
// The CPU lowering of FTPipe as code: from per-device tensor IR (TOSA, linalg,
// tensor, arith, math; ftpipe.send/recv once lowered to runtime calls) to the
// LLVM dialect, with contractions on BLAS (ftpipe-linalg-to-blas), fused
// element-wise loop nests (ftpipe-fuse-elementwise), one-shot bufferization
// across function boundaries and upstream's deallocation pipeline (no leaks:
// results are returned to the caller, who frees them). Registered as the
// named pipeline `ftpipe-lower-cpu` for ftpipe-opt.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_CONVERSION_CPUPIPELINE_H
#define FTPIPE_CONVERSION_CPUPIPELINE_H

#include "FTPipe/Conversion/LoweringOptions.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;

namespace ftpipe {

struct CPULoweringOptions : CommonLoweringOptions {};

/// Appends the CPU lowering to `pm` (nested on builtin.module).
void buildCPULoweringPipeline(OpPassManager &pm,
                              const CPULoweringOptions &options);

/// Command-line form (`ftpipe-lower-cpu{blas=0}`).
struct CPULoweringTextOptions
    : public CommonLoweringTextOptions<CPULoweringTextOptions> {
  CPULoweringOptions toOptions() const;
};

/// Adds what the lowering needs to a context's registry: the dialects it
/// creates (memref, bufferization, scf, cf, LLVM, ...), the bufferization and
/// allocation interfaces of the dialects it bufferizes, and the translations
/// to LLVM IR. Call before parsing the module that will be lowered.
void registerCPULoweringDialects(DialectRegistry &registry);

/// Registers `ftpipe-lower-cpu` with MLIR's global pass registry.
void registerCPULoweringPipeline();

/// Registers the conversion passes and the lowering pipelines.
void registerFTPipeConversions();

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_CONVERSION_CPUPIPELINE_H
