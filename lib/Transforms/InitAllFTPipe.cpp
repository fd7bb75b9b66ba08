//===- InitAllFTPipe.cpp - Registers everything of FTPipe -------*- C++ -*-===//
//
// The registration entry points of InitAllFTPipe.h. Only the dialects that
// FTPipe's input IR uses are named here, never `registerAllDialects`: hosts
// keep control of what their context loads.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/InitAllFTPipe.h"
#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::ftpipe::registerFTPipeInputDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect, tosa::TosaDialect>();
  // The reverse-mode rules of these dialects' ops (ftpipe-differentiate).
  autodiff::registerAllRules(registry);
}

void mlir::ftpipe::registerAllFTPipe(DialectRegistry &registry) {
  registerFTPipeDialect(registry);
  registerFTPipeInputDialects(registry);
  registerFTPipePasses();
  registerFTPipePipelines();
}
