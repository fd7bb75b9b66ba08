//===- TrapComputedIndices.cpp - Stop on indices the model computes wrongly
//-===//
//
// ftpipe-trap-computed-indices: before every index guard of
// ftpipe-clamp-gather-indices whose indices the model computes (they do not
// come, unchanged, from the entry point's arguments or from constants), a
// check of their smallest and largest value that calls
// `ftpipe_rt_index_error` (include/FTPipe/Runtime/StageABI.h) with the
// gather's description and the value outside the table; the runtime ends
// the run with a message. Data inputs are checked by ftpipe-run against
// their `index_bound` before training, so their guards stay silent clamps.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_TRAPCOMPUTEDINDICESPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct TrapComputedIndicesPass
    : mlir::ftpipe::impl::TrapComputedIndicesPassBase<TrapComputedIndicesPass> {
  void runOnOperation() override;
};

/// Whether every value `value` may hold comes unchanged (through reshapes,
/// slices, casts, clamps, selects and calls) from an entry point's argument
/// or a constant.
class Provenance {
public:
  explicit Provenance(ModuleOp module) : module(module) {}

  bool fromArgumentsOrConstants(Value value) {
    if (!visited.insert(value).second)
      return true; // Decided where it was first met.
    if (auto argument = dyn_cast<BlockArgument>(value))
      return fromArgument(argument);
    if (matchPattern(value, m_Constant()))
      return true;
    Operation *op = value.getDefiningOp();
    if (isa<tosa::ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
            tensor::ReshapeOp, tensor::CastOp, tosa::TransposeOp, tosa::SliceOp,
            tensor::ExtractSliceOp, tosa::ClampOp>(op))
      return fromArgumentsOrConstants(op->getOperand(0));
    if (auto cast = dyn_cast<tosa::CastOp>(op))
      return cast.getInput().getType().getElementType().isSignlessInteger() &&
             fromArgumentsOrConstants(cast.getInput());
    if (auto select = dyn_cast<tosa::SelectOp>(op))
      return fromArgumentsOrConstants(select.getOnTrue()) &&
             fromArgumentsOrConstants(select.getOnFalse());
    return false;
  }

private:
  bool fromArgument(BlockArgument argument) {
    Block *block = argument.getOwner();
    auto function = dyn_cast<func::FuncOp>(block->getParentOp());
    if (!function) {
      // A region whose arguments are its op's operands (a stage).
      Operation *owner = block->getParentOp();
      if (owner->getNumOperands() != block->getNumArguments())
        return false;
      return fromArgumentsOrConstants(
          owner->getOperand(argument.getArgNumber()));
    }
    if (!block->isEntryBlock())
      return false;
    // An entry point's argument (no caller), or the operands of every call.
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(function, module);
    if (!uses)
      return false;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call ||
          !fromArgumentsOrConstants(call.getOperand(argument.getArgNumber())))
        return false;
    }
    return true;
  }

  ModuleOp module;
  llvm::DenseSet<Value> visited;
};

/// `ids` reduced over every dimension with `Reduce`, as an i64 scalar.
template <typename Reduce>
Value reduceToScalar(OpBuilder &b, Location loc, Value ids) {
  auto type = cast<RankedTensorType>(ids.getType());
  SmallVector<int64_t> shape(type.getShape());
  Value reduced = ids;
  for (int64_t axis = 0; axis < type.getRank(); ++axis) {
    shape[axis] = 1;
    reduced = b.create<Reduce>(
        loc, RankedTensorType::get(shape, type.getElementType()), reduced,
        b.getI32IntegerAttr(axis));
  }
  SmallVector<Value> zeros(type.getRank(),
                           b.create<arith::ConstantIndexOp>(loc, 0));
  Value scalar = b.create<tensor::ExtractOp>(loc, reduced, zeros);
  if (type.getElementType().getIntOrFloatBitWidth() < 64)
    scalar = b.create<arith::ExtSIOp>(loc, b.getI64Type(), scalar);
  return scalar;
}

} // namespace

void TrapComputedIndicesPass::runOnOperation() {
  ModuleOp module = getOperation();
  Provenance provenance(module);
  SmallVector<tosa::ClampOp> guards;
  module.walk([&](tosa::ClampOp clamp) {
    if (!clamp->hasAttr(mlir::ftpipe::FTPipeDialect::kIndexGuardAttrName))
      return;
    auto type = dyn_cast<RankedTensorType>(clamp.getInput().getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() == 0 ||
        !type.getElementType().isSignlessInteger())
      return;
    if (!provenance.fromArgumentsOrConstants(clamp.getInput()))
      guards.push_back(clamp);
  });
  if (guards.empty())
    return;

  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto unranked = UnrankedMemRefType::get(b.getI8Type(), Attribute());
  func::FuncOp callee =
      module.lookupSymbol<func::FuncOp>("ftpipe_rt_index_error");
  if (!callee) {
    callee = b.create<func::FuncOp>(
        module.getLoc(), "ftpipe_rt_index_error",
        b.getFunctionType({unranked, b.getI64Type(), b.getI64Type()}, {}));
    callee.setPrivate();
  }
  SymbolTable symbols(module);
  for (tosa::ClampOp clamp : guards) {
    Location loc = clamp.getLoc();
    // The gather's description, a NUL-terminated constant.
    std::string description;
    llvm::raw_string_ostream os(description);
    os << "tosa.gather at " << loc;
    SmallVector<int8_t> bytes(description.begin(), description.end());
    bytes.push_back(0);
    auto siteType = MemRefType::get({int64_t(bytes.size())}, b.getI8Type());
    b.setInsertionPointToEnd(module.getBody());
    auto global = b.create<memref::GlobalOp>(
        loc, "ftpipe_index_site", b.getStringAttr("private"), siteType,
        DenseElementsAttr::get(
            RankedTensorType::get(siteType.getShape(), b.getI8Type()),
            ArrayRef<int8_t>(bytes)),
        /*constant=*/true, /*alignment=*/nullptr);
    symbols.insert(global); // Renamed to be unique.

    b.setInsertionPoint(clamp);
    Value ids = clamp.getInput();
    int64_t rows = clamp.getMaxInt() + 1;
    Value smallest = reduceToScalar<tosa::ReduceMinOp>(b, loc, ids);
    Value largest = reduceToScalar<tosa::ReduceMaxOp>(b, loc, ids);
    Value zero = b.create<arith::ConstantIntOp>(loc, 0, 64);
    Value rowCount = b.create<arith::ConstantIntOp>(loc, rows, 64);
    Value below =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, smallest, zero);
    Value above = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge,
                                          largest, rowCount);
    Value outside = b.create<arith::OrIOp>(loc, below, above);
    Value value = b.create<arith::SelectOp>(loc, below, smallest, largest);
    auto check = b.create<scf::IfOp>(loc, outside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(check.thenBlock());
    Value text =
        b.create<memref::GetGlobalOp>(loc, siteType, global.getSymName());
    Value site = b.create<memref::CastOp>(loc, unranked, text);
    b.create<func::CallOp>(loc, callee, ValueRange{site, value, rowCount});
  }
}
