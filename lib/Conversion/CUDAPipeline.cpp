//===- CUDAPipeline.cpp - Tensor IR to host code and a CUDA binary --------===//
//
// buildCUDALoweringPipeline (CUDAPipeline.h): the CPU lowering's stages up to
// buffers with cuBLAS contractions and heap copies of constants, element-wise
// updates in place, early deallocation and the recorded peaks, then
// linalg -> scf.parallel (host loops around them moved inside, adjacent ones
// fused) -> gpu.launch, the host's remaining buffer accesses in one-thread
// launches, kernel outlining into one module (one ptxas run per artifact),
// host-side copies as device copy calls, NVVM, the host code to the LLVM
// dialect with generic allocation functions (device memory in lib/Runtime),
// and gpu-module-to-binary (fatbin) last.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/CUDAPipeline.h"
#include "FTPipe/Conversion/CPUPipeline.h"
#include "FTPipe/Conversion/Passes.h"
#include "LoweringStages.h"

#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

using namespace mlir;

void mlir::ftpipe::buildCUDALoweringPipeline(
    OpPassManager &pm, const CUDALoweringOptions &options) {
  BufferStageOptions buffers;
  buffers.cInterface = options.cInterface;
  buffers.fuse = options.fuse;
  buffers.blas = options.blas;
  buffers.library = GemmLibrary::CuBLAS;
  buffers.copyGlobalsToHeap = true;
  addTensorToBufferStages(pm, buffers);
  // Element-wise updates of a slice write it, not a temporary then copied
  // (a gather adjoint's per-token row; before the peaks are recorded).
  pm.addNestedPass<func::FuncOp>(createElementwiseInPlacePass());
  // As on the CPU: buffers go as soon as they are dead (cudaFreeAsync is
  // ordered after the kernels queued before it), and each entry point's peak
  // is recorded for the plan's memory count (the H200's pool measured within
  // 0.04 % of this walk on the BERT-large layer, docs/GPU.md).
  pm.addNestedPass<func::FuncOp>(createEarlyDeallocationPass());
  pm.addPass(createRecordPeakMemoryPass());
  // Each distinct layer's host code once, in a function of its own (cut
  // from the placed deallocations: the buffers alive at each point stay).
  if (options.outlineLayers)
    pm.addPass(createOutlineLayersPass());

  // What is left of linalg becomes kernels.
  OpPassManager &loops = pm.nest<func::FuncOp>();
  // Reductions inside their parallel loops: one kernel, not a host loop of
  // launches.
  loops.addPass(createReductionsInnermostPass());
  loops.addPass(createConvertLinalgToParallelLoopsPass());
  // A host loop around a kernel's loop (a gather adjoint's over tokens)
  // goes inside it, where different threads touch different elements.
  loops.addPass(createParallelLoopsOutsidePass());
  // Adjacent parallel loops of the same bounds as one kernel where upstream's
  // dependence check allows it (a fill and the reduction it initialises):
  // each element sees the same operations in the same order.
  loops.addPass(createParallelLoopFusionPass());
  loops.addPass(createMapParallelLoopsToGPUPass(
      MapParallelLoopsToGPUPassOptions{options.blockSize}));
  loops.addPass(createParallelLoopToGpuPass());
  // Loads and stores left in host code (ops without a parallel dimension)
  // run in one-thread kernels; the host reads what it needs by copies.
  pm.addPass(createHostAccessesToDevicePass());
  // math.fpowi would become llvm.powi, which NVPTX cannot select: integer
  // powers become calls of generated functions (a loop of multiplications)
  // that kernel outlining copies into the GPU module.
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeGPUModulesPass());
  // What is left of copies in host code runs on the device too.
  pm.addPass(createDeviceCopiesPass());

  // Device code, once scf, views and affine maps are lowered everywhere;
  // then host code, gpu-to-llvm last, after memref allocations became calls
  // of the generic functions (its own memref patterns would call malloc).
  auto device = [&](OpPassManager &pm) {
    GpuNVVMAttachTargetOptions target;
    target.chip = options.chip;
    target.optLevel = options.optLevel;
    pm.addPass(createGpuNVVMAttachTarget(target));
    OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
    kernels.addPass(createConvertGpuOpsToNVVMOps());
    kernels.addPass(createReconcileUnrealizedCastsPass());
  };
  addHostToLLVMStages(
      pm, /*genericAllocation=*/true, device,
      [](OpPassManager &pm) { pm.addPass(createGpuToLLVMConversionPass()); });
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkitPath;
  binary.compilationTarget = "fatbin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::ftpipe::registerCUDALoweringDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

mlir::ftpipe::CUDALoweringOptions
mlir::ftpipe::CUDALoweringTextOptions::toOptions() const {
  CUDALoweringOptions options;
  options.chip = chip;
  options.toolkitPath = toolkitPath;
  options.optLevel = optLevel;
  options.blockSize = blockSize;
  copyCommonTo(options);
  return options;
}

void mlir::ftpipe::registerCUDALoweringPipeline() {
  PassPipelineRegistration<CUDALoweringTextOptions>(
      "ftpipe-lower-cuda",
      "Lowers per-device tensor IR to host code in the LLVM dialect with "
      "an embedded CUDA binary (cuBLAS contractions, kernels for the rest, "
      "device memory)",
      [](OpPassManager &pm, const CUDALoweringTextOptions &options) {
        buildCUDALoweringPipeline(pm, options.toOptions());
      });
}
