//===- LoopLocality.cpp - Loop order and blocking of linalg.generic -------===//
//
// ftpipe-loop-locality: sorts the iteration dimensions of every
// linalg.generic by the strides they take through the op's operands,
// largest outermost, and tiles the transposes among them, so that the loop
// nests that linalg-to-loops makes read and write contiguous memory in their
// innermost loops (Passes.td has the rules).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_LOOPLOCALITYPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

// Strides beyond a 64-byte cache line of f32 miss the cache on every access
// alike.
constexpr int64_t kStrideCap = 16;
// Operands smaller than this stay in the L1 cache whatever the order.
constexpr int64_t kBlockFrom = 4096;
constexpr int64_t kTile = 32;

/// The element strides of a shaped value's dimensions (row-major for
/// tensors, the layout's for buffers); nothing when they are not static.
std::optional<SmallVector<int64_t>> elementStrides(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(getStridesAndOffset(memref, strides, offset)) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      return std::nullopt;
    return strides;
  }
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides(tensor.getRank());
  int64_t stride = 1;
  for (int64_t d = tensor.getRank() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= tensor.getDimSize(d);
  }
  return strides;
}

/// The shaped operands of `op` with their strides; nothing when one has no
/// static strides.
std::optional<SmallVector<std::pair<OpOperand *, SmallVector<int64_t>>>>
stridedOperands(linalg::GenericOp op) {
  SmallVector<std::pair<OpOperand *, SmallVector<int64_t>>> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<ShapedType>(operand.get().getType()))
      continue; // A scalar operand is the same in every iteration.
    std::optional<SmallVector<int64_t>> strides =
        elementStrides(operand.get().getType());
    if (!strides)
      return std::nullopt;
    operands.push_back({&operand, std::move(*strides)});
  }
  return operands;
}

/// The loop order of `op` (old dimensions, outermost first).
SmallVector<unsigned>
loopOrder(linalg::GenericOp op,
          ArrayRef<std::pair<OpOperand *, SmallVector<int64_t>>> operands) {
  SmallVector<int64_t> cost(op.getNumLoops(), 0);
  for (const auto &[operand, strides] : operands) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    for (auto [result, stride] : llvm::zip(map.getResults(), strides))
      result.walk([&, stride = stride](AffineExpr expr) {
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          cost[dim.getPosition()] += std::min(stride, kStrideCap);
      });
  }
  SmallVector<unsigned> order(op.getNumLoops());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order,
                    [&](unsigned a, unsigned b) { return cost[a] > cost[b]; });
  return order;
}

/// The loop along which a large operand is contiguous while the innermost
/// loop walks it with a stride (one side of a transpose), if any.
std::optional<unsigned>
crossingLoop(linalg::GenericOp op,
             ArrayRef<std::pair<OpOperand *, SmallVector<int64_t>>> operands) {
  unsigned inner = op.getNumLoops() - 1;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (op.getNumLoops() < 2 || ShapedType::isDynamic(extents[inner]) ||
      extents[inner] <= kTile)
    return std::nullopt;
  for (const auto &[operand, strides] : operands) {
    auto type = cast<ShapedType>(operand->get().getType());
    if (!type.hasStaticShape() || type.getNumElements() < kBlockFrom)
      continue;
    AffineMap map = op.getMatchingIndexingMap(operand);
    std::optional<unsigned> contiguous;
    bool innerStrided = false;
    for (auto [position, result] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(result);
      if (!dim || type.getDimSize(position) == 1)
        continue;
      if (strides[position] == 1)
        contiguous = dim.getPosition();
      else if (dim.getPosition() == inner)
        innerStrided = true;
    }
    if (contiguous && *contiguous != inner && innerStrided &&
        !ShapedType::isDynamic(extents[*contiguous]) &&
        extents[*contiguous] > kTile)
      return contiguous;
  }
  return std::nullopt;
}

struct LoopLocalityPass : ftpipe::impl::LoopLocalityPassBase<LoopLocalityPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      auto operands = stridedOperands(op);
      if (!operands)
        continue;
      SmallVector<unsigned> order = loopOrder(op, *operands);
      rewriter.setInsertionPoint(op);
      if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
        // Fails only for an invalid permutation, which `order` is not.
        (void)linalg::interchangeGenericOp(rewriter, op, order);
      std::optional<unsigned> crossing = crossingLoop(op, *operands);
      if (!crossing || !op.hasPureBufferSemantics())
        continue;
      SmallVector<int64_t> tiles(op.getNumLoops(), 0);
      tiles[*crossing] = tiles.back() = kTile;
      FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(
          rewriter, op, linalg::LinalgTilingOptions().setTileSizes(tiles));
      if (failed(tiled)) {
        op.emitError("ftpipe-loop-locality: cannot tile this loop nest");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
