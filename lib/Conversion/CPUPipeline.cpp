//===- CPUPipeline.cpp - Tensor IR to the LLVM dialect on the CPU ---------===//
//
// buildCPULoweringPipeline (CPUPipeline.h): upstream's passes and FTPipe's
// conversions in the order that gives BLAS calls on buffers and fused loop
// nests, ending in the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/CPUPipeline.h"
#include "FTPipe/Conversion/CUDAPipeline.h"
#include "FTPipe/Conversion/Passes.h"
#include "LoweringStages.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::ftpipe::addTensorToBufferStages(OpPassManager &pm,
                                           const BufferStageOptions &options) {
  pm.addPass(createCheckLowerablePass());
  // What each entry point takes and returns, for the runtime's check of the
  // manifest (before the C wrappers add functions and bufferization changes
  // the types).
  pm.addPass(createRecordEntryABIPass());
  // Entry points first: the declarations added below must stay plain C.
  if (options.cInterface)
    pm.addNestedPass<func::FuncOp>(LLVM::createRequestCWrappersPass());
  // Before the annotations go: it finds the index guards by theirs.
  pm.addPass(createTrapComputedIndicesPass());
  pm.addPass(createDropAnnotationsPass());
  pm.addPass(createLowerTransfersPass());
  // Stage functions into their entry points: the deallocation pipeline's
  // alias checks through a call with hundreds of operands grew with the cube
  // of the layers.
  pm.addPass(createInlineSingleCallsPass());
  OpPassManager &tosa = pm.nest<func::FuncOp>();
  tosa.addPass(tosa::createTosaToLinalgNamed());
  tosa.addPass(tosa::createTosaToLinalg());
  tosa.addPass(tosa::createTosaToArith());
  tosa.addPass(tosa::createTosaToTensor());
  tosa.addPass(createCanonicalizerPass());
  if (options.fuse) {
    pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
    // No CSE here: it would merge the zero fills of several contractions'
    // outputs into one, which bufferization then copies, where each fill
    // alone folds into its BLAS call.
    pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  }

  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  if (options.blas)
    pm.addPass(
        createLinalgToBLASPass(LinalgToBLASPassOptions{options.library}));
  if (options.copyGlobalsToHeap)
    pm.addNestedPass<func::FuncOp>(createCopyGlobalsToHeapPass());
  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());
  pm.addPass(createBufferizationToMemRefPass());
}

void mlir::ftpipe::addHostToLLVMStages(
    OpPassManager &pm, bool genericAllocation,
    llvm::function_ref<void(OpPassManager &)> afterStructural,
    llvm::function_ref<void(OpPassManager &)> beforeReconcile) {
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  if (afterStructural)
    afterStructural(pm);
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = genericAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // Glue (C-interface wrappers, entry points, stage functions of calls):
  // compiled as it is.
  pm.addPass(createPlainGluePass());
  pm.addPass(createConvertIndexToLLVMPass());
  if (beforeReconcile)
    beforeReconcile(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::ftpipe::buildCPULoweringPipeline(OpPassManager &pm,
                                            const CPULoweringOptions &options) {
  BufferStageOptions buffers;
  buffers.cInterface = options.cInterface;
  buffers.fuse = options.fuse;
  buffers.blas = options.blas;
  addTensorToBufferStages(pm, buffers);
  // Buffers go as soon as they are dead, and each entry point's peak is
  // recorded in the artifact for the runtime's memory prediction.
  pm.addNestedPass<func::FuncOp>(createEarlyDeallocationPass());
  pm.addPass(createRecordPeakMemoryPass());
  // Strided copies (slices) as loops, not the runtime's element-wise copy
  // (before the outlining, which moves every loop out of the glue).
  pm.addNestedPass<func::FuncOp>(createStridedCopiesToLoopsPass());
  // Each distinct layer's code once, in a function of its own: cut from the
  // placed allocations and deallocations, so the buffers alive at each point
  // (and the recorded peak) stay as they are.
  if (options.outlineLayers)
    pm.addPass(createOutlineLayersPass());
  pm.addNestedPass<func::FuncOp>(createLoopLocalityPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Allocations go to FTPipeCPUKernels' cache (HostAllocator.h).
  addHostToLLVMStages(pm, /*genericAllocation=*/true, [](OpPassManager &pm) {
    pm.addNestedPass<func::FuncOp>(createApproximateMathPass());
  });
}

void mlir::ftpipe::registerCPULoweringDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, tensor::TensorDialect, tosa::TosaDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

mlir::ftpipe::CPULoweringOptions
mlir::ftpipe::CPULoweringTextOptions::toOptions() const {
  CPULoweringOptions options;
  copyCommonTo(options);
  return options;
}

void mlir::ftpipe::registerCPULoweringPipeline() {
  PassPipelineRegistration<CPULoweringTextOptions>(
      "ftpipe-lower-cpu",
      "Lowers per-device tensor IR to the LLVM dialect for the CPU "
      "(BLAS contractions, fused loops, bufferization without leaks)",
      [](OpPassManager &pm, const CPULoweringTextOptions &options) {
        buildCPULoweringPipeline(pm, options.toOptions());
      });
}

void mlir::ftpipe::registerFTPipeConversions() {
  registerFTPipeConversionPasses();
  registerCPULoweringPipeline();
  registerCUDALoweringPipeline();
}
