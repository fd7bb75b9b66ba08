//===- LoweringStages.h - Stages shared by both lowerings -------*- C++ -*-===//
//
// The parts of ftpipe-lower-cpu and ftpipe-lower-cuda that are the same:
// tensor IR to buffers (annotations dropped, transfers lowered, TOSA to
// linalg, fusion, one-shot bufferization, contractions to a gemm entry, no
// leaks) and host code on buffers to the LLVM dialect. A private header of
// lib/Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_CONVERSION_LOWERINGSTAGES_H
#define FTPIPE_LIB_CONVERSION_LOWERINGSTAGES_H

#include "FTPipe/Conversion/Passes.h"

namespace mlir {
class OpPassManager;

namespace ftpipe {

struct BufferStageOptions {
  bool cInterface = true;
  bool fuse = true;
  /// Contractions call the gemm entry of `library` (else they stay linalg).
  bool blas = true;
  GemmLibrary library = GemmLibrary::OpenBLAS;
  /// Constant buffers are read from heap copies (ftpipe-copy-globals-to-heap).
  bool copyGlobalsToHeap = false;
};

/// Tensor IR to linalg on memrefs with explicit deallocations: everything up
/// to and including bufferization-to-memref.
void addTensorToBufferStages(OpPassManager &pm,
                             const BufferStageOptions &options);

/// Host code on memrefs (no linalg left) to the LLVM dialect: scf, affine,
/// math, memref, arith, cf, func and index, then reconcile-unrealized-casts.
/// `genericAllocation` makes memref allocations call
/// `_mlir_memref_to_llvm_alloc` / `_free` instead of malloc / free.
/// `afterStructural` adds passes after scf, strided views and affine maps
/// are lowered (everywhere, kernels included) and before the rest;
/// `beforeReconcile` adds passes right before the final reconcile.
void addHostToLLVMStages(
    OpPassManager &pm, bool genericAllocation,
    llvm::function_ref<void(OpPassManager &)> afterStructural = {},
    llvm::function_ref<void(OpPassManager &)> beforeReconcile = {});

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_CONVERSION_LOWERINGSTAGES_H
