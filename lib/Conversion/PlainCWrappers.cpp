//===- PlainCWrappers.cpp - C-interface wrappers without optimisation -----===//
//
// ftpipe-plain-c-wrappers: a `_mlir_ciface_` wrapper only unpacks and packs
// memref descriptors around one call, in a single basic block of several
// words per memref; for a stage of hundreds of buffers that block took LLVM's
// instruction selection and post-RA scheduler (superlinear in a block's
// size) seconds per wrapper. Marked `optnone` and `noinline`, the wrapper is
// compiled as it is, in linear time, and its callee stays a function of its
// own (docs/Compile.md, "Compile time").
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_PLAINCWRAPPERSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct PlainCWrappersPass
    : ftpipe::impl::PlainCWrappersPassBase<PlainCWrappersPass> {
  void runOnOperation() override {
    UnitAttr unit = UnitAttr::get(&getContext());
    getOperation().walk([&](LLVM::LLVMFuncOp function) {
      if (function.isExternal() ||
          !function.getSymName().starts_with("_mlir_ciface_"))
        return;
      function.setNoInlineAttr(unit);
      function.setOptimizeNoneAttr(unit);
    });
  }
};

} // namespace
