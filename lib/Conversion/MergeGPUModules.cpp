//===- MergeGPUModules.cpp - One gpu.module for all outlined kernels ------===//
//
// ftpipe-merge-gpu-modules: moves the kernels of the one-kernel modules that
// gpu-kernel-outlining makes into a single gpu.module, so that the device
// code of a whole artifact is compiled by one ptxas run.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct MergeGPUModulesPass
    : ftpipe::impl::MergeGPUModulesPassBase<MergeGPUModulesPass> {
  void runOnOperation() override;
};

} // namespace

/// Moves `op` to the end of `module`'s body, before its terminator if any.
static void moveIntoModule(Operation *op, gpu::GPUModuleOp module) {
  Block *body = module.getBody();
  if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
    op->moveBefore(&body->back());
  else
    op->moveBefore(body, body->end());
}

void MergeGPUModulesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<gpu::GPUModuleOp> kernelModules(
      module.getOps<gpu::GPUModuleOp>());
  if (kernelModules.size() < 2)
    return;
  for (gpu::GPUModuleOp kernels : kernelModules)
    if (kernels.getTargetsAttr() || kernels.getOffloadingHandlerAttr()) {
      kernels.emitError("cannot merge a gpu.module with targets or an "
                        "offloading handler: run before nvvm-attach-target");
      return signalPassFailure();
    }

  // Created detached, then inserted under a unique name.
  OpBuilder builder(module.getContext());
  auto merged =
      builder.create<gpu::GPUModuleOp>(module.getLoc(), "ftpipe_kernels");
  SymbolTable symbols(module);
  symbols.insert(merged, Block::iterator(kernelModules.front()));
  StringAttr mergedName = merged.getNameAttr();

  DenseMap<SymbolRefAttr, SymbolRefAttr> renamed;
  for (gpu::GPUModuleOp kernels : kernelModules) {
    SmallVector<Operation *> ops;
    for (Operation &op : kernels.getBody()->without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      auto function = dyn_cast<gpu::GPUFuncOp>(op);
      if (!function) {
        op->emitError("cannot merge gpu.module contents other than gpu.func");
        return signalPassFailure();
      }
      // Module names are unique; a module of several kernels prefixes them.
      std::string name =
          ops.size() == 1
              ? kernels.getName().str()
              : (kernels.getName() + "_" + function.getName()).str();
      SymbolRefAttr from =
          SymbolRefAttr::get(kernels.getNameAttr(),
                             {FlatSymbolRefAttr::get(function.getNameAttr())});
      function.setName(name);
      renamed[from] = SymbolRefAttr::get(
          mergedName, {FlatSymbolRefAttr::get(function.getNameAttr())});
      moveIntoModule(function, merged);
    }
    kernels.erase();
  }

  WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
    auto it = renamed.find(launch.getKernel());
    if (it == renamed.end()) {
      launch.emitError("launches a kernel of no outlined gpu.module");
      return WalkResult::interrupt();
    }
    launch.setKernelAttr(it->second);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return signalPassFailure();
}
