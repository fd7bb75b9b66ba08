//===- IndexBounds.cpp - Which tables a data input indexes ----------------===//
//
// A forward walk over the uses of an integer data input through the ops
// that pass its values on unchanged (reshapes, slices, integer casts, selects,
// calls and stage regions), to the tosa.gather ops whose indices they
// become.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/IndexBounds.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::ftpipe;

/// The splat integer value of `value`, if it is a constant.
static std::optional<int64_t> splatInteger(Value value) {
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APInt>().getSExtValue();
}

std::optional<IndexBound> mlir::ftpipe::findIndexBound(Value input) {
  auto type = dyn_cast<ShapedType>(input.getType());
  if (!type || !type.getElementType().isSignlessInteger() ||
      type.getElementType().getIntOrFloatBitWidth() < 8)
    return std::nullopt;
  std::optional<IndexBound> result;
  llvm::SetVector<Value> carriers;
  carriers.insert(input);
  for (size_t i = 0; i < carriers.size(); ++i) {
    for (OpOperand &use : carriers[i].getUses()) {
      Operation *user = use.getOwner();
      if (isa<tosa::ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
              tensor::ReshapeOp, tosa::TransposeOp, tosa::SliceOp,
              tensor::ExtractSliceOp, tosa::ClampOp>(user)) {
        // tosa.clamp: ftpipe-clamp-gather-indices guards every gather so;
        // the data must still fit the table (a model that means to clamp
        // its inputs, as BERT's answer positions, uses maximum/minimum).
        carriers.insert(user->getResult(0));
      } else if (auto castOp = dyn_cast<tosa::CastOp>(user)) {
        if (castOp.getType().getElementType().isSignlessInteger())
          carriers.insert(castOp.getResult());
      } else if (auto select = dyn_cast<tosa::SelectOp>(user)) {
        if (use.getOperandNumber() != 0)
          carriers.insert(select.getResult());
      } else if (auto equal = dyn_cast<tosa::EqualOp>(user)) {
        // Compared with a constant: the model treats that value apart (a
        // loss's ignore index, replaced before the gather).
        Value other = equal.getOperand(1 - use.getOperandNumber());
        if (std::optional<int64_t> ignored = splatInteger(other)) {
          if (!result)
            result = IndexBound{std::numeric_limits<int64_t>::max(), {}};
          result->ignored = ignored;
        }
      } else if (auto call = dyn_cast<func::CallOp>(user)) {
        // Into the callee (entry points call their stage's body).
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (callee && !callee.isExternal())
          carriers.insert(callee.getArgument(use.getOperandNumber()));
      } else if (user->getNumRegions() == 1 && !user->getRegion(0).empty() &&
                 user->getRegion(0).getNumArguments() ==
                     user->getNumOperands()) {
        // Into a region whose arguments are the op's operands (a stage).
        carriers.insert(user->getRegion(0).getArgument(use.getOperandNumber()));
      } else if (auto gather = dyn_cast<tosa::GatherOp>(user)) {
        if (use.getOperandNumber() != 1)
          continue;
        int64_t rows =
            cast<ShapedType>(gather.getValues().getType()).getDimSize(1);
        if (ShapedType::isDynamic(rows))
          continue;
        if (!result)
          result = IndexBound{rows, {}};
        result->bound = std::min(result->bound, rows);
      }
    }
  }
  // A comparison alone bounds nothing.
  if (result && result->bound == std::numeric_limits<int64_t>::max())
    return std::nullopt;
  return result;
}
