//===- LinalgToBLAS.cpp - Contractions on buffers to BLAS calls -----------===//
//
// ftpipe-linalg-to-blas: every contraction on memrefs (`out += a * b`, f32 or
// f64, one M, N and K loop, up to three batch loops) becomes one call of the
// shape-independent gemm entry of lib/Runtime/BLASKernels.cpp. The role codes
// it passes are documented in include/FTPipe/Runtime/BLASKernels.h.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"
#include "FTPipe/Runtime/BLASKernels.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_LINALGTOBLASPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

std::string mlir::ftpipe::getBLASGemmName(Type elementType,
                                          GemmLibrary library) {
  std::string prefix = library == GemmLibrary::CuBLAS ? "ftpipe_cublas_gemm_"
                                                      : "ftpipe_blas_gemm_";
  return prefix + (elementType.isF64() ? "f64" : "f32");
}

namespace {

/// True if `block` is exactly `yield(add(out, mul(a, b)))` on floats.
bool isMulAddBody(Block &block) {
  if (block.getNumArguments() != 3 || !llvm::hasNItems(block, 3))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(block.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(block.begin()));
  auto yield = dyn_cast<linalg::YieldOp>(block.back());
  if (!mul || !add || !yield || yield.getNumOperands() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  auto args = block.getArguments();
  bool mulOfInputs = (mul.getLhs() == args[0] && mul.getRhs() == args[1]) ||
                     (mul.getLhs() == args[1] && mul.getRhs() == args[0]);
  bool addOfOutput = (add.getLhs() == args[2] && add.getRhs() == mul) ||
                     (add.getRhs() == args[2] && add.getLhs() == mul);
  return mulOfInputs && addOfOutput;
}

/// The role code of one operand (BLASKernels.h): for each role, the position
/// of its loop among the operand's indexing map results, plus one.
std::optional<int64_t> roleCode(AffineMap map, ArrayRef<int64_t> roleLoops) {
  int64_t code = 0;
  for (auto [role, loop] : llvm::enumerate(roleLoops)) {
    if (loop < 0)
      continue;
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
    if (!position)
      continue;
    if (*position + 1 >= (1 << FTPIPE_BLAS_ROLE_BITS))
      return std::nullopt;
    code |= int64_t(*position + 1) << (FTPIPE_BLAS_ROLE_BITS * role);
  }
  return code;
}

/// If the op right before `op` that touches memory is a zero fill of
/// `output`, returns it.
linalg::FillOp findZeroFillBefore(Operation *op, Value output) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().front() != output)
        return nullptr;
      Attribute value;
      if (!matchPattern(fill.getInputs().front(), m_Constant(&value)))
        return nullptr;
      auto floatValue = dyn_cast<FloatAttr>(value);
      return floatValue && floatValue.getValue().isZero() ? fill : nullptr;
    }
    // Ops without memory effects (constants, views, casts) are stepped over.
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}

struct ContractionToBLAS : OpInterfaceRewritePattern<linalg::LinalgOp> {
  ContractionToBLAS(MLIRContext *context, ftpipe::GemmLibrary library)
      : OpInterfaceRewritePattern(context), library(library) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || !isMulAddBody(*op.getBlock()))
      return rewriter.notifyMatchFailure(op, "not out += a * b on buffers");
    Type elementType = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
    if (!elementType.isF32() && !elementType.isF64())
      return rewriter.notifyMatchFailure(op, "not f32 or f64");
    for (OpOperand &operand : op->getOpOperands())
      if (getElementTypeOrSelf(operand.get()) != elementType)
        return rewriter.notifyMatchFailure(op, "mixed element types");
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
        dims->k.size() != 1 || dims->batch.size() > FTPIPE_BLAS_MAX_BATCH)
      return rewriter.notifyMatchFailure(op, "not one M, N, K loop");
    // Every loop must be one of them: no extra parallel or reduction loop.
    if (op.getNumLoops() != 3 + dims->batch.size())
      return rewriter.notifyMatchFailure(op, "extra loops");
    for (AffineMap map : op.getIndexingMapsArray())
      if (!map.isProjectedPermutation())
        return rewriter.notifyMatchFailure(op, "non-permutation map");

    auto loopsFor = [&](int64_t rows, int64_t cols) {
      SmallVector<int64_t> loops = {rows, cols};
      for (unsigned batch : dims->batch)
        loops.push_back(batch);
      return loops;
    };
    int64_t m = dims->m[0], n = dims->n[0], k = dims->k[0];
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    std::optional<int64_t> codeA = roleCode(maps[0], loopsFor(m, k));
    std::optional<int64_t> codeB = roleCode(maps[1], loopsFor(k, n));
    std::optional<int64_t> codeC = roleCode(maps[2], loopsFor(m, n));
    if (!codeA || !codeB || !codeC)
      return rewriter.notifyMatchFailure(op, "rank too large");

    Location loc = op.getLoc();
    Value output = op.getDpsInitOperand(0)->get();
    bool accumulate = true;
    if (linalg::FillOp fill = findZeroFillBefore(op, output)) {
      rewriter.eraseOp(fill);
      accumulate = false;
    }
    auto unranked = UnrankedMemRefType::get(elementType, /*memorySpace=*/{});
    SmallVector<Value> args;
    for (OpOperand &operand : op->getOpOperands())
      args.push_back(
          rewriter.create<memref::CastOp>(loc, unranked, operand.get()));
    for (int64_t value : {*codeA, *codeB, *codeC, int64_t(dims->batch.size()),
                          int64_t(accumulate)})
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, value, 64));
    rewriter.replaceOpWithNewOp<func::CallOp>(
        op, ftpipe::getBLASGemmName(elementType, library), TypeRange(), args);
    return success();
  }

private:
  ftpipe::GemmLibrary library;
};

struct LinalgToBLASPass : ftpipe::impl::LinalgToBLASPassBase<LinalgToBLASPass> {
  using Base::Base;
  void runOnOperation() override {
    ftpipe::declareBLASGemms(getOperation(), library);
    RewritePatternSet patterns(&getContext());
    ftpipe::populateLinalgToBLASPatterns(patterns, library);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::ftpipe::declareBLASGemms(ModuleOp module, GemmLibrary library) {
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  for (Type elementType :
       {Type(builder.getF32Type()), Type(builder.getF64Type())}) {
    std::string name = getBLASGemmName(elementType, library);
    if (module.lookupSymbol(name))
      continue;
    Type unranked = UnrankedMemRefType::get(elementType, {});
    Type i64 = builder.getI64Type();
    auto type = builder.getFunctionType(
        {unranked, unranked, unranked, i64, i64, i64, i64, i64}, {});
    auto decl = builder.create<func::FuncOp>(module.getLoc(), name, type);
    decl.setPrivate();
  }
}

void mlir::ftpipe::populateLinalgToBLASPatterns(RewritePatternSet &patterns,
                                                GemmLibrary library) {
  patterns.add<ContractionToBLAS>(patterns.getContext(), library);
}
