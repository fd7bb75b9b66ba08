//===- ftpipe-opt.cpp - FTPipe's optimizer driver ---------------*- C++ -*-===//
//
// mlir-opt for FTPipe: the upstream dialects that model IR uses, the ftpipe
// dialect, every FTPipe pass and the generic upstream transforms (canonicalize,
// cse, ...). Registers only what it uses, to keep the build lean.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"
#include "FTPipe/Conversion/CPUPipeline.h"
#include "FTPipe/Conversion/CUDAPipeline.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Transforms/Passes.h"
#include "FTPipe/Transforms/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect, mlir::tosa::TosaDialect>();
  mlir::ftpipe::registerFTPipeDialect(registry);
  mlir::ftpipe::autodiff::registerAllRules(registry);
  mlir::ftpipe::registerCPULoweringDialects(registry);
  mlir::ftpipe::registerCUDALoweringDialects(registry);

  mlir::registerTransformsPasses();
  mlir::ftpipe::registerFTPipePasses();
  mlir::ftpipe::registerFTPipePipelines();
  mlir::ftpipe::registerFTPipeConversions();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "FTPipe optimizer driver: pipeline partitioning passes\n",
      registry));
}
