//===- MarkParams.cpp - Mark trainable weights of foreign IR ----*- C++ -*-===//
//
// IR written by other tools (e.g. an LLaMA export) carries no `ftpipe.param`
// marks. This pass marks every float tensor argument that is not a listed data
// input as a parameter and names it, so such IR enters the same pipeline as
// IR from ftpipe-model-gen.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallSet.h"

#define DEBUG_TYPE "ftpipe-mark-params"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_MARKPARAMSPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct MarkParamsPass
    : public mlir::ftpipe::impl::MarkParamsPassBase<MarkParamsPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// True for arguments that can hold trainable weights.
static bool isFloatTensor(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  return tensorType && isa<FloatType>(tensorType.getElementType());
}

void MarkParamsPass::runOnOperation() {
  func::FuncOp func = getOperation();
  // A declaration has no body to train, and no block arguments to mark.
  if (func.isExternal())
    return;
  unsigned numArgs = func.getNumArguments();
  llvm::SmallSet<unsigned, 8> dataInputs;
  for (unsigned index : inputs) {
    if (index >= numArgs) {
      emitError(func.getLoc())
          << "input index " << index << " is out of range: '@"
          << func.getSymName() << "' has " << numArgs << " arguments";
      return signalPassFailure();
    }
    dataInputs.insert(index);
  }

  Builder builder(&getContext());
  for (unsigned index = 0; index < numArgs; ++index) {
    if (dataInputs.contains(index)) {
      if (func.getArgAttr(index, FTPipeDialect::kParamAttrName)) {
        emitError(func.getLoc())
            << "argument " << index
            << " is listed as an input but is already marked "
               "'ftpipe.param'";
        return signalPassFailure();
      }
      continue;
    }
    if (!isFloatTensor(func.getArgument(index).getType()))
      continue;
    if (!func.getArgAttr(index, FTPipeDialect::kParamAttrName)) {
      func.setArgAttr(index, FTPipeDialect::kParamAttrName,
                      builder.getUnitAttr());
      ++numParams;
    }
    if (!func.getArgAttr(index, FTPipeDialect::kNameAttrName))
      func.setArgAttr(index, FTPipeDialect::kNameAttrName,
                      builder.getStringAttr("arg" + Twine(index)));
  }
}
