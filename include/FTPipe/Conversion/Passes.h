//===- Passes.h - FTPipe conversions ----------------------------*- C++ -*-===//
//
// Declares FTPipe's code-generation passes (generated from Passes.td), the
// pattern sets they are thin wrappers of, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_CONVERSION_PASSES_H
#define FTPIPE_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace ftpipe {

/// Name of the BLAS entry that ftpipe-linalg-to-blas calls for element type
/// `elementType` (f32 or f64): `ftpipe_blas_gemm_f32` / `ftpipe_blas_gemm_f64`.
std::string getBLASGemmName(Type elementType);

/// Patterns that turn contractions on memrefs (`out += a * b`, f32 or f64)
/// into calls of the shape-independent BLAS entry. The enclosing module must
/// declare the entries; `declareBLASGemms` adds the declarations.
void populateLinalgToBLASPatterns(RewritePatternSet &patterns);

/// Adds the private declarations of the BLAS entries to `module` (those not
/// there yet).
void declareBLASGemms(ModuleOp module);

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
