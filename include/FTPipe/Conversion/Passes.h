//===- Passes.h - FTPipe conversions ----------------------------*- C++ -*-===//
//
// Declares FTPipe's code-generation passes (generated from Passes.td), the
// pattern sets they are thin wrappers of, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_CONVERSION_PASSES_H
#define FTPIPE_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace ftpipe {

/// The library behind the gemm entry that ftpipe-linalg-to-blas calls.
enum class GemmLibrary {
  /// `ftpipe_blas_gemm_T` (BLASKernels.h), the CPU target.
  OpenBLAS,
  /// `ftpipe_cublas_gemm_T` (CuBLASKernels.h), the CUDA target.
  CuBLAS,
};

/// Name of the gemm entry of `library` for element type `elementType` (f32
/// or f64), e.g. `ftpipe_blas_gemm_f32`.
std::string getBLASGemmName(Type elementType,
                            GemmLibrary library = GemmLibrary::OpenBLAS);

/// Name of the device copy that ftpipe-device-copies calls for
/// `elementType` (`ftpipe_cuda_copy_f32`, ...); none for other types.
std::optional<std::string> getDeviceCopyName(Type elementType);

/// Patterns that turn contractions on memrefs (`out += a * b`, f32 or f64)
/// into calls of the shape-independent gemm entry of `library`. The
/// enclosing module must declare the entries; `declareBLASGemms` adds the
/// declarations.
void populateLinalgToBLASPatterns(RewritePatternSet &patterns,
                                  GemmLibrary library = GemmLibrary::OpenBLAS);

/// Adds the private declarations of `library`'s gemm entries to `module`
/// (those not there yet).
void declareBLASGemms(ModuleOp module,
                      GemmLibrary library = GemmLibrary::OpenBLAS);

/// Upstream's element-wise fusion on tensors with FTPipe's control: a
/// producer is fused into a contraction only if it is a pure copy.
void populateFuseElementwisePatterns(RewritePatternSet &patterns);

#define GEN_PASS_DECL
#include "FTPipe/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "FTPipe/Conversion/Passes.h.inc"

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_CONVERSION_PASSES_H
