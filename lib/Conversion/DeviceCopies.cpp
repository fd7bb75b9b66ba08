//===- DeviceCopies.cpp - Host-side memref.copy as device copy calls ------===//
//
// ftpipe-device-copies: every memref.copy of host code becomes a call of
// `ftpipe_cuda_copy_T` (CudaRuntimeWrappers.h) on unranked views of its
// operands, so that the CUDA target, whose buffers are device memory, never
// copies them with the host's memcpy (what finalize-memref-to-llvm makes of a
// contiguous copy) or with the C runner utilities' memrefCopy.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_DEVICECOPIESPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

std::optional<std::string> mlir::ftpipe::getDeviceCopyName(Type elementType) {
  std::string suffix;
  if (elementType.isF64())
    suffix = "f64";
  else if (elementType.isF32())
    suffix = "f32";
  else if (elementType.isF16())
    suffix = "f16";
  else if (elementType.isBF16())
    suffix = "bf16";
  else if (auto integer = dyn_cast<IntegerType>(elementType);
           integer &&
           llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth()))
    suffix = "i" + std::to_string(integer.getWidth());
  else
    return std::nullopt;
  return "ftpipe_cuda_copy_" + suffix;
}

namespace {

struct DeviceCopiesPass : ftpipe::impl::DeviceCopiesPassBase<DeviceCopiesPass> {
  void runOnOperation() override;
};

} // namespace

void DeviceCopiesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<memref::CopyOp> copies;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk([&](memref::CopyOp op) { copies.push_back(op); });
  OpBuilder declarations = OpBuilder::atBlockEnd(module.getBody());
  for (memref::CopyOp copy : copies) {
    auto sourceType = cast<MemRefType>(copy.getSource().getType());
    Type elementType = sourceType.getElementType();
    std::optional<std::string> name = ftpipe::getDeviceCopyName(elementType);
    if (!name) {
      copy.emitError() << "copy of " << elementType
                       << " elements: no device copy for this element type";
      return signalPassFailure();
    }
    auto unranked = UnrankedMemRefType::get(elementType, /*memorySpace=*/{});
    if (!module.lookupSymbol(*name)) {
      auto decl = declarations.create<func::FuncOp>(
          module.getLoc(), *name,
          declarations.getFunctionType({unranked, unranked}, {}));
      decl.setPrivate();
    }
    OpBuilder builder(copy);
    Value source = builder.create<memref::CastOp>(copy.getLoc(), unranked,
                                                  copy.getSource());
    Value target = builder.create<memref::CastOp>(copy.getLoc(), unranked,
                                                  copy.getTarget());
    builder.create<func::CallOp>(copy.getLoc(), *name, TypeRange{},
                                 ValueRange{source, target});
    copy.erase();
  }
}
